/** A self-hosted Temporal cluster (issue 23, item 1): the server built from source at the CLI's own
 * server version (scripts/install-temporal-server.sh), persistence and visibility on PostgreSQL
 * (two databases of its own, schema applied by Temporal's SQL tool as an operator would), a few
 * history shards, and the frontend, history, matching and worker services as four separate
 * processes sharing one static config and one dynamic-config file; optionally the Web UI server
 * pointed at the frontend. Each process is a TopologyService, so faults address one service. */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { ensureDatabase } from './postgres';
import { freePort, freeSmallintPort, waitForPort } from './ports';
import { ensurePrivateDir, PRIVATE_FILE_MODE } from './privateFiles';
import { processService, type TopologyService } from './service';
import { runProcess, waitForHttp200, type ManagedProcess } from './topologyProcesses';

const run = promisify(execFile);

export const CLUSTER_SERVICES = ['history', 'matching', 'frontend', 'worker'] as const;
export type ClusterServiceName = (typeof CLUSTER_SERVICES)[number];

export interface TemporalServerInstall {
  dir: string;
  server: string;
  sqlTool: string;
  uiServer: string;
  /** <dir>/schema/postgresql/v12 */
  schemaDir: string;
}

/** Builds (first time) or finds the server, schema tool and UI server; TEMPORAL_SERVER_DIR overrides. */
export async function installTemporalServer(projectRoot: string): Promise<TemporalServerInstall> {
  let dir = process.env.TEMPORAL_SERVER_DIR;
  if (!dir) {
    const { stdout } = await run('bash', [path.join(projectRoot, 'scripts/install-temporal-server.sh')], { maxBuffer: 1 << 20 });
    dir = stdout.trim().split('\n').pop();
    if (!dir) throw new Error('install-temporal-server.sh printed no folder');
  }
  return {
    dir,
    server: path.join(dir, 'temporal-server'),
    sqlTool: path.join(dir, 'temporal-sql-tool'),
    uiServer: path.join(dir, 'temporal-ui-server'),
    schemaDir: path.join(dir, 'schema', 'postgresql', 'v12'),
  };
}

export interface ClusterOptions {
  install: TemporalServerInstall;
  /** The maintenance database's URL on the PostgreSQL server that holds the cluster's two databases. */
  adminUrl: string;
  /** Names `<prefix>` and `<prefix>_visibility` (created when missing). */
  databasePrefix: string;
  /** Config files go to `<stateDir>/temporal-cluster`, logs to `<stateDir>/temporal-<service>.log`. */
  stateDir: string;
  /** History shards (fixed for the cluster's life; default 4). */
  numHistoryShards?: number;
  ui?: boolean;
  readyTimeoutMs?: number;
  graceMs?: number;
  onSpawn?: (proc: ManagedProcess) => void;
  closed?: () => boolean;
  log?: (line: string) => void;
}

export interface TemporalCluster {
  /** The frontend's gRPC address: what the app's TEMPORAL_ADDRESS names. */
  address: string;
  uiUrl: string | null;
  services: Record<ClusterServiceName, TopologyService>;
  ui: TopologyService | null;
  persistenceDatabaseUrls: { temporal: string; visibility: string };
  /** The four services, then the UI. */
  all(): TopologyService[];
}

/** One partition per task queue, as the dev server is started (src/devstack/temporal.ts): the provider
 * budget's queue rate limit applies per partition. Search attributes visible at once, and the
 * persistence QPS raised to match, as the CLI's dev server does. */
export const CLUSTER_DYNAMIC_CONFIG: Readonly<Record<string, unknown>> = {
  'matching.numTaskqueueReadPartitions': 1,
  'matching.numTaskqueueWritePartitions': 1,
  'system.forceSearchAttributesCacheRefreshOnRead': true,
  'frontend.persistenceMaxQPS': 10_000,
  'history.persistenceMaxQPS': 45_000,
  'frontend.workerVersioningDataAPIs': true,
  'frontend.workerVersioningRuleAPIs': true,
  // Worker Versioning by deployment, for rolling deploys of workflow changes.
  'system.enableDeploymentVersions': true,
  'frontend.workerVersioningWorkflowAPIs': true,
};

