/** The production topology on one machine, as separate OS processes configured only through their
 * environment (issue 9, item 8) — none of `npm run dev`'s in-process wiring:
 *
 *   Temporal dev server (or TEMPORAL_ADDRESS)      PostgreSQL (embedded, or a fresh database on DATABASE_URL's server)
 *   migrations            node --import tsx src/cli/migrate.ts
 *   API keys              node --import tsx src/cli/keys.ts mint --name … --role … --json   (ordering, ops, admin, finance)
 *   Razorpay sandbox      node --import tsx src/sandbox/main.ts     → webhooks to the load balancer
 *   load balancer         a round-robin reverse proxy (node:http, in this process) in front of the APIs
 *   api-1, api-2          node --import tsx src/api/main.ts         (/health, /ready)
 *   worker-1, worker-2    node --import tsx src/worker.ts           (WORKER_SCHEDULES=on; /health, /ready on WORKER_HEALTH_PORT)
 *
 * Logs of every process go to `<stateDir>/<name>.log` (default stateDir: .data/topology/<timestamp>).
 * `startTopology()` resolves once every API and worker answers 200 on /ready; `stop()` stops every
 * process it started (SIGTERM to each process group, SIGKILL after a grace period) and waits for
 * their exits. `npm run topology` starts it, prints the URLs, keys and pids, places one order end to
 * end (`-- --no-smoke` skips it) and stops everything on Ctrl-C or SIGTERM. */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { temporal as proto } from '@temporalio/proto';
import { configSchema } from '../config/config';
import { LOAD_RUN_LIMITS } from '../api/rateLimit';
import type { OrderView } from '../moneyin/orderView';
import type { FaultRule, LinkedAccountStatus, SandboxControl, WebhookFault } from '../sandbox/control';
import type { RzpPayment, RzpRefund, RzpReversal, RzpSettlement, RzpTransfer } from '../gateway/types';
import { freePort } from './ports';
import { ensurePrivateDir, PRIVATE_FILE_MODE } from './privateFiles';
import { ensureDatabase, startEmbeddedPostgres, type RunningPostgres } from './postgres';
import { installTemporalCli, SEARCH_ATTRIBUTES, startTemporalDevServer, type RunningTemporal } from './temporal';
import { runNodeProcess, startNodeProcess, waitForHttp200, type ManagedProcess, type ProcessExit } from './topologyProcesses';

const PROJECT_ROOT = path.resolve(__dirname, '../..');

export const TOPOLOGY_ROLES = ['ordering', 'ops', 'admin', 'finance'] as const;
export type TopologyRole = (typeof TOPOLOGY_ROLES)[number];

/** The sandbox's keys (a sandbox run: NODE_ENV=development; production refuses these by design). */
export const SANDBOX_SECRETS = {
  RAZORPAY_KEY_ID: 'rzp_test_sandboxkey0001',
  RAZORPAY_KEY_SECRET: 'sandbox_secret_change_me',
  RAZORPAY_WEBHOOK_SECRET: 'sandbox_webhook_secret',
} as const;

/** Short payout durations (seconds instead of minutes), as the worker-kill test uses, so that a dead
 * worker is noticed and a lost start is swept within a test's patience. Every one is overridable
 * through `env`. The stale-claim horizon exceeds both the transfer and the gateway timeout. */
export const TOPOLOGY_TUNING: Readonly<Record<string, string>> = {
  PAYOUT_SWEEP_EVERY_MS: '3000',
  // STALE_CLAIM > TRANSFER_TIMEOUT > GATEWAY_TIMEOUT, as config requires.
  PAYOUT_TRANSFER_TIMEOUT_MS: '4000',
  GATEWAY_TIMEOUT_MS: '3000',
  PAYOUT_STALE_CLAIM_MS: '8000',
  PAYOUT_RESOLVER_RETRY_MS: '300',
  PAYOUT_SETTLEMENT_POLL_MS: '300',
  PAYOUT_RETRY_BACKOFF_MS: '200',
  ...LOAD_RUN_LIMITS,
};

/** Keys the topology sets per process itself; `env` cannot override them. */
export const TOPOLOGY_OWNED_KEYS = [
  'NODE_ENV', 'DATABASE_URL', 'TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE', 'TEMPORAL_TASK_QUEUE', 'API_PORT', 'HTTP_HOST', 'RAZORPAY_BASE_URL',
  'SANDBOX_HOST', 'SANDBOX_PORT', 'SANDBOX_WEBHOOK_URL', 'WORKER_HEALTH_PORT', 'WORKER_SCHEDULES',
] as const;

