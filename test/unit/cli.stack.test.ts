/** Where the payouts CLI finds its API and key: flags, then the environment, then the stack file
 * that npm run dev writes, with the key of the role the command needs. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readStackFile, resolveConnection, stackFilePath, writeStackFile, type StackFile } from '../../src/cli/payouts/stack';

const info = {
  apiUrl: 'http://127.0.0.1:3000',
  temporalUiUrl: 'http://127.0.0.1:8233',
  keys: { ordering: 'pk_ordering', ops: 'pk_ops', admin: 'pk_admin', finance: 'pk_finance' },
};
const stack: StackFile = { file: '/repo/.data/stack.json', info };
const none: StackFile = { file: '/repo/.data/stack.json', info: null };

describe('payouts CLI: finding the API and the key', () => {
  test('when only the stack file is there, then its API is used with the key of the role the command needs', () => {
    expect(resolveConnection({}, {}, stack, 'ops')).toEqual({ ok: true, connection: { apiUrl: 'http://127.0.0.1:3000', key: 'pk_ops', temporalUiUrl: 'http://127.0.0.1:8233', source: 'stack' } });
    expect(resolveConnection({}, {}, stack, 'finance')).toMatchObject({ ok: true, connection: { key: 'pk_finance' } });
  });

  test('when the environment names the API and key, then it wins over the stack file, and flags win over both', () => {
    const env = { PAYOUTS_API_URL: 'https://payouts.internal/', PAYOUTS_API_KEY: 'pk_env' };
    expect(resolveConnection({}, env, stack, 'ops')).toEqual({ ok: true, connection: { apiUrl: 'https://payouts.internal', key: 'pk_env', temporalUiUrl: null, source: 'env' } });
    expect(resolveConnection({ apiUrl: 'http://10.0.0.5:3000', key: 'pk_flag' }, env, stack, 'ops')).toMatchObject({ ok: true, connection: { apiUrl: 'http://10.0.0.5:3000', key: 'pk_flag', source: 'flag' } });
    // A key from the environment with the stack's own URL.
    expect(resolveConnection({}, { PAYOUTS_API_KEY: 'pk_env' }, stack, 'finance')).toMatchObject({ ok: true, connection: { apiUrl: info.apiUrl, key: 'pk_env', source: 'stack' } });
  });

  test('when the URL points somewhere else, then the stack file\'s dev key is not sent there', () => {
    const resolved = resolveConnection({ apiUrl: 'https://payouts.example.com' }, {}, stack, 'ops');
    expect(resolved).toEqual({ ok: false, message: expect.stringContaining('no API key for https://payouts.example.com') });
    // Same origin, written differently: still the stack's API.
    expect(resolveConnection({ apiUrl: 'http://127.0.0.1:3000/' }, {}, stack, 'ops')).toMatchObject({ ok: true, connection: { key: 'pk_ops' } });
  });

  test('when nothing names an API, then the message says the three ways to name one', () => {
    const resolved = resolveConnection({}, {}, none, 'ops');
    expect(resolved.ok).toBe(false);
    expect(!resolved.ok && resolved.message).toMatch(/--api-url.*PAYOUTS_API_URL.*npm run dev/);
    expect(resolveConnection({ apiUrl: 'ftp://x' }, {}, none, 'ops')).toMatchObject({ ok: false, message: expect.stringContaining('not an http(s) URL') });
  });

  test('when npm run dev writes the stack file, then it is private, whole, and read back as written', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'payouts-stack-'));
    try {
      const file = await writeStackFile(root, info);
      expect(file).toBe(stackFilePath(root));
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      expect(fs.readdirSync(path.dirname(file))).toEqual(['stack.json']);
      expect(readStackFile({ PAYOUTS_STACK_FILE: file })).toEqual({ file, info });
      fs.writeFileSync(file, '{"apiUrl": 3}');
      expect(readStackFile({ PAYOUTS_STACK_FILE: file })).toMatchObject({ info: null, problem: expect.stringContaining('not a stack file') });
      expect(readStackFile({ PAYOUTS_STACK_FILE: path.join(root, 'missing.json') })).toEqual({ file: path.join(root, 'missing.json'), info: null });
      await expect(writeStackFile(root, { ...info, apiUrl: 'not a url' })).rejects.toThrow();
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
