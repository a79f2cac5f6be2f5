/** The Temporal worker: serves every workflow in src/workflows and every activity built by
 * createActivities. `npm run worker` runs it alone (owning the Schedules, with /health and /ready
 * on WORKER_HEALTH_PORT); the stack and the tests build it in-process. */
import type { Client } from '@temporalio/client';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import { bundleWorkflowCode, Worker, type NativeConnection, type State, type WorkerOptions, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { providerTaskQueue } from './contracts/taskQueues';
import { installRuntime, sdkLogger, sdkMetricsUrl } from './temporal/runtime';
import { createPayoutMetrics } from './observability/metrics';
import { loadConfig, type Config } from './config/config';
import { createPool, poolOptionsFrom, type Db } from './db/pool';
import { createActivities } from './activities';
import type { ActivityDeps } from './activities/deps';
import { logger } from './logger';
import { startHealthServer } from './observability/healthServer';
import { readiness } from './observability/readiness';
import { watchSchedules } from './observability/scheduleWatch';
import { lowerCpuPriority } from './startup/cpuPriority';
import { connectClientWithRetry, connectWorkerWithRetry, waitForDatabase } from './startup/retry';
import { ensureSchedules, productionDeps, SCHEDULE_IDS } from './wiring';
import { startPacingFrom } from './outbox/drainer';
import { startWorkerPollers } from './startup/pollers';
import { whileServerSettles } from './temporal/whileServerSettles';
import { tracedWorkerOptions, WORKFLOW_TRACING_MODULE } from './temporal/tracing';
import { startTracing, tracingNow } from './observability/tracing';

export const WORKFLOWS_PATH = require.resolve('./workflows');

const bundles = new Map<boolean, Promise<WorkflowBundleWithSourceMap>>();
/** Bundles the workflow code once per process (about 1.5 s; webpack); `traced` (by default: when
 * this process traces) adds the OpenTelemetry workflow interceptors. Off, they are left out: their
 * spans would be built and handed across the sandbox for nothing (bench:peak's worker peaked at
 * 1,061 MB with them, against about 630 MB without). */
export function workflowBundle(opts: { traced?: boolean } = {}): Promise<WorkflowBundleWithSourceMap> {
  const traced = opts.traced ?? tracingNow().enabled;
  let bundle = bundles.get(traced);
  if (!bundle) {
    bundle = bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, ...(traced ? { workflowInterceptorModules: [WORKFLOW_TRACING_MODULE] } : {}), logger: sdkLogger() });
    bundles.set(traced, bundle);
  }
  return bundle;
}

/** What a replay needs beside its histories: the production bundle, traced or not, with the sinks
 * its workflow code then calls. */
export async function replayOptions(opts: { traced: boolean }): Promise<{ workflowBundle: WorkflowBundleWithSourceMap } & Pick<WorkerOptions, 'sinks' | 'interceptors'>> {
  return { workflowBundle: await workflowBundle(opts), ...tracedWorkerOptions(opts.traced) };
}

/** The workers of one process: the workflow task queue's, and one per provider call class on its
 * rate-limited queue (src/contracts/taskQueues.ts). Run, stopped and watched as one. */
export interface PayoutWorkers {
  run(): Promise<void>;
  shutdown(): void;
  /** The workflow worker's state, or FAILED once any of the set has failed. */
  getState(): State;
}

export async function createWorker(opts: { connection: NativeConnection; namespace: string; taskQueue: string; deps: ActivityDeps }): Promise<PayoutWorkers> {
  installRuntime();
  const { WORKER_DEPLOYMENT_NAME: deploymentName, WORKER_BUILD_ID: buildId } = opts.deps.config;
  return createPayoutWorkers({
    ...opts, activities: createActivities(opts.deps), budget: opts.deps.config,
    ...(deploymentName && buildId ? { version: { deploymentName, buildId } } : {}),
  });
}

export interface PayoutWorkersOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  activities: object;
  budget: Pick<Config, 'RAZORPAY_WRITE_RPS' | 'RAZORPAY_READ_RPS'>;
  /** Another set of workflows (the payout bench's); the app's by default. */
  workflowBundle?: WorkflowBundleWithSourceMap;
  /** A versioned worker: this deployment version (every queue of the set joins it). */
  version?: WorkerDeploymentVersion;
}

/** AUTO_UPGRADE, not PINNED: a payout waits for its settlement for hours or days, and a pinned run
 * would keep its build's workers up until it ends. Its run moves to the current version at its next
 * task and replays there through the old branch of every `patched()` (the replay test proves the
 * recorded histories); versioning's part is that once the new version is current no old worker
 * gets a task, so no old worker ever replays a history a new one wrote (with `patched()` alone, in
 * a mixed fleet, that is a nondeterminism error). */
function deploymentOptions(version: WorkerDeploymentVersion | undefined): Pick<WorkerOptions, 'workerDeploymentOptions'> {
  return version ? { workerDeploymentOptions: { version, useWorkerVersioning: true, defaultVersioningBehavior: 'AUTO_UPGRADE' } } : {};
}