export interface TopologyOptions {
  /** Where logs (and an embedded PostgreSQL's data) go; default `.data/topology/<timestamp>`. */
  stateDir?: string;
  /** An existing Temporal server (host:port); when absent a dev server is started (and stopped). */
  temporalAddress?: string;
  /** With a dev server of our own: serve its Web UI on a free port. */
  temporalUi?: boolean;
  /** Any URL on an existing PostgreSQL server: a fresh database is created there. When absent an
   * embedded PostgreSQL is started (and stopped, its data removed). */
  databaseUrl?: string;
  /** Name of the fresh database (default `topology_<timestamp>_<random>`). */
  databaseName?: string;
  /** Temporal namespace (default `default`); registered when missing, with the search attributes
   * the payout workflow sets. Schedule ids are per namespace: on a Temporal server shared with
   * other users of the same Schedule ids, give the topology a namespace of its own. */
  namespace?: string;
  /** Default `topology-<random>`: a shared Temporal server keeps runs apart. */
  taskQueue?: string;
  /** Extra configuration for every app process (API, worker, sandbox, CLIs), over the defaults
   * (TOPOLOGY_TUNING, LOG_LEVEL=info, the sandbox keys); never over TOPOLOGY_OWNED_KEYS. */
  env?: Record<string, string>;
  /** Only for the workers, over `env`. */
  workerEnv?: Record<string, string>;
  /** Sandbox: pending → processed delay of transfers and first webhook retry delay (200 ms each). */
  sandboxTransferDelayMs?: number;
  sandboxWebhookRetryBaseMs?: number;
  /** How long every /ready has to answer 200 (default 180 s: nine Node processes boot on two cores). */
  readyTimeoutMs?: number;
  /** Grace between SIGTERM and SIGKILL when stopping (default 10 s). */
  stopGraceMs?: number;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
  /** Aborts the start-up (what was started is stopped). */
  signal?: AbortSignal;
  /** Servers of our own keep what they acknowledged across a restart: Temporal in a SQLite file in
   * stateDir, PostgreSQL with synchronous commits (the fault campaign restarts both). */
  durableServers?: boolean;
}

export interface TopologyProcess {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  readonly running: boolean;
}

export interface TopologyApi extends TopologyProcess {
  readonly url: string;
}

export interface TopologyWorker extends TopologyProcess {
  /** http://127.0.0.1:<WORKER_HEALTH_PORT> (GET /health, GET /ready); the same across restarts. */
  readonly healthUrl: string;
  /** The Temporal worker identity, `<pid>@<hostname>` (what a pending activity's lastWorkerIdentity names). */
  readonly identity: string;
  /** Signals the worker's process group (default SIGKILL) and resolves once it has exited. */
  kill(signal?: NodeJS.Signals): Promise<ProcessExit>;
  /** Stops it if it still runs, starts a new process with the same environment and port, and
   * resolves once it answers 200 on /ready. */
  restart(): Promise<void>;
}

export interface Topology {
  stateDir: string;
  /** The load balancer: the ordering client and Razorpay's webhooks go here. */
  proxyUrl: string;
  apiUrls: string[];
  apis: TopologyApi[];
  sandboxUrl: string;
  /** The sandbox's control routes (/_sandbox/*) over HTTP. */
  sandbox: SandboxControl;
  sandboxProcess: TopologyProcess;
  workers: TopologyWorker[];
  /** Bearer credentials minted by `src/cli/keys.ts`, one per role. */
  keys: Record<TopologyRole, string>;
  databaseUrl: string;
  temporalAddress: string;
  temporalUiUrl: string | null;
  namespace: string;
  taskQueue: string;
  /** Requests the load balancer handed to each API (same order as apiUrls). */
  proxyServed(): number[];
  /** Every long-running process (sandbox, APIs, workers) as it is now. */
  processes(): TopologyProcess[];
  /** Stops the Temporal dev server this topology started and starts it again on the same port and
   * state (durableServers: its SQLite file); resolves once it answers. */
  restartTemporal(): Promise<void>;
  /** An immediate shutdown of the embedded PostgreSQL (no checkpoint), then a start on the same
   * port and data directory (crash recovery); resolves once it accepts connections. */
  crashAndRestartPostgres(): Promise<void>;
  /** Stops everything this topology started; idempotent. */
  stop(): Promise<void>;
}

/** The environment a child starts from: ours minus every configuration key, so a process is
 * configured only by what the topology passes (and the test runner's settings do not leak in). */
function baseEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(configSchema.shape)) delete env[key];
  return env;
}

function timestamp(): string {
  return new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').replace(/\..*$/, '');
}

function withoutOwnedKeys(env: Record<string, string> | undefined): Record<string, string> {
  const owned = new Set<string>(TOPOLOGY_OWNED_KEYS);
  return Object.fromEntries(Object.entries(env ?? {}).filter(([k]) => !owned.has(k)));
}

