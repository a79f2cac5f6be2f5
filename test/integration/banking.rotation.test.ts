/** Rotating the bank details key (issue 20 item 2) against real PostgreSQL: rows under the old key
 * still read after the active key changes; the rotation re-encrypts them under the active key, in
 * batches, leaving the details and updated_at alone, audited per row; a row that does not decrypt is
 * reported and left; `npm run bank-details:rotate` says what it did and which key is free to drop. */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { createKeyring } from '../../src/banking/keyring';
import { readBankDetailsForFile, setBankDetails } from '../../src/banking/repository';
import { rotateBankDetailsKeys, rowsByKey, type RotationProgress } from '../../src/banking/rotation';
import type { Db } from '../../src/db/pool';
import { createVendor } from '../../src/moneyin/referenceData';
import { isolatedPool } from '../support/db';

const k2026a = { id: 'k2026a', key: randomBytes(32) };
const k2026b = { id: 'k2026b', key: randomBytes(32) };
const envKeys = (...keys: Array<typeof k2026a>) => keys.map((k) => `${k.id}:${k.key.toString('base64')}`).join(',');
const ACCOUNTS: Record<string, string> = { ven_a: '111122223333', ven_b: '444455556666777', ven_c: '888899990000', ven_d: '123456789' };

/** The rotation CLI as an operator runs it: its own process, configured by its environment only. */
function rotateCli(env: Record<string, string>, args: string[] = []): Promise<{ code: number | null; output: string }> {
  const root = path.resolve(__dirname, '../..');
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'src/cli/bankDetailsRotate.ts'), ...args], {
    cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', LOG_LEVEL: 'warn', ...env },
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => { output += c.toString(); });
  child.stderr.on('data', (c: Buffer) => { output += c.toString(); });
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, output })));
}