/** The worker set with the production settings, for given activities (a test's wrapped ones, a bench's). */
export async function createPayoutWorkers(opts: PayoutWorkersOptions): Promise<PayoutWorkers> {
  const common = { connection: opts.connection, namespace: opts.namespace, activities: opts.activities, ...deploymentOptions(opts.version), ...tracedWorkerOptions(tracingNow().enabled) };
  const main = await Worker.create({
    ...common,
    taskQueue: opts.taskQueue,
    workflowBundle: opts.workflowBundle ?? await workflowBundle(),
    // Two cores: keep concurrency modest and predictable.
    maxConcurrentActivityTaskExecutions: 20,
    maxConcurrentWorkflowTaskExecutions: 20,
  });
  // Activity-only workers for the provider budget: the rate is enforced by the server for the whole
  // task queue, whichever worker polls; each worker sets the same configured value.
  const budgets = await Promise.all((['writes', 'reads'] as const).map((callClass) => Worker.create({
    ...common,
    taskQueue: providerTaskQueue(opts.taskQueue, callClass),
    maxTaskQueueActivitiesPerSecond: callClass === 'writes' ? opts.budget.RAZORPAY_WRITE_RPS : opts.budget.RAZORPAY_READ_RPS,
    maxConcurrentActivityTaskExecutions: 20,
  })));
  const all = [main, ...budgets];
  const shutdown = () => { for (const w of all) if (w.getState() === 'RUNNING') w.shutdown(); };
  return {
    shutdown,
    getState: () => (all.some((w) => w.getState() === 'FAILED') ? 'FAILED' : main.getState()),
    // One stopping stops the others (the SDK stops each on SIGINT/SIGTERM by itself too).
    run: async () => {
      const runs = all.map((w) => w.run().finally(shutdown));
      const results = await Promise.allSettled(runs);
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    },
  };
}

/** The production worker's boot, shared with `npm run dev`: ensures the Schedules (unless
 * WORKER_SCHEDULES=off), then builds the worker. */
export async function bootProductionWorker(opts: { config: Config; db: Db; client: Client; connection: NativeConnection }): Promise<PayoutWorkers> {
  const { config } = opts;
  if (config.WORKER_SCHEDULES === 'on') {
    const schedules = await whileServerSettles(() => ensureSchedules(opts.client, config), {
      onRetry: (err) => logger.warn({ err }, 'Temporal is not ready for the Schedules yet; trying again'),
    });
    logger.info({ schedules }, 'schedules ensured');
  }
  return createWorker({ connection: opts.connection, namespace: config.TEMPORAL_NAMESPACE, taskQueue: config.TEMPORAL_TASK_QUEUE, deps: productionDeps(config, opts.db, opts.client).activities });
}

async function main(): Promise<void> {
  const config = loadConfig(process.env, { refuseSampleSecrets: true });
  if (!config.DATABASE_URL) throw new Error('DATABASE_URL is required to run the worker alone (npm run dev starts everything)');
  // Before the SDK's runtime starts its threads, so they inherit it.
  if (config.WORKER_CPU_NICE > 0) logger.info({ nice: config.WORKER_CPU_NICE, threads: lowerCpuPriority(config.WORKER_CPU_NICE) }, 'worker CPU priority lowered');
  const tracing = startTracing('payouts-worker', config.TRACES_OTLP_URL);
  const db = createPool(config.DATABASE_URL, poolOptionsFrom(config));
  await waitForDatabase(db, config, logger);
  const connection = await connectWorkerWithRetry(config, logger);
  const client = await connectClientWithRetry(config, logger);
  const worker = await bootProductionWorker({ config, db, client, connection });
  // Payout starts the API committed in its webhook transaction (the outbox), started after the reply.
  // The same gateway and payout starter the wiring gives the activities (wiring.ts).
  const { gateway, payoutStarter } = productionDeps(config, db, client).activities;
  const drainer = startWorkerPollers({
    db, gateway, payoutStarter: payoutStarter!,
    attemptCap: config.PAYOUT_ATTEMPT_CAP, pacing: startPacingFrom(config),
  });
  const ownsSchedules = config.WORKER_SCHEDULES === 'on';
  // Start-up has just ensured every Schedule, so a slow describe right after a restart is no doubt.
  const schedules = watchSchedules(client, SCHEDULE_IDS, ownsSchedules ? { seenAt: Date.now() } : {});
  const metrics = createPayoutMetrics({ db, schedules, sdkMetricsUrl, budget: config });
  const health = await startHealthServer({
    metrics: () => metrics.render(),
    host: config.HTTP_HOST,
    port: config.WORKER_HEALTH_PORT,
    readiness: () => readiness({
      db, temporal: client,
      ...(ownsSchedules ? { schedules } : {}),
      extra: () => ({ worker: { ok: worker.getState() === 'RUNNING', detail: worker.getState() } }),
    }),
  });
  logger.info({ taskQueue: config.TEMPORAL_TASK_QUEUE, healthPort: health.port, deployment: config.WORKER_DEPLOYMENT_NAME ?? null, buildId: config.WORKER_BUILD_ID ?? null }, 'worker started');
  // The SDK stops the worker on SIGINT/SIGTERM by itself (graceful: running activities finish).
  await worker.run();
  await drainer.stop();
  await tracing.shutdown();
  await health.close();
  await db.end();
  await client.connection.close();
  await connection.close();
}

if (require.main === module) {
  main().catch((err) => {
    logger.fatal({ err }, 'worker failed');
    process.exit(1);
  });
}