export async function startTopology(opts: TopologyOptions = {}): Promise<Topology> {
  const log = opts.log ?? (() => undefined);
  const readyTimeoutMs = opts.readyTimeoutMs ?? 180_000;
  const graceMs = opts.stopGraceMs ?? 10_000;
  const stamp = timestamp();
  const suffix = randomBytes(3).toString('hex');
  const stateDir = path.resolve(opts.stateDir ?? path.join(PROJECT_ROOT, '.data', 'topology', `${stamp}-${suffix}`));
  ensurePrivateDir(stateDir);
  const taskQueue = opts.taskQueue ?? `topology-${suffix}`;
  const databaseName = opts.databaseName ?? `topology_${stamp.replace('-', '_')}_${suffix}`;
  const extraEnv = withoutOwnedKeys(opts.env);
  const workerExtraEnv = withoutOwnedKeys(opts.workerEnv);

  // What to stop: phase 1 the app processes (workers finish what they hold), phase 2 the sandbox
  // and the load balancer, phase 3 the servers and their log files, newest first, one at a time.
  const stops: Array<{ phase: 1 | 2 | 3; what: string; stop: () => Promise<unknown> }> = [];
  let stopped: Promise<void> | undefined;
  const stopAll = (): Promise<void> => {
    stopped ??= (async () => {
      const report = (what: string) => (err: unknown) => log(`stopping ${what} failed: ${String(err)}`);
      for (const phase of [1, 2] as const) {
        await Promise.all(stops.filter((s) => s.phase === phase).map((s) => s.stop().catch(report(s.what))));
      }
      for (const s of stops.filter((x) => x.phase === 3).reverse()) await s.stop().catch(report(s.what));
      log('topology stopped');
    })();
    return stopped;
  };
  const abortIfAsked = () => {
    if (opts.signal?.aborted) throw new Error('topology start-up aborted');
  };
  const fileLog = (name: string) => {
    const stream = fs.createWriteStream(path.join(stateDir, `${name}.log`), { flags: 'a', mode: PRIVATE_FILE_MODE });
    stops.push({ phase: 3, what: `${name} log`, stop: () => new Promise((r) => stream.end(r)) });
    return (line: string) => { if (!stream.writableEnded) stream.write(`${line}\n`); };
  };

  // The servers this topology started, as they are now (a restart replaces the process).
  let ownTemporal: { current: RunningTemporal; restart(): Promise<void> } | undefined;
  let ownPostgres: { current: RunningPostgres; restart(): Promise<void> } | undefined;

  try {
    // 1. Temporal and PostgreSQL: reuse what was given, start the rest (both settle before a
    // failure of one is thrown, so that the other is stopped too).
    log(`state and logs in ${stateDir}`);
    const servers = await Promise.allSettled([
      opts.temporalAddress ? Promise.resolve(null) : (async (): Promise<RunningTemporal> => {
        log('starting a Temporal dev server');
        const cli = await installTemporalCli(PROJECT_ROOT);
        const port = await freePort();
        const uiPort = opts.temporalUi ? await freePort() : null;
        const dbFile = opts.durableServers ? path.join(stateDir, 'temporal.sqlite') : null;
        const temporalLog = fileLog('temporal');
        const start = () => startTemporalDevServer({ cli, port, uiPort, dbFile, log: temporalLog });
        const server = await start();
        stops.push({ phase: 3, what: 'temporal', stop: () => ownTemporal!.current.stop() });
        ownTemporal = { current: server, restart: async () => {
          await ownTemporal!.current.stop();
          ownTemporal!.current = await start();
        } };
        return server;
      })(),
      opts.databaseUrl ? Promise.resolve(null) : (async (): Promise<RunningPostgres> => {
        log('starting an embedded PostgreSQL');
        const pgOpts = { dataDir: path.join(stateDir, 'postgres'), port: await freePort(), persistent: false, synchronousCommit: opts.durableServers ?? false, log: fileLog('postgres') };
        const pg = await startEmbeddedPostgres(pgOpts);
        stops.push({ phase: 3, what: 'postgres', stop: () => ownPostgres!.current.stop() });
        ownPostgres = { current: pg, restart: async () => {
          await ownPostgres!.current.crash();
          ownPostgres!.current = await startEmbeddedPostgres(pgOpts);
        } };
        return pg;
      })(),
    ]);
    for (const s of servers) if (s.status === 'rejected') throw s.reason;
    const [temporal, postgres] = servers.map((s) => (s.status === 'fulfilled' ? s.value : null)) as [RunningTemporal | null, RunningPostgres | null];
    abortIfAsked();
    const temporalAddress = opts.temporalAddress ?? temporal!.address;
    const namespace = opts.namespace ?? 'default';
    await ensureNamespace(temporalAddress, namespace);
    const databaseUrl = await ensureDatabase(opts.databaseUrl ?? postgres!.adminUrl, databaseName);
    log(`database ${databaseName}; Temporal ${temporalAddress}, namespace ${namespace}, task queue ${taskQueue}`);

    // 2. The load balancer first: the sandbox posts webhooks to it. Every port is chosen up front.
    const apiPorts = [await freePort(), await freePort()];
    const apiUrls = apiPorts.map((p) => `http://127.0.0.1:${p}`);
    const proxy = await startRoundRobinProxy({ upstreams: apiUrls });
    stops.push({ phase: 2, what: 'load balancer', stop: () => proxy.close() });
    const sandboxPort = await freePort();
    const expectedSandboxUrl = `http://127.0.0.1:${sandboxPort}`;
    const workerPorts = [await freePort(), await freePort()];

    const common: NodeJS.ProcessEnv = {
      ...baseEnv(),
      LOG_LEVEL: 'info',
      ...SANDBOX_SECRETS,
      ...TOPOLOGY_TUNING,
      ...extraEnv,
      NODE_ENV: 'development',
    };
    const spawnSpec = (name: string, script: string, env: NodeJS.ProcessEnv, args?: string[], secretStdout = false) => ({ name, script, args, env, cwd: PROJECT_ROOT, logDir: stateDir, secretStdout });
    const track = (proc: ManagedProcess, phase: 1 | 2 = 1): ManagedProcess => {
      stops.push({ phase, what: proc.name, stop: () => proc.stop(graceMs) });
      return proc;
    };

    // 3. Migrations, as their own process.
    log('migrating (node --import tsx src/cli/migrate.ts)');
    await runNodeProcess(spawnSpec('migrate', 'src/cli/migrate.ts', { ...common, DATABASE_URL: databaseUrl }), undefined, track);
    abortIfAsked();

    // 4. Everything else at once: the keys, the sandbox, two APIs, two workers.
    log('minting API keys, starting the sandbox, 2 APIs and 2 workers');
    const keysMinted = Promise.all(TOPOLOGY_ROLES.map(async (role) => {
      const out = await runNodeProcess(spawnSpec(`keys-${role}`, 'src/cli/keys.ts', { ...common, LOG_LEVEL: 'warn', DATABASE_URL: databaseUrl },
        ['mint', '--name', `topology-${role}`, '--role', role, '--json'], true), undefined, track);
      const line = out.trim().split('\n').filter((l) => l.startsWith('{')).pop();
      const minted = line ? (JSON.parse(line) as { key?: string; roles?: string[] }) : {};
      if (!minted.key) throw new Error(`keys mint --role ${role} printed no key: ${out}`);
      return [role, minted.key] as const;
    }));
    keysMinted.catch(() => undefined); // awaited below; a failure must not be unhandled meanwhile

    const sandboxProc = track(startNodeProcess(spawnSpec('sandbox', 'src/sandbox/main.ts', {
      ...common,
      SANDBOX_HOST: '127.0.0.1',
      SANDBOX_PORT: String(sandboxPort),
      SANDBOX_WEBHOOK_URL: `${proxy.url}/webhooks/razorpay`,
      SANDBOX_TRANSFER_DELAY_MS: String(opts.sandboxTransferDelayMs ?? 200),
      SANDBOX_WEBHOOK_RETRY_BASE_MS: String(opts.sandboxWebhookRetryBaseMs ?? 200),
    })), 2);
    const appEnv: NodeJS.ProcessEnv = {
      ...common,
      HTTP_HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: temporalAddress,
      TEMPORAL_NAMESPACE: namespace,
      TEMPORAL_TASK_QUEUE: taskQueue,
      RAZORPAY_BASE_URL: expectedSandboxUrl,
    };
    const apiProcs = apiPorts.map((port, i) => track(startNodeProcess(spawnSpec(`api-${i + 1}`, 'src/api/main.ts', { ...appEnv, API_PORT: String(port) }))));
    const workerEnvs = workerPorts.map((port): NodeJS.ProcessEnv => ({
      ...appEnv, ...workerExtraEnv, WORKER_HEALTH_PORT: String(port), WORKER_SCHEDULES: 'on',
    }));
    const workerProcs = workerEnvs.map((env, i) => track(startNodeProcess(spawnSpec(`worker-${i + 1}`, 'src/worker.ts', env))));

    const sandboxLine = await sandboxProc.waitForOutput(/Razorpay sandbox listening at (\S+)/, readyTimeoutMs);
    const sandboxUrl = sandboxLine[1]!;
    if (sandboxUrl !== expectedSandboxUrl) throw sandboxProc.failure(`listens at ${sandboxUrl}, not at ${expectedSandboxUrl} as the APIs were told`);
    const ready = (url: string, proc: ManagedProcess) => waitForHttp200(url, { process: proc, timeoutMs: readyTimeoutMs, signal: opts.signal });
    await Promise.all([
      ...apiProcs.map((p, i) => ready(`${apiUrls[i]}/ready`, p)),
      ...workerProcs.map((p, i) => ready(`http://127.0.0.1:${workerPorts[i]}/ready`, p)),
    ]);
    const keys = Object.fromEntries(await keysMinted) as Record<TopologyRole, string>;
    abortIfAsked();

    // Getters: a view follows its process (a restarted worker is a new one).
    const view = (proc: () => ManagedProcess): TopologyProcess => ({
      get name() { return proc().name; },
      get pid() { return proc().pid; },
      get logFile() { return proc().logFile; },
      get running() { return proc().running; },
    });
    const apis: TopologyApi[] = apiProcs.map((p, i) => Object.defineProperty(view(() => p), 'url', { value: apiUrls[i]!, enumerable: true }) as TopologyApi);
    const workers: TopologyWorker[] = workerProcs.map((first, i) => {
      let current = first;
      const healthUrl = `http://127.0.0.1:${workerPorts[i]}`;
      return {
        get name() { return current.name; },
        get pid() { return current.pid; },
        get logFile() { return current.logFile; },
        get running() { return current.running; },
        healthUrl,
        get identity() { return `${current.pid}@${os.hostname()}`; },
        async kill(signal: NodeJS.Signals = 'SIGKILL') {
          current.signal(signal);
          return current.exited;
        },
        async restart() {
          if (stopped) throw new Error('the topology is stopped');
          if (current.running) await current.stop(graceMs);
          const proc = track(startNodeProcess(spawnSpec(`worker-${i + 1}`, 'src/worker.ts', workerEnvs[i]!)));
          current = proc;
          log(`worker-${i + 1} restarted as pid ${proc.pid}`);
          await ready(`${healthUrl}/ready`, proc);
        },
      };
    });
    const sandboxProcess = view(() => sandboxProc);
    log('every API and worker answers 200 on /ready');
    return {
      stateDir, proxyUrl: proxy.url, apiUrls, apis, sandboxUrl, sandbox: sandboxHttpControl(sandboxUrl), sandboxProcess, workers, keys,
      databaseUrl, temporalAddress, temporalUiUrl: temporal?.uiUrl ?? null, namespace, taskQueue,
      proxyServed: () => proxy.served(),
      processes: () => [sandboxProcess, ...apis, ...workers],
      restartTemporal: async () => {
        if (!ownTemporal) throw new Error('restartTemporal: this topology uses a Temporal server it did not start');
        await ownTemporal.restart();
        log('Temporal dev server restarted');
      },
      crashAndRestartPostgres: async () => {
        if (!ownPostgres) throw new Error('crashAndRestartPostgres: this topology uses a PostgreSQL server it did not start');
        await ownPostgres.restart();
        log('PostgreSQL restarted after an immediate shutdown');
      },
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/** The operator's one-time Temporal setup: the namespace (registered unless it exists) and the
 * Keyword search attributes the payout workflow upserts. A namespace just registered reaches the
 * server's services one at a time (their namespace caches refresh every few seconds), so each step
 * is retried until it answers and the attributes are listed. */
export async function ensureNamespace(address: string, namespace: string, timeoutMs = 60_000): Promise<void> {
  const connection = await Connection.connect({ address });
  const deadline = Date.now() + timeoutMs;
  const retrying = async <T>(what: string, step: () => Promise<T>): Promise<T> => {
    for (;;) {
      try {
        return await step();
      } catch (err) {
        if (Date.now() > deadline) throw new Error(`Temporal namespace ${namespace}: ${what} still failing after ${timeoutMs} ms: ${(err as Error).message}`, { cause: err });
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  };
  try {
    const exists = await connection.workflowService.describeNamespace({ namespace }).then(() => true, () => false);
    if (!exists) {
      await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') }).catch((err: { code?: number }) => {
        if (err.code !== 6) throw err; // ALREADY_EXISTS: registered by someone else meanwhile
      });
    }
    const KEYWORD = proto.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
    await retrying('registering search attributes', async () => {
      const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
      const missing = SEARCH_ATTRIBUTES.filter((name) => !(customAttributes && name in customAttributes));
      if (missing.length === 0) return;
      await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: Object.fromEntries(missing.map((name) => [name, KEYWORD])) });
      throw new Error(`added ${missing.join(', ')}; checking they are listed`);
    });
    // The frontend knows the namespace for workflow and Schedule calls too.
    await retrying('listing Schedules', () => connection.workflowService.listSchedules({ namespace, maximumPageSize: 1 }));
  } finally {
    await connection.close();
  }
}

// ---------------------------------------------------------------------------------------------
// The load balancer.

export interface RoundRobinProxy {
  url: string;
  /** Requests answered by each upstream, in the order given. */
  served(): number[];
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'proxy-authorization', 'proxy-authenticate']);