describe('bank details key rotation', () => {
  let db: Db;
  let url: string;
  const oldRing = createKeyring([k2026a], 'k2026a');
  const bothRing = createKeyring([k2026a, k2026b], 'k2026b');

  beforeAll(async () => {
    ({ db, url } = await isolatedPool());
    for (const [vendorId, accountNumber] of Object.entries(ACCOUNTS)) {
      await createVendor(db, { id: vendorId, name: vendorId, linkedAccountId: null });
      await setBankDetails(db, oldRing, { vendorId, details: { accountNumber, ifsc: 'HDFC0001234', beneficiaryName: `Vendor ${vendorId.slice(4)}` }, actor: 'key:admin' });
    }
  });
  afterAll(async () => { await db?.end(); });

  const accountsRead = async (ring = bothRing) => Object.fromEntries([...(await readBankDetailsForFile(db, ring, Object.keys(ACCOUNTS))).entries()].map(([v, d]) => [v, d.accountNumber]));

  test('when the active key changes, then every row under the old key still reads with the new keyring', async () => {
    expect(await accountsRead()).toEqual(ACCOUNTS);
    expect(await rowsByKey(db)).toEqual({ k2026a: 4 });
  });

  test('when the rotation runs, then every row is re-encrypted under the active key in batches, the details and updated_at unchanged, each audited', async () => {
    const before = (await db.query('SELECT vendor_id, updated_at, updated_by, account_ciphertext FROM vendor_bank_details ORDER BY vendor_id')).rows;
    const progress: RotationProgress[] = [];
    const result = await rotateBankDetailsKeys(db, bothRing, { actor: 'cli:ops', batchSize: 3, onProgress: (p) => progress.push(p) });
    expect(result).toEqual({ activeKeyId: 'k2026b', before: { k2026a: 4 }, rotated: 4, failed: [] });
    expect(progress).toEqual([{ done: 3, total: 4 }, { done: 4, total: 4 }]);
    expect(await rowsByKey(db)).toEqual({ k2026b: 4 });
    // The old key can go: the new one alone reads every row.
    expect(await accountsRead(createKeyring([k2026b], 'k2026b'))).toEqual(ACCOUNTS);

    const after = (await db.query('SELECT vendor_id, updated_at, updated_by, account_ciphertext, key_rotated_at FROM vendor_bank_details ORDER BY vendor_id')).rows;
    expect(after.map((r) => [r.vendor_id, r.updated_at, r.updated_by])).toEqual(before.map((r) => [r.vendor_id, r.updated_at, r.updated_by]));
    expect(after.every((r, i) => !r.account_ciphertext.equals(before[i].account_ciphertext) && r.key_rotated_at instanceof Date)).toBe(true);
    const audit = (await db.query(`SELECT vendor_id, action, actor, key_id, account_masked FROM vendor_bank_detail_changes WHERE action = 'rotate_key' ORDER BY vendor_id`)).rows;
    expect(audit).toEqual(Object.keys(ACCOUNTS).map((v) => ({ vendor_id: v, action: 'rotate_key', actor: 'cli:ops', key_id: 'k2026b', account_masked: `XXXXXX${ACCOUNTS[v]!.slice(-4)}` })));

    expect(await rotateBankDetailsKeys(db, bothRing, { actor: 'cli:ops' })).toEqual({ activeKeyId: 'k2026b', before: {}, rotated: 0, failed: [] });
  });

  test('when a row under the old key does not decrypt, then it is reported and left as it is, and the others rotate', async () => {
    const backRing = createKeyring([k2026a, k2026b], 'k2026a');
    await db.query(`UPDATE vendor_bank_details SET account_auth_tag = decode(repeat('00', 16), 'hex') WHERE vendor_id = 'ven_c'`);
    const result = await rotateBankDetailsKeys(db, backRing, { actor: 'cli:ops' });
    expect(result.rotated).toBe(3);
    expect(result.failed).toEqual([{ vendorId: 'ven_c', keyId: 'k2026b', reason: expect.stringMatching(/vendor ven_c \(key k2026b\) do not authenticate/) }]);
    expect(await rowsByKey(db)).toEqual({ k2026a: 3, k2026b: 1 });
  });

  test('when an operator runs npm run bank-details:rotate, then it prints the keys, progress and which key no row needs; in production it refuses the development key', async () => {
    await db.query(`DELETE FROM vendor_bank_details WHERE vendor_id = 'ven_c'`); // the tampered row, re-entered below
    await setBankDetails(db, createKeyring([k2026a], 'k2026a'), { vendorId: 'ven_c', details: { accountNumber: ACCOUNTS.ven_c!, ifsc: 'HDFC0001234', beneficiaryName: 'Vendor c' }, actor: 'key:admin' });
    const run = await rotateCli({ DATABASE_URL: url, BANK_DETAILS_KEYS: envKeys(k2026a, k2026b), BANK_DETAILS_ACTIVE_KEY_ID: 'k2026b' }, ['--batch-size', '2']);
    expect([run.code, run.output]).toEqual([0, expect.any(String)]);
    expect(run.output.split('\n')).toEqual(expect.arrayContaining([
      'bank details: active key k2026b; keys held: k2026b, k2026a',
      'rows by key before: k2026a: 4',
      '  2/4 row(s) done',
      '  4/4 row(s) done',
      'done: 4 row(s) re-encrypted under k2026b',
      'rows by key after: k2026b: 4',
      'no row needs k2026a any more: it can leave BANK_DETAILS_KEYS once every process runs with k2026b active',
    ]));
    expect(await accountsRead(createKeyring([k2026b], 'k2026b'))).toEqual(ACCOUNTS);

    const refused = await rotateCli({ DATABASE_URL: url, NODE_ENV: 'production' });
    expect(refused.code).toBe(1);
    expect(refused.output).toContain('BANK_DETAILS_KEYS: not set');
    const badUsage = await rotateCli({ DATABASE_URL: url }, ['--batch-size', 'lots']);
    expect([badUsage.code, badUsage.output]).toEqual([2, expect.stringContaining('--batch-size lots')]);
  });
});
