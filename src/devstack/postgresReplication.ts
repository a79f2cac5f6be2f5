/** PostgreSQL as a primary with a synchronous streaming replica behind one address (issue 23,
 * item 3), from the embedded PostgreSQL 18 binaries. That package ships only `initdb`, `pg_ctl`
 * and `postgres`, and the registry's client tools are PostgreSQL 15 (`pg_basebackup` cannot copy
 * a newer server), so the replica's base backup is the low-level one: `pg_backup_start`, a file
 * copy of the primary's data directory, `pg_backup_stop`'s label written beside it. The replica
 * streams from a physical replication slot created before the copy (the slot keeps the WAL the
 * copy needs), and the primary waits for the replica's flush on every commit
 * (`synchronous_standby_names = '*'`): a commit acknowledged to a client is on both.
 *
 * failover() is what a managed service does when the primary's host dies: the primary stops at
 * once (SIGQUIT, no checkpoint), the replica is promoted, the address (src/devstack/tcpProxy.ts)
 * is re-pointed, and a new replica is built from the new primary; until it streams, commits are
 * acknowledged by the new primary alone (as a managed service's are while it rebuilds a standby). */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Client } from 'pg';
import { freePort } from './ports';
import { POSTGRES_PASSWORD, POSTGRES_USER, runAsIds, startEmbeddedPostgres, type RunningPostgres } from './postgres';
import { startTcpProxy, type TcpProxy } from './tcpProxy';

export interface ReplicatedPostgres {
  /** The maintenance database through the one address clients use. */
  adminUrl: string;
  /** The address's port (stable across failovers). */
  port: number;
  /** The servers as they are now. */
  primary(): RunningPostgres;
  replica(): RunningPostgres | null;
  /** Immediate shutdown of the primary and a start on the same data (crash recovery); the
   * replica reconnects by itself. */
  crashAndRestartPrimary(): Promise<void>;
  /** Primary lost, replica promoted, address re-pointed, a new replica built and synchronous again. */
  failover(): Promise<FailoverReport>;
  stop(): Promise<void>;
}

export interface FailoverReport {
  /** From the old primary's shutdown to the address pointing at the new one. */
  unavailableMs: number;
  /** Until the new replica streams and commits wait for it again. */
  withoutStandbyMs: number;
}

const SLOT = 'payouts_standby';

// Synchronous commits always: `synchronous_commit = off` would let a commit return before the
// replica (or even the primary's own disk) has it, which is what this pair exists to prevent.
interface NodeOptions { dataDir: string; log?: (line: string) => void }

async function query<T>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end().catch(() => undefined);
  }
}

const directUrl = (port: number) => `postgres://${POSTGRES_USER}:${POSTGRES_PASSWORD}@127.0.0.1:${port}/postgres`;

/** What a base backup leaves out (the PostgreSQL docs' list): runtime state, WAL (streamed
 * instead), replication slots of the source. Their directories are kept, empty. */
const EMPTIED_DIRS = new Set(['pg_wal', 'pg_replslot', 'pg_dynshmem', 'pg_notify', 'pg_serial', 'pg_snapshots', 'pg_stat_tmp', 'pg_subtrans']);
const SKIPPED_FILES = new Set(['postmaster.pid', 'postmaster.opts', 'backup_label', 'tablespace_map', 'standby.signal', 'recovery.signal']);

/** Copies a live data directory (inside pg_backup_start/stop): files that vanish while copied are
 * fine (WAL replay recreates what mattered); ownership and modes are the server user's. */