function forwardableHeaders(headers: http.IncomingHttpHeaders | http.OutgoingHttpHeaders): http.OutgoingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([k, v]) => v !== undefined && !HOP_BY_HOP.has(k.toLowerCase())));
}

/** A round-robin HTTP reverse proxy standing in for the load balancer: each request goes to the
 * next upstream; one that refuses the connection (a stopped API) is skipped for the next. Bodies
 * are forwarded byte for byte (webhook signatures are over the raw body). */
export async function startRoundRobinProxy(opts: { upstreams: string[]; host?: string; port?: number }): Promise<RoundRobinProxy> {
  if (opts.upstreams.length === 0) throw new Error('a proxy needs at least one upstream');
  const upstreams = opts.upstreams.map((u) => new URL(u));
  const served = upstreams.map(() => 0);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  let next = 0;

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', () => res.destroy());
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const first = next++ % upstreams.length;
      const attempt = (tried: number) => {
        const index = (first + tried) % upstreams.length;
        const target = upstreams[index]!;
        const headers: http.OutgoingHttpHeaders = {
          ...forwardableHeaders(req.headers),
          host: target.host,
          'x-forwarded-for': req.socket.remoteAddress ?? '',
          'x-forwarded-host': req.headers.host ?? '',
          'x-forwarded-proto': 'http',
        };
        if (body.length > 0 || req.headers['content-length'] !== undefined) headers['content-length'] = String(body.length);
        const upstream = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers, agent }, (answer) => {
          served[index]! += 1;
          res.writeHead(answer.statusCode ?? 502, forwardableHeaders(answer.headers));
          answer.pipe(res);
          answer.on('error', () => res.destroy());
        });
        upstream.on('error', (err: NodeJS.ErrnoException) => {
          if (res.headersSent) return void res.destroy();
          // Nothing was sent to an upstream that refused the connection: the next one may take it.
          if (err.code === 'ECONNREFUSED' && tried + 1 < upstreams.length) return attempt(tried + 1);
          res.writeHead(502, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { code: 'bad_gateway', message: `upstream ${target.host}: ${err.message}` } }));
        });
        upstream.end(body);
      };
      attempt(0);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    served: () => [...served],
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
      agent.destroy();
    }),
  };
}

