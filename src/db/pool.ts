/** PostgreSQL access. int8 (bigint) columns hold paise; node-postgres returns them as strings, so we
 * parse them here once, refusing any value that is not a safe integer. */
import fs from 'node:fs';
import { Pool, types, type PoolClient, type PoolConfig } from 'pg';
import type { Config } from '../config/config';
import { logger } from '../logger';

export function parseSafeInteger(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new RangeError(`int8 value ${text} is not a safe integer`);
  return value;
}

types.setTypeParser(types.builtins.INT8, parseSafeInteger);

export type Db = Pool;
export type Tx = PoolClient;

export interface PoolOptions {
  /** Connections in the pool (default 10). */
  max?: number;
  /** Connections kept open while idle (default 0: every idle connection closes after 10 s). */
  min?: number;
  /** How long a query waits for a free connection, or for a new one to be established, before it
   * fails (default 5000; 0 waits for ever). */
  connectTimeoutMs?: number;
  sslmode?: Config['DATABASE_SSLMODE'];
  /** PEM CA for `verify-full`; without it Node's built-in root CAs are used. */
  sslCaFile?: string;
}

export const DEFAULT_POOL_MAX = 10;
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;

/** Query parameters with which node-postgres takes TLS from the URL itself. */
const URL_SSL_PARAMS = ['ssl', 'sslmode', 'sslrootcert', 'sslcert', 'sslkey', 'sslnegotiation'];

export function urlCarriesSsl(connectionString: string): boolean {
  const query = connectionString.indexOf('?');
  if (query < 0) return false;
  const params = new URLSearchParams(connectionString.slice(query + 1));
  return URL_SSL_PARAMS.some((name) => params.has(name));
}

export function poolOptionsFrom(config: Pick<Config, 'DATABASE_POOL_MAX' | 'DATABASE_POOL_MIN' | 'DATABASE_CONNECT_TIMEOUT_MS' | 'DATABASE_SSLMODE' | 'DATABASE_SSL_CA_FILE'>): PoolOptions {
  return {
    max: config.DATABASE_POOL_MAX,
    min: Math.min(config.DATABASE_POOL_MIN, config.DATABASE_POOL_MAX),
    connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
    sslmode: config.DATABASE_SSLMODE,
    ...(config.DATABASE_SSL_CA_FILE === undefined ? {} : { sslCaFile: config.DATABASE_SSL_CA_FILE }),
  };
}

/** The node-postgres pool config for a URL and our options.
 *
 * TLS rule: when the URL carries any of `ssl`, `sslmode`, `sslrootcert`, `sslcert`, `sslkey` or
 * `sslnegotiation`, the URL decides TLS alone and `sslmode`/`sslCaFile` here are ignored. (pg 8
 * does this itself: it parses the URL with pg-connection-string and `Object.assign`s the result
 * over the config, so a URL-derived `ssl` replaces ours whole; we leave `ssl` unset then so the
 * config says what actually happens.) Mind pg 8's URL semantics: `sslrootcert=/ca.pem` is read as
 * the CA and the certificate is verified; `sslmode=require`/`prefer`/`verify-ca` mean verify-full
 * (with a SECURITY WARNING), unlike libpq; encrypted-but-unverified is `sslmode=no-verify` (or
 * `uselibpqcompat=true&sslmode=require`); `sslmode=disable` turns TLS off.
 * Otherwise: `require` → encrypted, any certificate (libpq's require); `verify-full` → the chain
 * is checked against `sslCaFile` (or Node's root CAs) and the host name against the certificate;
 * `disable` or nothing → `ssl` unset (pg then falls back to PGSSLMODE, normally off). */
export function poolConfig(connectionString: string, opts: number | PoolOptions = {}): PoolConfig {
  const o: PoolOptions = typeof opts === 'number' ? { max: opts } : opts;
  const config: PoolConfig = {
    connectionString,
    max: o.max ?? DEFAULT_POOL_MAX,
    ...(o.min ? { min: Math.min(o.min, o.max ?? DEFAULT_POOL_MAX) } : {}),
    connectionTimeoutMillis: o.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    application_name: 'payouts',
  };
  if (urlCarriesSsl(connectionString)) return config;
  if (o.sslmode === 'require') config.ssl = { rejectUnauthorized: false };
  if (o.sslmode === 'verify-full') {
    config.ssl = { rejectUnauthorized: true };
    if (o.sslCaFile !== undefined) config.ssl.ca = readCa(o.sslCaFile);
  }
  return config;
}

function readCa(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`DATABASE_SSL_CA_FILE: cannot read ${file}: ${(err as Error).message}`, { cause: err });
  }
}

/** `opts` is the pool size (as before) or {@link PoolOptions}; see {@link poolConfig}. */
export function createPool(connectionString: string, opts?: number | PoolOptions): Db {
  const config = poolConfig(connectionString, opts);
  if (typeof opts === 'object' && opts.sslmode !== undefined && opts.sslmode !== 'disable' && urlCarriesSsl(connectionString)) {
    logger.warn({ sslmode: opts.sslmode }, 'DATABASE_URL carries its own TLS parameters; DATABASE_SSLMODE and DATABASE_SSL_CA_FILE are ignored');
  }
  const pool = new Pool(config);
  // A connection dropped by the server (restart, immediate shutdown) must not crash the process.
  // The pool listens on idle clients only; a checked-out client (a transaction waiting between
  // statements) emits 'error' with no listener, which Node makes fatal: every client gets its own.
  // Its query in flight rejects, the transaction fails, and the pool discards the client.
  // One line each: the error node-postgres hands over carries the whole client (err.client).
  pool.on('error', (err) => logger.warn(connectionLoss(err), 'idle PostgreSQL connection lost'));
  pool.on('connect', (client) => client.on('error', (err) => logger.warn(connectionLoss(err), 'PostgreSQL connection lost while in use')));
  endsWhenClosed(pool);
  return pool;
}

/** node-postgres's end() resolves once every client has been asked to end, not once their sockets
 * have closed: a server stopped right after (npm run dev's Ctrl-C) still finds them and ends them
 * with 57P01. Here end() waits for each client's own 'end' as well. */
function endsWhenClosed(pool: Pool): void {
  const open = new Set<PoolClient>();
  pool.on('connect', (client) => {
    open.add(client);
    client.once('end', () => open.delete(client));
  });
  const endPool = pool.end.bind(pool);
  pool.end = (async () => {
    await endPool();
    await Promise.all([...open].map((client) => new Promise<void>((resolve) => {
      client.once('end', resolve);
      if (!open.has(client)) resolve();
    })));
  }) as Pool['end'];
}

/** A lost connection as log fields: the server's SQLSTATE (57P01 for a shutdown) and the message,
 * never the error object itself (node-postgres attaches the client, hundreds of fields). */
export function connectionLoss(err: unknown): { code: string | null; reason: string } {
  const e = err as { code?: unknown; message?: unknown } | null;
  return { code: typeof e?.code === 'string' ? e.code : null, reason: typeof e?.message === 'string' ? e.message : String(err) };
}

/** Runs `work` in one transaction; rolls back on any error. */
export async function inTransaction<T>(db: Db, work: (tx: Tx) => Promise<T>): Promise<T> {
  const tx = await db.connect();
  try {
    await tx.query('BEGIN');
    const result = await work(tx);
    await tx.query('COMMIT');
    return result;
  } catch (err) {
    await tx.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    tx.release();
  }
}
