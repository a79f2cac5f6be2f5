/** Starts a real Temporal server: the Temporal CLI's `server start-dev` (SQLite, with the Web UI),
 * installed by scripts/install-temporal.sh. We start it ourselves instead of letting the SDK spawn
 * it, because the SDK gives a spawned server only 5 s to come up, too little on two slow cores. */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { isListening, waitForPort } from './ports';
import { restrictFile, withPrivateUmask } from './privateFiles';

const run = promisify(execFile);

/** Search attributes the payout workflows keep current (all Keyword). */
export const SEARCH_ATTRIBUTES = ['OrderId', 'VendorId', 'PayoutStatus'] as const;

export interface RunningTemporal {
  address: string;
  uiUrl: string | null;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** Where the server keeps its state: always a SQLite file. An in-memory database lives only as long
 * as its one connection, and the SQLite driver discards a connection that a cancelled query left
 * interrupted (a request whose deadline passed mid-query): the whole state went with it ("no such
 * table: namespaces" for every call after, CI at f9bfdd8). A file is reopened instead. `durable:
 * false` starts from an empty file and never syncs it (WAL, synchronous=off): as fast as memory. */
export interface TemporalStore { file: string; durable: boolean }

const SQLITE_FILES = ['', '-wal', '-shm', '-journal'];

export async function installTemporalCli(projectRoot: string): Promise<string> {
  if (process.env.TEMPORAL_CLI_PATH) return process.env.TEMPORAL_CLI_PATH;
  const { stdout } = await run('bash', [path.join(projectRoot, 'scripts/install-temporal.sh')], { maxBuffer: 1 << 20 });
  const bin = stdout.trim().split('\n').pop();
  if (!bin) throw new Error('install-temporal.sh printed no path');
  return bin;
}

export async function startTemporalDevServer(opts: {
  cli: string;
  port: number;
  uiPort: number | null;
  store: TemporalStore;
  log?: (line: string) => void;
}): Promise<RunningTemporal> {
  // Waiting for the port would otherwise mistake a server left running elsewhere for ours.
  if (await isListening('127.0.0.1', opts.port)) throw new Error(`port ${opts.port} is already in use: stop what listens there or set TEMPORAL_PORT`);
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(opts.port), '--log-level', 'warn', '--namespace', 'default'];
  args.push(...(opts.uiPort === null ? ['--headless'] : ['--ui-port', String(opts.uiPort)]));
  const { file, durable } = opts.store;
  args.push('--db-filename', file);
  if (!durable) {
    for (const suffix of SQLITE_FILES) fs.rmSync(`${file}${suffix}`, { force: true });
    args.push('--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=off');
  }
  // The server's state (workflow histories: amounts, accounts) is its owner's alone. An existing
  // file is tightened; new ones (and SQLite's -wal/-shm/-journal, which take the database's mode)
  // are created under umask 077.
  for (const suffix of SQLITE_FILES) restrictFile(`${file}${suffix}`);
  for (const name of SEARCH_ATTRIBUTES) args.push('--search-attribute', `${name}=Keyword`);
  // One partition per task queue: Temporal applies a queue's rate limit (the provider budget's
  // maxTaskQueueActivitiesPerSecond) per partition, and with the default four a budget queue
  // drained at ~0.73x its configured rate (bench:peak); one partition serves 8/s with ease.
  args.push('--dynamic-config-value', 'matching.numTaskqueueReadPartitions=1', '--dynamic-config-value', 'matching.numTaskqueueWritePartitions=1');
  // Worker Versioning (deployments), for rolling deploys of workflow changes (docs/production.md).
  args.push('--dynamic-config-value', 'system.enableDeploymentVersions=true', '--dynamic-config-value', 'frontend.workerVersioningWorkflowAPIs=true');
  // Own process group: a terminal's Ctrl-C reaches us, and we stop the server after the worker.
  const child = withPrivateUmask(() => spawn(opts.cli, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true }));
  // Whatever ends this process, the server it started must not outlive it.
  const killOnExit = () => child.kill('SIGTERM');
  process.once('exit', killOnExit);
  child.once('exit', () => process.off('exit', killOnExit));
  const forward = (chunk: Buffer) => opts.log?.(chunk.toString().trimEnd());
  child.stdout?.on('data', forward);
  child.stderr?.on('data', forward);
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`temporal exited early with code ${code}`))));
  exited.catch(() => undefined);
  await Promise.race([waitForPort('127.0.0.1', opts.port, 60_000), exited]);
  const address = `127.0.0.1:${opts.port}`;
  await ensureSearchAttributes(opts.cli, address);
  return {
    address,
    uiUrl: opts.uiPort === null ? null : `http://127.0.0.1:${opts.uiPort}`,
    process: child,
    stop: () => stopChild(child),
  };
}

/** `--search-attribute` only applies when the namespace is first created; a reused SQLite file
 * needs them registered explicitly. Registering an existing attribute is a no-op. */
async function ensureSearchAttributes(cli: string, address: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      for (const name of SEARCH_ATTRIBUTES) {
        await run(cli, ['operator', 'search-attribute', 'create', '--address', address, '--namespace', 'default', '--name', name, '--type', 'Keyword']);
      }
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

export async function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const done = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await done;
  clearTimeout(timer);
}
