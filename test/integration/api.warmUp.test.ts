/** A new API process opens and warms its pool before it listens (api/warmUp.ts): the first
 * captures of a peak reaching a fresh instance meet no cold connection. */
import { warmUpApi, WARM_UP_SQL } from '../../src/api/warmUp';
import { createPool, poolConfig } from '../../src/db/pool';
import { isolatedPoolForSuite } from '../support/db';

describe('the API warm-up before it listens', () => {
  const suite = isolatedPoolForSuite();

  test('when it warms 3 connections, then 3 distinct backends have read every table a capture touches, the pool holds them idle, and nothing was written', async () => {
    const { db: admin, url } = suite;
    const db = createPool(url, { max: 5, min: 3 });
    const before = await admin.query('SELECT (SELECT count(*) FROM processed_events) AS events, (SELECT count(*) FROM payments) AS payments');
    try {
      const warmed = await warmUpApi(db, 3);
      expect(warmed.connections).toBe(3);
      expect(db.totalCount).toBe(3);
      expect(db.idleCount).toBe(3);
      const backends = await admin.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'payouts' AND pid <> pg_backend_pid()`);
      expect(backends.rows[0]!.n).toBeGreaterThanOrEqual(3);
      expect((await admin.query('SELECT (SELECT count(*) FROM processed_events) AS events, (SELECT count(*) FROM payments) AS payments')).rows).toEqual(before.rows);
      // Every table it names exists in the migrated schema (a renamed table fails here, not at boot).
      await expect(admin.query(WARM_UP_SQL)).resolves.toBeDefined();
    } finally {
      await db.end();
    }
  });

  test('when the database cannot be reached, then the warm-up warms nothing and does not throw (the API starts anyway)', async () => {
    const unreachable = new URL(suite.url);
    unreachable.port = '1';
    const db = createPool(unreachable.toString(), { max: 2, min: 2, connectTimeoutMs: 500 });
    try {
      await expect(warmUpApi(db, 2)).resolves.toEqual(expect.objectContaining({ connections: 0 }));
    } finally {
      await db.end();
    }
  });

  test('the pool keeps its minimum only when one is configured, and never above its maximum', () => {
    expect(poolConfig('postgres://x/y', { max: 10 }).min).toBeUndefined();
    expect(poolConfig('postgres://x/y', { max: 10, min: 4 }).min).toBe(4);
    expect(poolConfig('postgres://x/y', { max: 2, min: 4 }).min).toBe(2);
  });
});
