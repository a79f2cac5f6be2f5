/** The Temporal worker: serves every workflow in src/workflows and every activity built by
 * createActivities. `npm run worker` runs it alone; the stack and the tests build it in-process. */
import { bundleWorkflowCode, Worker, type NativeConnection, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { installRuntime, sdkLogger } from './temporal/runtime';
import { loadConfig } from './config/config';
import { createPool } from './db/pool';
import { createActivities, type ActivityDeps } from './activities';
import { connectClient, connectWorker } from './temporal/connection';
import { logger } from './logger';
import { productionDeps } from './wiring';

export const WORKFLOWS_PATH = require.resolve('./workflows');

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;
/** Bundles the workflow code once per process (about 1.5 s; webpack). */
export function workflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  bundle ??= bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: sdkLogger() });
  return bundle;
}

export async function createWorker(opts: { connection: NativeConnection; namespace: string; taskQueue: string; deps: ActivityDeps }): Promise<Worker> {
  installRuntime();
  return Worker.create({
    connection: opts.connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    workflowBundle: await workflowBundle(),
    activities: createActivities(opts.deps),
    // Two cores: keep concurrency modest and predictable.
    maxConcurrentActivityTaskExecutions: 20,
    maxConcurrentWorkflowTaskExecutions: 20,
  });
}

async function main(): Promise<void> {
  const config = loadConfig();
  if (!config.DATABASE_URL) throw new Error('DATABASE_URL is required to run the worker alone (npm run dev starts everything)');
  const db = createPool(config.DATABASE_URL);
  const connection = await connectWorker(config);
  const client = await connectClient(config);
  const worker = await createWorker({ connection, namespace: config.TEMPORAL_NAMESPACE, taskQueue: config.TEMPORAL_TASK_QUEUE, deps: productionDeps(config, db, client).activities });
  logger.info({ taskQueue: config.TEMPORAL_TASK_QUEUE }, 'worker started');
  await worker.run();
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
