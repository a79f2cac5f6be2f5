/** Temporal for integration tests: a client and an in-process worker on the shared dev server, each
 * test file on its own task queue. */
import { tracedClientInterceptors } from '../../src/temporal/tracing';
import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { connectWorker } from '../../src/temporal/connection';
import { createWorker, type PayoutWorkers } from '../../src/worker';
import type { ActivityDeps } from '../../src/activities/deps';
import { testServices } from './db';

export interface TestTemporal {
  client: Client;
  taskQueue: string;
  worker: PayoutWorkers;
  /** Resolves when the worker has stopped. */
  running: Promise<void>;
  close(): Promise<void>;
}

/** Each activity type a run scheduled, with the task queues it was scheduled on (sorted, unique). */
export async function activityTaskQueues(client: Client, workflowId: string): Promise<Record<string, string[]>> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const queues: Record<string, Set<string>> = {};
  for (const e of history.events ?? []) {
    const a = e.activityTaskScheduledEventAttributes;
    if (a?.activityType?.name && a.taskQueue?.name) (queues[a.activityType.name] ??= new Set()).add(a.taskQueue.name);
  }
  return Object.fromEntries(Object.entries(queues).map(([type, set]) => [type, [...set].sort()]));
}

export async function startTestWorker(deps: ActivityDeps, taskQueue = `tq-${randomBytes(4).toString('hex')}`): Promise<TestTemporal> {
  const address = testServices().temporalAddress;
  const connection = await Connection.connect({ address });
  const client = new Client({ connection, namespace: 'default', interceptors: tracedClientInterceptors() });
  const workerConnection = await connectWorker({ TEMPORAL_ADDRESS: address });
  const worker = await createWorker({ connection: workerConnection, namespace: 'default', taskQueue, deps });
  const running = worker.run();
  return {
    client,
    taskQueue,
    worker,
    running,
    async close() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
      await workerConnection.close();
      await connection.close();
    },
  };
}