interface Ports { grpc: number; membership: number; http?: number }

/** The server's static config. YAML is a superset of JSON, so it is written as JSON. */
export function clusterConfig(o: {
  db: { host: string; port: number; user: string; password: string; temporal: string; visibility: string };
  ports: Record<ClusterServiceName, Ports>;
  numHistoryShards: number;
  dynamicConfigFile: string;
}): Record<string, unknown> {
  const store = (databaseName: string, maxConns: number) => ({
    sql: {
      pluginName: 'postgres12', databaseName, connectAddr: `${o.db.host}:${o.db.port}`, connectProtocol: 'tcp',
      user: o.db.user, password: o.db.password, maxConns, maxIdleConns: maxConns, maxConnLifetime: '1h',
    },
  });
  const frontend = `127.0.0.1:${o.ports.frontend.grpc}`;
  const rpc = (p: Ports) => ({ rpc: { grpcPort: p.grpc, membershipPort: p.membership, bindOnLocalHost: true, ...(p.http ? { httpPort: p.http } : {}) } });
  return {
    log: { stdout: true, level: 'warn' },
    persistence: {
      defaultStore: 'default', visibilityStore: 'visibility', numHistoryShards: o.numHistoryShards,
      datastores: { default: store(o.db.temporal, 20), visibility: store(o.db.visibility, 4) },
    },
    global: { membership: { maxJoinDuration: '30s', broadcastAddress: '127.0.0.1' } },
    services: Object.fromEntries(CLUSTER_SERVICES.map((s) => [s, rpc(o.ports[s])])),
    clusterMetadata: {
      enableGlobalNamespace: false, failoverVersionIncrement: 10, masterClusterName: 'active', currentClusterName: 'active',
      clusterInformation: { active: { enabled: true, initialFailoverVersion: 1, rpcName: 'frontend', rpcAddress: frontend } },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    archival: { history: { state: 'disabled' }, visibility: { state: 'disabled' } },
    namespaceDefaults: { archival: { history: { state: 'disabled' }, visibility: { state: 'disabled' } } },
    publicClient: { hostPort: frontend },
    dynamicConfigClient: { filepath: o.dynamicConfigFile, pollInterval: '10s' },
  };
}

/** The dynamic-config file's format: every key a list of constrained values. */
export function dynamicConfigFile(values: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values).map(([k, value]) => [k, [{ value, constraints: {} }]]));
}

/** Resolves once `port` accepts connections; fails at once if `proc` exits, or on the deadline. */
async function listening(proc: ManagedProcess, port: number, timeoutMs: number): Promise<void> {
  await waitForPort('127.0.0.1', port, timeoutMs, () => {
    if (!proc.running) throw proc.failure(`exited (code ${proc.exitInfo?.code}, signal ${proc.exitInfo?.signal}) before listening on ${port}`);
  }).catch((err: unknown) => { throw proc.running ? proc.failure((err as Error).message) : err; });
}

