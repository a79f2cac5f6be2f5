/** The shape of a running topology (src/devstack/topology.ts), apart from how it is started, so
 * that scenario helpers, the campaign and the tests depend on it and not on the start-up code. */
import type { SandboxControl } from '../sandbox/control';
import type { FailoverReport } from './postgresReplication';
import type { TopologyService } from './service';
import type { TemporalCluster } from './temporalCluster';
import type { TopologyRole } from './topologyEnv';

export type TemporalKind = 'dev' | 'cluster';

export interface TopologyOptions {
  /** Where logs (and an embedded PostgreSQL's data) go; default `.data/topology/<timestamp>`. */
  stateDir?: string;
  /** An existing Temporal server (host:port); when absent one is started (and stopped): see `temporal`. */
  temporalAddress?: string;
  /** The Temporal server started when no address is given: the CLI's dev server (one process,
   * SQLite; the default), or a self-hosted cluster (four services, persistence and visibility on
   * this topology's PostgreSQL server in databases of its own; src/devstack/temporalCluster.ts). */
  temporal?: TemporalKind;
  /** With a Temporal server of our own: serve the Web UI on a free port. */
  temporalUi?: boolean;
  /** Any URL on an existing PostgreSQL server: a fresh database is created there. When absent an
   * embedded PostgreSQL is started (and stopped, its data removed). */
  databaseUrl?: string;
  /** The embedded PostgreSQL (no databaseUrl): one server (the default), or a primary with a
   * synchronous streaming replica behind one address (src/devstack/postgresReplication.ts), which
   * failoverPostgres() fails over. Either way every client, a cluster's persistence included, uses
   * that one address. */
  postgres?: 'single' | 'replicated';
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
  /** Versioned workers (Worker Versioning, a deployment of this topology's own): the workers start
   * as this build (from its checkout) and it is made current; deployWorkers() rolls them to another. */
  workerBuild?: WorkerBuild;
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

export interface TopologyApi extends TopologyService {
  /** Its own address (GET /health, GET /ready); the load balancer's upstream. */
  readonly url: string;
}

export interface TopologyWorker extends TopologyService {
  /** http://127.0.0.1:<WORKER_HEALTH_PORT> (GET /health, GET /ready); the same across restarts. */
  readonly healthUrl: string;
  /** The Temporal worker identity, `<pid>@<hostname>` (what a pending activity's lastWorkerIdentity names). */
  readonly identity: string;
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
  sandboxProcess: TopologyService;
  workers: TopologyWorker[];
  /** Bearer credentials minted by `src/cli/keys.ts`, one per role. */
  keys: Record<TopologyRole, string>;
  databaseUrl: string;
  temporalAddress: string;
  temporalUiUrl: string | null;
  /** The self-hosted cluster's services (temporal: 'cluster'), else null. */
  temporalCluster: TemporalCluster | null;
  namespace: string;
  taskQueue: string;
  /** Requests the load balancer handed to each API (same order as apiUrls). */
  proxyServed(): number[];
  /** Every long-running process (sandbox, APIs, workers, and a cluster's services) as it is now. */
  processes(): TopologyService[];
  /** Stops the Temporal server this topology started and starts it again on the same ports and
   * state (a dev server's SQLite file with durableServers; a cluster's services one by one, its
   * state is in PostgreSQL); resolves once it answers. */
  restartTemporal(): Promise<void>;
  /** An immediate shutdown of the embedded PostgreSQL (no checkpoint), then a start on the same
   * port and data directory (crash recovery); resolves once it accepts connections. A cluster's
   * persistence is on the same server: it goes through the crash too. */
  crashAndRestartPostgres(): Promise<void>;
  /** The workers' Worker Versioning deployment (workerBuild), else null. */
  workerDeployment: string | null;
  /** A rolling deploy (src/devstack/rollingDeploy.ts): each worker replaced in turn by one of
   * `build`, which is made current once its first worker polls; `workers` then holds the new ones. */
  deployWorkers(build: WorkerBuild): Promise<DeployReport>;
  /** postgres: 'replicated': the primary stops at once, the replica is promoted, the one address is
   * re-pointed (connections cut), and a new replica is built and synchronous again. */
  failoverPostgres(): Promise<FailoverReport>;
  /** Stops everything this topology started; idempotent. */
  stop(): Promise<void>;
}

/** A build of the workers, for a rolling deploy (src/devstack/rollingDeploy.ts). */
export interface WorkerBuild {
  /** The Worker Versioning build id (e.g. a commit). */
  buildId: string;
  /** The checkout its code runs from (default: this project). */
  projectRoot?: string;
}

export interface DeployReport {
  buildId: string;
  replaced: Array<{ worker: string; oldPid: number; newPid: number }>;
  /** From the start of the deploy to the new build being current. */
  currentAfterMs: number;
  tookMs: number;
}