// ---------------------------------------------------------------------------------------------
// The sandbox's control routes over HTTP.

/** SandboxControl over the sandbox's HTTP control routes (src/sandbox/routes/control.ts). */
export function sandboxHttpControl(baseUrl: string): SandboxControl {
  async function call<T>(method: string, route: string, body?: unknown, query?: Record<string, string | undefined>): Promise<T> {
    const url = new URL(`/_sandbox${route}`, baseUrl);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, v);
    const res = await fetch(url, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) {
      let description = text;
      try { description = (JSON.parse(text) as { error?: { description?: string } }).error?.description ?? text; } catch { /* not JSON */ }
      throw new Error(`sandbox ${method} ${route} → ${res.status}: ${description}`);
    }
    if ((res.headers.get('content-type') ?? '').startsWith('text/csv')) return text as T;
    return (text ? JSON.parse(text) : undefined) as T;
  }
  const done = async (p: Promise<unknown>): Promise<void> => { await p; };
  return {
    createLinkedAccount: async (o: { id?: string; status?: LinkedAccountStatus; name?: string } = {}) => (await call<{ id: string }>('POST', '/linked-accounts', o)).id,
    setLinkedAccountStatus: (id, status) => done(call('PUT', `/linked-accounts/${encodeURIComponent(id)}/status`, { status })),
    setPlatformBalance: (paise) => done(call('PUT', '/balance', { paise })),
    setRateLimit: (settings) => done(call('PUT', '/rate-limit', settings)),
    platformBalance: async () => (await call<{ paise: number }>('GET', '/balance')).paise,
    payOrder: (orderId, o) => call<RzpPayment>('POST', `/orders/${encodeURIComponent(orderId)}/pay`, o ?? {}),
    failPayment: (orderId) => call<RzpPayment>('POST', `/orders/${encodeURIComponent(orderId)}/fail`, {}),
    lateAuthorize: (paymentId) => call<RzpPayment>('POST', `/payments/${encodeURIComponent(paymentId)}/late-authorize`, {}),
    capturedPaymentWithoutOrder: (amountPaise) => call<RzpPayment>('POST', '/orphan-payments', { amountPaise }),
    setWebhookTarget: (url) => done(call('PUT', '/webhooks/target', { url })),
    setWebhookDelivery: (enabled) => done(call('PUT', '/webhooks/delivery', { enabled })),
    injectWebhookFault: (fault: WebhookFault, o) => done(call('POST', '/webhooks/faults', { fault, ...o })),
    webhookEvents: () => call('GET', '/webhooks/events'),
    drainWebhooks: (timeoutMs) => done(call('POST', '/webhooks/drain', timeoutMs === undefined ? {} : { timeoutMs })),
    injectFault: (rule: FaultRule) => done(call('POST', '/faults', rule)),
    clearFaults: () => done(call('DELETE', '/faults')),
    callCounts: () => call<Record<string, number>>('GET', '/call-counts'),
    faultsFired: () => call<Record<string, number>>('GET', '/faults/fired'),
    transfers: (filter = {}) => call<RzpTransfer[]>('GET', '/transfers', undefined, { recipient: filter.recipient }),
    refunds: () => call<RzpRefund[]>('GET', '/refunds'),
    processPendingTransfers: (o = {}) => done(call('POST', '/transfers/process', o)),
    retryFailedTransfers: (o = {}) => call<RzpTransfer[]>('POST', '/transfers/retry-failed', o),
    reverseTransferFromDashboard: (transferId, o = {}) => call<RzpReversal>('POST', `/transfers/${encodeURIComponent(transferId)}/reverse`, o),
    now: async () => (await call<{ unixMs: number }>('GET', '/clock')).unixMs,
    setClock: (unixMs) => done(call('PUT', '/clock', { unixMs })),
    runSettlements: (o) => call<RzpSettlement[]>('POST', '/settlements/run', o),
    injectAdjustment: (o) => done(call('POST', '/adjustments', o)),
    putOnHold: (paymentId) => done(call('POST', `/payments/${encodeURIComponent(paymentId)}/hold`, {})),
    bankStatementCsv: (o) => call<string>('GET', '/bank-statement.csv', undefined, { from: o.from, to: o.to }),
    reset: () => done(call('POST', '/reset', {})),
  };
}

