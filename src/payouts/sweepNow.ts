/** Starting the payout sweep at once (a resume, a decision, the balance wall coming down), in a
 * module of its own that needs no workflow code, so activities can import it. */
import type { Client } from '@temporalio/client';
import { PAYOUT_SWEEP_SCHEDULE_ID, PAYOUT_SWEEP_WORKFLOW_TYPE } from '../contracts/sweep';

/** Runs the payout sweep now (resume of transfers): joins a sweep already running on resume for the
 * same task queue. (One id per task queue: deployments that share a Temporal namespace — test
 * stacks, one per file — must not join each other's sweep, which reads another database.) */
export async function startPayoutSweepNow(client: Client, taskQueue: string): Promise<string> {
  const handle = await client.workflow.start(PAYOUT_SWEEP_WORKFLOW_TYPE, {
    workflowId: `${PAYOUT_SWEEP_SCHEDULE_ID}-on-resume-${taskQueue}`,
    taskQueue,
    args: [{ batchSize: 100 }],
    workflowIdConflictPolicy: 'USE_EXISTING',
    workflowIdReusePolicy: 'ALLOW_DUPLICATE',
  });
  return handle.workflowId;
}
