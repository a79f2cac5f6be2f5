/** PostgreSQL access. int8 (bigint) columns hold paise; node-postgres returns them as strings, so we
 * parse them here once, refusing any value that is not a safe integer. */
import { Pool, types, type PoolClient } from 'pg';
import { logger } from '../logger';

export function parseSafeInteger(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new RangeError(`int8 value ${text} is not a safe integer`);
  return value;
}

types.setTypeParser(types.builtins.INT8, parseSafeInteger);

export type Db = Pool;
export type Tx = PoolClient;

export function createPool(connectionString: string, max = 10): Db {
  const pool = new Pool({ connectionString, max, application_name: 'payouts' });
  // An idle connection dropped by the server (restart, shutdown) must not crash the process.
  pool.on('error', (err) => logger.warn({ err }, 'idle PostgreSQL connection lost'));
  return pool;
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