// ---------------------------------------------------------------------------------------------
// Scenario helpers: the API through the load balancer, as the ordering client, admin and ops call it.

export interface ApiAnswer { status: number; body: any } // eslint-disable-line @typescript-eslint/no-explicit-any

type Caller = Pick<Topology, 'proxyUrl' | 'keys'>;

/** One request through the load balancer with the key of `role` (X-Actor: topology). */
export async function callApi(t: Caller, role: TopologyRole, method: string, route: string, body?: unknown): Promise<ApiAnswer> {
  const res = await fetch(`${t.proxyUrl}${route}`, {
    method,
    headers: { authorization: `Bearer ${t.keys[role]}`, 'x-actor': 'topology', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = null;
  try { parsed = text ? JSON.parse(text) : null; } catch { parsed = text; }
  return { status: res.status, body: parsed };
}

/** callApi, failing unless the answer is 2xx. */
export async function callApiOk(t: Caller, role: TopologyRole, method: string, route: string, body?: unknown): Promise<ApiAnswer['body']> {
  const answer = await callApi(t, role, method, route, body);
  if (answer.status < 200 || answer.status >= 300) throw new Error(`${method} ${route} as ${role} → ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body;
}

async function until<T>(probe: () => Promise<T | null>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown = null;
  for (;;) {
    const value = await probe().catch((err: unknown) => { last = err; return null; });
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Employer, vendor (with the linked account) and their pair's terms, through the admin API. */
export async function seedPair(t: Caller, p: { employerId: string; vendorId: string; linkedAccountId: string | null; commissionBps: number; settlementMode?: string; payoutSchedule?: string }): Promise<void> {
  await callApiOk(t, 'admin', 'POST', '/v1/admin/employers', { id: p.employerId, name: p.employerId });
  await callApiOk(t, 'admin', 'POST', '/v1/admin/vendors', { id: p.vendorId, name: p.vendorId, linkedAccountId: p.linkedAccountId });
  await callApiOk(t, 'admin', 'PUT', `/v1/admin/employers/${p.employerId}/vendors/${p.vendorId}`, {
    settlementMode: p.settlementMode ?? 'platform_transfer', commissionBps: p.commissionBps, ...(p.payoutSchedule ? { payoutSchedule: p.payoutSchedule } : {}),
  });
}

async function walletBalance(t: Caller, employerId: string): Promise<number> {
  const answer = await callApi(t, 'ordering', 'GET', `/v1/wallets/employer/${employerId}`);
  if (answer.status === 404) return 0;
  if (answer.status !== 200) throw new Error(`GET wallet ${employerId} → ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.wallet.balancePaise as number;
}

/** Tops up an employer wallet the real way: a top-up order, the sandbox checkout, the webhook
 * through the load balancer; resolves once the balance shows it. */
export async function topUpEmployer(t: Caller & Pick<Topology, 'sandbox'>, employerId: string, amountPaise: number, timeoutMs = 30_000): Promise<number> {
  const before = await walletBalance(t, employerId);
  const { checkout } = await callApiOk(t, 'ordering', 'POST', `/v1/wallets/employer/${employerId}/top-ups`, { amountPaise });
  await t.sandbox.payOrder(checkout.orderId);
  return until(async () => { const b = await walletBalance(t, employerId); return b >= before + amountPaise ? b : null; }, timeoutMs, `top-up of ${employerId}`);
}

export interface PlacedOrder { order: OrderView; checkout: { keyId: string; orderId: string; amountPaise: number } | null }

/** POST /v1/orders as the ordering client (an online order unless told otherwise). */
export async function placeOrder(t: Caller, o: {
  clientReference: string; employerId: string; vendorId: string; employeeId?: string; totalPaise: number; subsidyPaise: number; paymentMethod?: 'online' | 'wallet' | 'cash';
}): Promise<PlacedOrder> {
  return callApiOk(t, 'ordering', 'POST', '/v1/orders', {
    clientReference: o.clientReference, employerId: o.employerId, vendorId: o.vendorId, employeeId: o.employeeId ?? 'employee-1',
    totalPaise: o.totalPaise, subsidyPaise: o.subsidyPaise, customerSharePaise: o.totalPaise - o.subsidyPaise, paymentMethod: o.paymentMethod ?? 'online',
  }) as Promise<PlacedOrder>;
}

export interface PayoutAnswer { status: string; lastCode: string | null; providerTransferId: string | null; attempts: number; [k: string]: unknown }

/** The ops view of an order's payout, or null while there is none. */
export async function payoutOf(t: Caller, orderId: string): Promise<PayoutAnswer | null> {
  const answer = await callApi(t, 'ops', 'GET', `/ops/payouts/${orderId}`);
  if (answer.status === 404) return null;
  if (answer.status !== 200) throw new Error(`GET /ops/payouts/${orderId} → ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.payout as PayoutAnswer;
}

/** Resolves with the payout once its status is one of `statuses`. */
export function waitForPayout(t: Caller, orderId: string, statuses: readonly string[], timeoutMs = 60_000): Promise<PayoutAnswer> {
  return until(async () => { const p = await payoutOf(t, orderId); return p && statuses.includes(p.status) ? p : null; }, timeoutMs, `payout of ${orderId} to be ${statuses.join(' or ')}`);
}

/** The smoke check: the 99%-subsidised ₹100 order end to end (checkout, webhook through the load
 * balancer, payout on a worker, transfer in the sandbox's ledger). */
export async function smokeOrder(t: Topology, log: (line: string) => void = () => undefined): Promise<{ orderId: string; transferId: string }> {
  const tag = randomBytes(3).toString('hex');
  const employerId = `emp_smoke_${tag}`;
  const vendorId = `ven_smoke_${tag}`;
  const account = await t.sandbox.createLinkedAccount({ name: 'Topology Smoke' });
  await seedPair(t, { employerId, vendorId, linkedAccountId: account, commissionBps: 1_900 });
  await topUpEmployer(t, employerId, 10_000);
  const { order, checkout } = await placeOrder(t, { clientReference: `smoke-${tag}`, employerId, vendorId, totalPaise: 10_000, subsidyPaise: 9_900 });
  if (!checkout) throw new Error(`order ${order.orderId} has no checkout`);
  await t.sandbox.payOrder(checkout.orderId);
  log(`smoke: order ${order.orderId} paid at checkout (₹${(order.customerSharePaise / 100).toFixed(2)}); waiting for the payout of ₹${(order.vendorNetPaise / 100).toFixed(2)}`);
  const payout = await waitForPayout(t, order.orderId, ['settled', 'parked', 'review'], 60_000);
  if (payout.status !== 'settled') throw new Error(`smoke: payout of ${order.orderId} is ${payout.status} (${payout.lastCode ?? 'no code'})`);
  const transfers = (await t.sandbox.transfers({ recipient: account })).filter((x) => x.status === 'processed');
  if (transfers.length !== 1 || transfers[0]!.amount !== order.vendorNetPaise) throw new Error(`smoke: the sandbox holds ${JSON.stringify(transfers.map((x) => [x.id, x.amount, x.status]))} for ${account}`);
  log(`smoke: payout settled — transfer ${transfers[0]!.id} of ₹${(transfers[0]!.amount / 100).toFixed(2)} to ${account}, agrees with the sandbox's ledger`);
  return { orderId: order.orderId, transferId: transfers[0]!.id };
}

// ---------------------------------------------------------------------------------------------
// npm run topology

/** A database URL fit for a terminal: the password masked, unless it is the embedded server's well-known one. */
function printableUrl(url: string): string {
  const u = new URL(url);
  if (u.password && u.password !== 'postgres') u.password = '****';
  return u.toString();
}

export function describeTopology(t: Topology): string {
  const lines = [
    `production topology up — logs in ${t.stateDir}`,
    `  load balancer   ${t.proxyUrl}  (round robin over ${t.apiUrls.join(', ')}; webhooks: ${t.proxyUrl}/webhooks/razorpay)`,
    ...t.apis.map((a) => `  ${a.name.padEnd(14)}  ${a.url}  pid ${a.pid}  (/health, /ready)`),
    ...t.workers.map((w) => `  ${w.name.padEnd(14)}  pid ${w.pid}  health ${w.healthUrl}/health, ${w.healthUrl}/ready`),
    `  sandbox         ${t.sandboxUrl}  pid ${t.sandboxProcess.pid}  (control: ${t.sandboxUrl}/_sandbox/…)`,
    `  Temporal        ${t.temporalAddress}  namespace ${t.namespace}, task queue ${t.taskQueue}${t.temporalUiUrl ? `, Web UI ${t.temporalUiUrl}` : ''}`,
    `  PostgreSQL      ${printableUrl(t.databaseUrl)}`,
    '  API keys (Authorization: Bearer …):',
    ...TOPOLOGY_ROLES.map((r) => `    ${r.padEnd(9)} ${t.keys[r]}`),
  ];
  return lines.join('\n');
}

/** The configuration of this shell that the CLI passes on (all but what the topology owns). */
function forwardedConfig(env: NodeJS.ProcessEnv): Record<string, string> {
  const keys = new Set(Object.keys(configSchema.shape));
  return withoutOwnedKeys(Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => keys.has(e[0]) && typeof e[1] === 'string' && e[1] !== '')));
}

async function main(argv: string[]): Promise<void> {
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const aborter = new AbortController();
  let topology: Topology | undefined;
  let exiting: Promise<void> | undefined;
  const stopAndExit = (t: Topology): Promise<void> => {
    exiting ??= t.stop().then(() => process.exit(0), (err: unknown) => {
      process.stderr.write(`stop failed: ${String(err)}\n`);
      process.exit(1);
    });
    return exiting;
  };
  const shutdown = (why: string) => {
    if (aborter.signal.aborted) return;
    out(`\n${why}: stopping every process of the topology`);
    aborter.abort();
    // During start-up, startTopology stops what it started once it sees the abort; main exits then.
    if (topology) void stopAndExit(topology);
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));

  const started = Date.now();
  try {
    topology = await startTopology({
      temporalAddress: process.env.TEMPORAL_ADDRESS || undefined,
      namespace: process.env.TEMPORAL_NAMESPACE || undefined,
      databaseUrl: process.env.DATABASE_URL || undefined,
      temporalUi: true,
      env: forwardedConfig(process.env),
      log: (line) => out(`topology: ${line}`),
      signal: aborter.signal,
    });
  } catch (err) {
    if (aborter.signal.aborted) process.exit(0); // everything it started is stopped already
    throw err;
  }
  if (aborter.signal.aborted) return stopAndExit(topology);
  out(`\n${describeTopology(topology)}\n  (up in ${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
  if (!argv.includes('--no-smoke')) {
    try {
      await smokeOrder(topology, out);
    } catch (err) {
      if (!aborter.signal.aborted) out(`smoke check FAILED: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  if (!aborter.signal.aborted) out('\nrunning; Ctrl-C (or SIGTERM) stops every process');
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    process.stderr.write(`topology failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exit(1);
  });
}
