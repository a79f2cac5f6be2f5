/** PostgreSQL that fails over (issue 23, item 3): a primary with a synchronous streaming replica
 * behind one address. The primary's host dies while clients commit; the replica is promoted, the
 * address re-pointed, a new replica built. Every commit a client saw acknowledged is on the new
 * primary; commits in flight fail and their callers retry; the pool's next query works through the
 * same URL; and the pair is synchronous again, so it can fail over a second time. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { createPool } from '../../src/db/pool';
import { ensureDatabase } from '../../src/devstack/postgres';
import { startReplicatedPostgres, type ReplicatedPostgres } from '../../src/devstack/postgresReplication';

jest.setTimeout(180_000);

async function one<T>(url: string, sql: string): Promise<T> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql)).rows[0] as T;
  } finally {
    await c.end();
  }
}

describe('a PostgreSQL primary with a synchronous replica, failed over', () => {
  let pair: ReplicatedPostgres;
  let stateDir: string;

  beforeAll(async () => {
    stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pg-failover-'));
    fs.chmodSync(stateDir, 0o755);
    pair = await startReplicatedPostgres({ stateDir });
  });

  afterAll(async () => {
    await pair?.stop();
    fs.rmSync(stateDir, { recursive: true, force: true });
  });

  test('when the primary dies mid-write, then every acknowledged commit survives on the promoted replica, the callers retry the rest through the same address, and the pair is synchronous again', async () => {
    const replica = pair.replica()!;
    // The replica streams and commits wait for it.
    expect(await one<{ sync_state: string }>(pair.primary().adminUrl, `SELECT sync_state FROM pg_stat_replication`)).toEqual({ sync_state: 'sync' });
    const url = await ensureDatabase(pair.adminUrl, 'failover_test');
    const db = createPool(url, 4);
    await db.query('CREATE TABLE IF NOT EXISTS acknowledged (id int PRIMARY KEY)');
    const acknowledged: number[] = [];
    let failedAttempts = 0;
    // Four callers, each committing its ids one by one and retrying a failed commit (a commit whose
    // connection was cut may have landed: the retry is idempotent on the id).
    const writer = async (first: number) => {
      for (let id = first; id < first + 400; id += 4) {
        for (;;) {
          try {
            await db.query('INSERT INTO acknowledged (id) VALUES ($1) ON CONFLICT (id) DO NOTHING', [id]);
            acknowledged.push(id);
            break;
          } catch {
            failedAttempts += 1;
            await new Promise((r) => setTimeout(r, 50));
          }
        }
      }
    };
    const writing = Promise.all([0, 1, 2, 3].map(writer));
    while (acknowledged.length < 100) await new Promise((r) => setTimeout(r, 10));
    const oldPrimaryDir = pair.primary().dataDir;
    const report = await pair.failover();
    await writing;

    expect(pair.primary().port).toBe(replica.port); // the replica is the primary now
    expect(fs.existsSync(oldPrimaryDir)).toBe(false);
    expect(failedAttempts).toBeGreaterThan(0); // the fault bit: commits in flight failed
    const { count } = await one<{ count: string }>(url, 'SELECT count(*) FROM acknowledged');
    expect(Number(count)).toBe(400);
    const ids = (await db.query<{ id: number }>('SELECT id FROM acknowledged')).rows.map((r) => r.id);
    expect(new Set(ids)).toEqual(new Set(acknowledged));
    expect(report.unavailableMs).toBeLessThan(30_000);
    // A new replica streams, synchronous, and is not promoted.
    expect(await one<{ sync_state: string }>(pair.primary().adminUrl, `SELECT sync_state FROM pg_stat_replication`)).toEqual({ sync_state: 'sync' });
    expect(await one<{ recovering: boolean }>(pair.replica()!.adminUrl, 'SELECT pg_is_in_recovery() AS recovering')).toEqual({ recovering: true });

    // And again: the rebuilt replica takes over, with everything.
    await db.query('INSERT INTO acknowledged (id) VALUES (1000)');
    await pair.failover();
    const after = await db.query<{ count: string }>('SELECT count(*) FROM acknowledged');
    expect(Number(after.rows[0]!.count)).toBe(401);
    await db.end();
  });
});
