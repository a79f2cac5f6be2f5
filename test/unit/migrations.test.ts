import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readMigrations } from '../../src/db/migrate';

describe('migration files', () => {
  test('when the project migrations are read, then they are numbered uniquely and in order', async () => {
    const migrations = await readMigrations();
    const versions = migrations.map((m) => m.version);
    expect(versions).toEqual([...versions].sort((a, b) => a - b));
    expect(new Set(versions).size).toBe(versions.length);
    expect(versions[0]).toBe(1);
  });

  test('when a file is misnamed, then reading refuses it', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mig-'));
    fs.writeFileSync(path.join(dir, 'add-things.sql'), 'SELECT 1');
    await expect(readMigrations(dir)).rejects.toThrow(/001_name.sql/);
  });

  test('when two files share a number, then reading refuses them', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mig-'));
    fs.writeFileSync(path.join(dir, '001_a.sql'), 'SELECT 1');
    fs.writeFileSync(path.join(dir, '001_b.sql'), 'SELECT 2');
    await expect(readMigrations(dir)).rejects.toThrow(/share a number/);
  });
});
