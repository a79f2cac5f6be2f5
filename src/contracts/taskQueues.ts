/** The task queues of the provider budget (issue 22). Every activity that calls Razorpay runs on a
 * queue of its call class beside the workflow's own, and the workers polling it set Temporal's
 * task-queue rate limit (maxTaskQueueActivitiesPerSecond) to the class's budget: the server's limit,
 * so it holds across any number of workers. The names derive from the workflow's task queue, so
 * deployments (and test stacks) that share a namespace keep separate budgets. */
export type ProviderCallClass = 'writes' | 'reads';

const SUFFIX: Record<ProviderCallClass, string> = { writes: '-razorpay-writes', reads: '-razorpay-reads' };

export function providerTaskQueue(workflowTaskQueue: string, callClass: ProviderCallClass): string {
  return `${workflowTaskQueue}${SUFFIX[callClass]}`;
}

/** The workflow task queue a provider queue belongs to (a name that is not one is its own). */
export function workflowTaskQueueOf(taskQueue: string): string {
  for (const suffix of Object.values(SUFFIX)) {
    if (taskQueue.endsWith(suffix)) return taskQueue.slice(0, -suffix.length);
  }
  return taskQueue;
}