async function copyDataDir(from: string, to: string, owner: { uid?: number; gid?: number }): Promise<void> {
  const chown = async (p: string) => { if (owner.uid !== undefined) await fs.chown(p, owner.uid, owner.gid!); };
  const walk = async (src: string, dst: string, top: boolean): Promise<void> => {
    await fs.mkdir(dst, { mode: 0o700 });
    await chown(dst);
    const entries = await fs.readdir(src, { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => { if (err.code === 'ENOENT') return []; throw err; });
    for (const entry of entries) {
      const s = path.join(src, entry.name);
      const d = path.join(dst, entry.name);
      if (entry.isDirectory()) {
        if (top && EMPTIED_DIRS.has(entry.name)) {
          await fs.mkdir(d, { mode: 0o700 });
          await chown(d);
          if (entry.name === 'pg_wal') { await fs.mkdir(path.join(d, 'archive_status'), { mode: 0o700 }); await chown(path.join(d, 'archive_status')); }
          continue;
        }
        await walk(s, d, false);
      } else if (entry.isFile()) {
        if ((top && SKIPPED_FILES.has(entry.name)) || entry.name.startsWith('pgsql_tmp')) continue;
        try {
          await fs.copyFile(s, d);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
          throw err;
        }
        await fs.chmod(d, 0o600);
        await chown(d);
      }
    }
  };
  await walk(from, to, true);
}

/** A replica of `primary` in a fresh data directory, streaming from the slot. */
async function buildReplica(primary: RunningPostgres, dataDir: string, node: NodeOptions): Promise<RunningPostgres> {
  const owner = await runAsIds();
  const admin = new Client({ connectionString: primary.adminUrl });
  await admin.connect();
  try {
    await admin.query(`SELECT pg_create_physical_replication_slot($1, true) WHERE NOT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = $1)`, [SLOT]);
    // Non-exclusive: the backup lasts as long as this session.
    await admin.query(`SELECT pg_backup_start($1, true)`, [`standby-${randomBytes(3).toString('hex')}`]);
    await copyDataDir(primary.dataDir, dataDir, owner);
    const stop = await admin.query<{ labelfile: string; spcmapfile: string | null }>('SELECT labelfile, spcmapfile FROM pg_backup_stop(false)');
    const labelFile = path.join(dataDir, 'backup_label');
    await fs.writeFile(labelFile, stop.rows[0]!.labelfile, { mode: 0o600 });
    const standbySignal = path.join(dataDir, 'standby.signal');
    await fs.writeFile(standbySignal, '', { mode: 0o600 });
    if (owner.uid !== undefined) for (const f of [labelFile, standbySignal]) await fs.chown(f, owner.uid, owner.gid!);
  } finally {
    await admin.end().catch(() => undefined);
  }
  return startEmbeddedPostgres({
    dataDir, port: await freePort(), persistent: false, synchronousCommit: true, log: node.log,
    settings: {
      primary_conninfo: `host=127.0.0.1 port=${primary.port} user=${POSTGRES_USER} password=${POSTGRES_PASSWORD} application_name=standby`,
      primary_slot_name: SLOT,
    },
  });
}

async function waitStreaming(primary: RunningPostgres, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await query<{ state: string }>(primary.adminUrl, `SELECT state FROM pg_stat_replication WHERE application_name = 'standby'`);
    if (rows.some((r) => r.state === 'streaming')) return;
    if (Date.now() > deadline) throw new Error(`the replica is not streaming after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Commits wait for the replica (or not): ALTER SYSTEM, so a restarted primary keeps it. */
async function setSynchronous(primary: RunningPostgres, on: boolean): Promise<void> {
  await query(primary.adminUrl, on ? `ALTER SYSTEM SET synchronous_standby_names = '*'` : 'ALTER SYSTEM RESET synchronous_standby_names');
  await query(primary.adminUrl, 'SELECT pg_reload_conf()');
}

export async function startReplicatedPostgres(opts: {
  /** Each server's data directory goes under it (primary-1, replica-2, …). */
  stateDir: string;
  log?: (line: string) => void;
}): Promise<ReplicatedPostgres> {
  let generation = 1;
  const node = (name: string): NodeOptions => ({ dataDir: path.join(opts.stateDir, name), log: opts.log && ((l) => opts.log!(`[${name}] ${l}`)) });
  const first = node('postgres-1');
  let primary = await startEmbeddedPostgres({ ...first, port: await freePort(), persistent: false, synchronousCommit: true });
  let replica: RunningPostgres | null = null;
  let proxy: TcpProxy | null = null;
  try {
    replica = await buildReplica(primary, path.join(opts.stateDir, `postgres-${++generation}`), node(`postgres-${generation}`));
    await waitStreaming(primary);
    await setSynchronous(primary, true);
    proxy = await startTcpProxy({ target: primary.port });
  } catch (err) {
    await replica?.stop().catch(() => undefined);
    await primary.stop().catch(() => undefined);
    throw err;
  }
  const address = proxy;
  const primaryOptions = { ...first };
  return {
    adminUrl: directUrl(address.port),
    port: address.port,
    primary: () => primary,
    replica: () => replica,
    async crashAndRestartPrimary() {
      address.pointAt(null);
      await primary.crash();
      primary = await startEmbeddedPostgres({ ...primaryOptions, port: primary.port, persistent: false, synchronousCommit: true });
      address.pointAt(primary.port);
    },
    async failover() {
      if (!replica) throw new Error('failover: no replica (the last one is still being built)');
      const lostAt = Date.now();
      address.pointAt(null);
      const old = primary;
      await old.crash();
      const promoted = replica;
      replica = null;
      await query(directUrl(promoted.port), 'SELECT pg_promote(true, 60)');
      // The replica copied the old primary's "wait for a standby": alone, it must not wait.
      await setSynchronous(promoted, false);
      primary = promoted;
      Object.assign(primaryOptions, { dataDir: promoted.dataDir });
      address.pointAt(promoted.port);
      const unavailableMs = Date.now() - lostAt;
      await fs.rm(old.dataDir, { recursive: true, force: true });
      const rebuiltAt = Date.now();
      const name = `postgres-${++generation}`;
      replica = await buildReplica(promoted, path.join(opts.stateDir, name), node(name));
      await waitStreaming(promoted);
      await setSynchronous(promoted, true);
      return { unavailableMs, withoutStandbyMs: Date.now() - rebuiltAt };
    },
    async stop() {
      await address.close();
      await primary.stop();
      await replica?.stop();
    },
  };
}
