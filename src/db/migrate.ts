/** Applies the numbered SQL files in migrations/ in order, each in its own transaction, recording
 * them in schema_migrations. Safe to run twice and from two processes at once (advisory lock).
 * An applied file that has since changed is refused: migrations are append-only. */
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Db } from './pool';

export const MIGRATIONS_DIR = path.resolve(__dirname, '../../migrations');
const FILE_PATTERN = /^(\d{3})_[a-z0-9_]+\.sql$/;
const LOCK_KEY = 7_233_001;

export interface Migration { version: number; name: string; sql: string; checksum: string }

export async function readMigrations(dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const files = (await fs.readdir(dir)).filter((f) => f.endsWith('.sql')).sort();
  const migrations: Migration[] = [];
  for (const name of files) {
    const match = FILE_PATTERN.exec(name);
    if (!match) throw new Error(`migration file name must look like 001_name.sql: ${name}`);
    const sql = await fs.readFile(path.join(dir, name), 'utf8');
    migrations.push({ version: Number(match[1]), name, sql, checksum: createHash('sha256').update(sql).digest('hex') });
  }
  const versions = new Set(migrations.map((m) => m.version));
  if (versions.size !== migrations.length) throw new Error('two migration files share a number');
  return migrations;
}

/** Returns the names of the files applied by this call. */
export async function migrate(db: Db, dir = MIGRATIONS_DIR): Promise<string[]> {
  const migrations = await readMigrations(dir);
  const client = await db.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [LOCK_KEY]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const applied = new Map<number, { name: string; checksum: string }>();
    for (const row of (await client.query('SELECT version, name, checksum FROM schema_migrations')).rows) applied.set(row.version, row);
    const done: string[] = [];
    for (const m of migrations) {
      const previous = applied.get(m.version);
      if (previous) {
        if (previous.checksum !== m.checksum) throw new Error(`migration ${m.name} changed after it was applied; add a new file instead`);
        continue;
      }
      await client.query('BEGIN');
      try {
        await client.query(m.sql);
        await client.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [m.version, m.name, m.checksum]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${m.name} failed: ${(err as Error).message}`);
      }
      done.push(m.name);
    }
    return done;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [LOCK_KEY]).catch(() => undefined);
    client.release();
  }
}
