/** Issue 21, item 11: what `npm run dev` keeps on disk is its owner's alone. `.data/` is 0700 (an
 * existing looser one is tightened; when root runs the embedded PostgreSQL as `postgres`, that
 * user's group may only traverse it: 0710), the Temporal SQLite file and the sandbox's state file
 * are 0600, and dev-credentials.json is rewritten 0600 by temporary file and rename every time. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureDevCredentials } from '../../src/cli/devCredentials';
import { loadConfig } from '../../src/config/config';
import { createPool } from '../../src/db/pool';
import { startServices } from '../../src/devstack/services';
import { sandboxOptionsFrom, startSandbox } from '../../src/sandbox';
import { createIsolatedDatabase, testServices } from '../support/db';

const ROOT = path.resolve(__dirname, '../..');
const modeOf = (file: string): number => fs.statSync(file).mode & 0o777;

describe('files on disk of the dev stack', () => {
  const roots: string[] = [];
  const newDataDir = (): string => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'file-modes-'));
    roots.push(root);
    return path.join(root, '.data');
  };
  afterAll(() => {
    for (const root of roots) fs.rmSync(root, { recursive: true, force: true });
  });

  test('when the stack starts on an existing world-readable .data, then .data is tightened and temporal.sqlite is 0600, also after a restart on a 0644 file', async () => {
    const dataDir = newDataDir();
    fs.mkdirSync(dataDir, { mode: 0o755 });
    fs.chmodSync(dataDir, 0o755);
    // The shared PostgreSQL server (an embedded one cannot start inside jest: its binaries package is an
    // ES module). The integration global setup starts one under .data/test-runs: with .data private,
    // that it runs at all shows its user may traverse to its data directory.
    const start = () => startServices({ projectRoot: ROOT, stateDir: dataDir, persistent: true, temporalPort: 0, temporalUiPort: null, postgresPort: 0, externalDatabaseUrl: testServices().adminDatabaseUrl });
    const first = await start();
    try {
      expect(modeOf(dataDir)).toBe(0o700);
      const sqlite = fs.readdirSync(dataDir).filter((f) => f.startsWith('temporal.sqlite'));
      expect(sqlite).toContain('temporal.sqlite');
      for (const f of sqlite) expect({ f, mode: modeOf(path.join(dataDir, f)) }).toEqual({ f, mode: 0o600 });
    } finally {
      await first.stop();
    }
    fs.chmodSync(path.join(dataDir, 'temporal.sqlite'), 0o644);
    const second = await start();
    try {
      expect(modeOf(path.join(dataDir, 'temporal.sqlite'))).toBe(0o600);
    } finally {
      await second.stop();
    }
  }, 240_000);

  test('when dev-credentials.json exists world-readable, then every write replaces it (new file, by rename) with mode 0600 and leaves no temporary file', async () => {
    const dataDir = newDataDir();
    fs.mkdirSync(dataDir, { mode: 0o700 });
    const file = path.join(dataDir, 'dev-credentials.json');
    fs.writeFileSync(file, '{}\n', { mode: 0o644 });
    fs.chmodSync(file, 0o644);
    const db = createPool(await createIsolatedDatabase(), 2);
    try {
      for (let i = 0; i < 2; i++) {
        const before = fs.statSync(file).ino;
        const { keys } = await ensureDevCredentials(db, file);
        expect(modeOf(file)).toBe(0o600);
        expect(fs.statSync(file).ino).not.toBe(before);
        expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual(keys);
        expect(fs.readdirSync(dataDir)).toEqual(['dev-credentials.json']);
        fs.chmodSync(file, 0o644);
      }
    } finally {
      await db.end();
    }
  });

  test('when the sandbox keeps its state in a new .data, then the directory is 0700 and sandbox-state.json 0600, also after a restart on a 0644 file', async () => {
    const dataDir = newDataDir();
    const stateFile = path.join(dataDir, 'sandbox-state.json');
    const start = () => startSandbox({ ...sandboxOptionsFrom(loadConfig({})), port: 0, webhookUrl: null, stateFile });
    const first = await start();
    await first.control.createLinkedAccount();
    await first.close();
    expect(modeOf(dataDir)).toBe(0o700);
    expect(modeOf(stateFile)).toBe(0o600);
    fs.chmodSync(stateFile, 0o644);
    fs.chmodSync(dataDir, 0o755);
    const second = await start();
    await second.control.createLinkedAccount();
    await second.close();
    expect(modeOf(dataDir)).toBe(0o700);
    expect(modeOf(stateFile)).toBe(0o600);
  });
});