function writePrivateJson(file: string, value: unknown): void {
  fs.writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`, { mode: PRIVATE_FILE_MODE });
}

/** Creates the databases, applies the schema, writes the config and starts every service. */
export async function startTemporalCluster(opts: ClusterOptions): Promise<TemporalCluster> {
  const readyTimeoutMs = opts.readyTimeoutMs ?? 120_000;
  const graceMs = opts.graceMs ?? 10_000;
  const log = opts.log ?? (() => undefined);
  const admin = new URL(opts.adminUrl);
  const names = { temporal: opts.databasePrefix, visibility: `${opts.databasePrefix}_visibility` };
  const persistenceDatabaseUrls = {
    temporal: await ensureDatabase(opts.adminUrl, names.temporal),
    visibility: await ensureDatabase(opts.adminUrl, names.visibility),
  };
  const db = {
    host: admin.hostname, port: Number(admin.port || 5432), user: decodeURIComponent(admin.username), password: decodeURIComponent(admin.password),
    ...names,
  };
  const dir = path.join(opts.stateDir, 'temporal-cluster');
  ensurePrivateDir(path.join(dir, 'config'));

  // The schema, as an operator applies it: the versioning tables, then every versioned step.
  const sqlTool = (name: string, database: string, args: string[]) => runProcess({
    name, command: opts.install.sqlTool, cwd: dir, logDir: opts.stateDir,
    args: ['--plugin', 'postgres12', '--ep', db.host, '--port', String(db.port), '--user', db.user, '--db', database, ...args],
    env: { ...process.env, SQL_PASSWORD: db.password },
  }, 120_000, opts.onSpawn);
  for (const [kind, database] of [['temporal', names.temporal], ['visibility', names.visibility]] as const) {
    log(`applying Temporal's ${kind} schema to ${database}`);
    await sqlTool(`temporal-schema-${kind}`, database, ['setup-schema', '-v', '0.0']);
    await sqlTool(`temporal-schema-${kind}`, database, ['update-schema', '-d', path.join(opts.install.schemaDir, kind, 'versioned')]);
  }

  const ports = {} as Record<ClusterServiceName, Ports>;
  for (const s of CLUSTER_SERVICES) ports[s] = { grpc: await freePort(), membership: await freeSmallintPort(), ...(s === 'frontend' ? { http: await freePort() } : {}) };
  const dynamicConfigPath = path.join(dir, 'dynamicconfig.yaml');
  writePrivateJson(dynamicConfigPath, dynamicConfigFile(CLUSTER_DYNAMIC_CONFIG));
  writePrivateJson(path.join(dir, 'config', 'development.yaml'), clusterConfig({ db, ports, numHistoryShards: opts.numHistoryShards ?? 4, dynamicConfigFile: dynamicConfigPath }));

  const address = `127.0.0.1:${ports.frontend.grpc}`;
  const services = Object.fromEntries(CLUSTER_SERVICES.map((s) => [s, processService({
    spec: {
      name: `temporal-${s}`, command: opts.install.server, cwd: dir, logDir: opts.stateDir, env: { ...process.env },
      args: ['--root', dir, '--config', 'config', '--env', 'development', 'start', '--service', s],
    },
    // The worker service serves no gRPC (it is a client of the frontend): it is up once it has joined
    // the membership ring.
    ready: (proc) => listening(proc, s === 'worker' ? ports[s].membership : ports[s].grpc, readyTimeoutMs),
    graceMs, onSpawn: opts.onSpawn, closed: opts.closed, log,
  })])) as Record<ClusterServiceName, TopologyService>;

  let ui: TopologyService | null = null;
  let uiUrl: string | null = null;
  if (opts.ui) {
    const uiDir = path.join(dir, 'ui');
    ensurePrivateDir(path.join(uiDir, 'config'));
    const port = await freePort();
    uiUrl = `http://127.0.0.1:${port}`;
    writePrivateJson(path.join(uiDir, 'config', 'development.yaml'), {
      temporalGrpcAddress: address, host: '127.0.0.1', port, enableUi: true, defaultNamespace: 'default',
      cors: { cookieInsecure: true, allowOrigins: [uiUrl] }, auth: { enabled: false },
    });
    ui = processService({
      spec: { name: 'temporal-ui', command: opts.install.uiServer, cwd: uiDir, logDir: opts.stateDir, env: { ...process.env }, args: ['--root', uiDir, '--config', 'config', '--env', 'development', 'start'] },
      ready: (proc) => waitForHttp200(`${uiUrl}/`, { process: proc, timeoutMs: readyTimeoutMs }),
      graceMs, onSpawn: opts.onSpawn, closed: opts.closed, log,
    });
  }

  log(`starting the Temporal cluster: ${CLUSTER_SERVICES.join(', ')} (${opts.numHistoryShards ?? 4} history shards)`);
  // The first service to start writes the cluster's metadata row; two writing it at once on a new
  // database fail ("failed to initialize current cluster metadata"): one first, then the rest.
  await services.history.start();
  await Promise.all(CLUSTER_SERVICES.filter((s) => s !== 'history').map((s) => services[s].start()));
  if (ui) await ui.start();
  return {
    address, uiUrl, services, ui, persistenceDatabaseUrls,
    all: () => [...CLUSTER_SERVICES.map((s) => services[s]), ...(ui ? [ui] : [])],
  };
}
