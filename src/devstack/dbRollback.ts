/** A database that goes back in time (issue 23 item 4), for the fault campaign and the tests: the
 * app's own database only, so Temporal (even a cluster whose persistence shares the server) and the
 * sandbox keep everything that happened since. `snapshotDatabase` copies every table and sequence of
 * the public schema, in one consistent snapshot, into a schema of its own while the app runs.
 * `restoreDatabase` is the restore: connections refused, every session of the app's database ended
 * (its open transactions fail), the tables and sequences put back in one transaction, connections
 * allowed again. The effect of a point-in-time restore to the snapshot's moment, without stopping a
 * server other databases share. */
import { Client } from 'pg';

export interface DbSnapshot { schema: string; tables: string[]; sequences: Array<{ name: string; lastValue: string | null }>; takenAt: Date }

/** How long the restore waits for a session queued behind a lock to end (it ends at once: a lock wait
 * answers a termination immediately). */
const LOCK_WAITER_EXIT_MS = 5_000;

const quoted = (name: string): string => `"${name.replace(/"/g, '""')}"`;

async function withClient<T>(url: string, fn: (c: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function inTransaction<T>(client: Client, begin: string, fn: () => Promise<T>): Promise<T> {
  await client.query(begin);
  try {
    const result = await fn();
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

export async function snapshotDatabase(url: string, label: string): Promise<DbSnapshot> {
  const schema = `rollback_${label.replace(/[^a-z0-9_]/gi, '_').toLowerCase()}`;
  return withClient(url, (client) => inTransaction(client, 'BEGIN ISOLATION LEVEL REPEATABLE READ', async () => {
    const now = (await client.query<{ now: Date }>('SELECT now()')).rows[0]!.now;
    const { rows: tables } = await client.query<{ name: string }>(`SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`);
    const { rows: sequences } = await client.query<{ name: string; last_value: string | null }>(
      `SELECT sequencename AS name, last_value::text FROM pg_sequences WHERE schemaname = 'public' ORDER BY 1`);
    await client.query(`DROP SCHEMA IF EXISTS ${quoted(schema)} CASCADE`);
    await client.query(`CREATE SCHEMA ${quoted(schema)}`);
    for (const t of tables) await client.query(`CREATE TABLE ${quoted(schema)}.${quoted(t.name)} AS TABLE public.${quoted(t.name)}`);
    return { schema, tables: tables.map((t) => t.name), sequences: sequences.map((s) => ({ name: s.name, lastValue: s.last_value })), takenAt: now };
  }));
}

/** Puts the snapshot back. `exclusive`: the database refuses connections and every other session of
 * it is ended first (as when a server is stopped for a restore); off, the restore only waits for the
 * locks it needs (a test whose own pool stays connected). */
export async function restoreDatabase(url: string, snap: DbSnapshot, opts: { exclusive: boolean }): Promise<void> {
  await withClient(url, async (client) => {
    const { db, pid } = (await client.query<{ db: string; pid: number }>('SELECT current_database() AS db, pg_backend_pid() AS pid')).rows[0]!;
    // A database refuses connections only when told from another one (the maintenance database):
    // this session is connected first, so it stays while every other one is ended.
    const admin = () => { const u = new URL(url); u.pathname = '/postgres'; return u.toString(); };
    const allowConnections = (allow: boolean) => withClient(admin(), async (c) => {
      await c.query(`ALTER DATABASE ${quoted(db)} ALLOW_CONNECTIONS ${allow}`);
      if (allow) return;
      // Sessions queued behind a lock are ended first, and gone, before the sessions that hold locks:
      // ended after a holder, a query waiting on it would run on the rows about to be replaced and
      // answer as if the restore had come after it (a server stopped for a restore runs nothing more).
      await c.query(`SELECT pg_terminate_backend(pid, ${LOCK_WAITER_EXIT_MS}) FROM pg_stat_activity WHERE datname = $1 AND pid <> $2 AND wait_event_type = 'Lock'`, [db, pid]);
      await c.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> $2', [db, pid]);
    });
    if (opts.exclusive) await allowConnections(false);
    try {
      await inTransaction(client, 'BEGIN', async () => {
        await client.query('SET LOCAL session_replication_role = replica'); // no foreign-key checks while rows go back
        await client.query(`TRUNCATE ${snap.tables.map((t) => `public.${quoted(t)}`).join(', ')}`);
        for (const t of snap.tables) {
          // Generated columns (payouts.subject_id) are computed, never written.
          const { rows: [written] } = await client.query<{ columns: string }>(
            `SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) AS columns FROM pg_attribute
              WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped AND attgenerated = ''`, [`public.${quoted(t)}`]);
          await client.query(`INSERT INTO public.${quoted(t)} (${written!.columns}) OVERRIDING SYSTEM VALUE SELECT ${written!.columns} FROM ${quoted(snap.schema)}.${quoted(t)}`);
        }
        for (const s of snap.sequences) {
          if (s.lastValue === null) await client.query(`SELECT setval('public.${quoted(s.name)}', 1, false)`);
          else await client.query(`SELECT setval('public.${quoted(s.name)}', $1::bigint)`, [s.lastValue]);
        }
      });
    } finally {
      if (opts.exclusive) await allowConnections(true);
    }
  });
}
