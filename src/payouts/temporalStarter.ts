/** The Temporal-backed PayoutStarter: starts payoutWorkflow `payout-<orderId>` with the agreed
 * policies. Money in calls it after commit, the sweep for every due payout, the ops route to revive a
 * human-queue run; starting the same payout many times at once yields one run. */
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { PAYOUT_START_POLICIES, PAYOUT_WORKFLOW_TYPE, payoutWorkflowId, type PayoutWorkflowInput } from '../contracts/payout';
import { OrderIdAttr } from '../contracts/searchAttributes';
import { PAYOUT_SWEEP_SCHEDULE_ID, PAYOUT_SWEEP_WORKFLOW_TYPE } from '../contracts/sweep';
import type { payoutWorkflow } from '../workflows/payout';
import type { PayoutStarter } from './starter';

export function payoutStartOptions(taskQueue: string, orderId: string) {
  const args: [PayoutWorkflowInput] = [{ orderId }];
  return {
    workflowId: payoutWorkflowId(orderId),
    taskQueue,
    args,
    ...PAYOUT_START_POLICIES,
    typedSearchAttributes: [{ key: OrderIdAttr, value: orderId }],
  };
}

/** Returns 'closed' when a completed run already exists (the payout row's status is the lasting guard). */
export async function startPayoutWorkflow(client: Client, taskQueue: string, orderId: string): Promise<'running' | 'closed'> {
  try {
    await client.workflow.start<typeof payoutWorkflow>(PAYOUT_WORKFLOW_TYPE, payoutStartOptions(taskQueue, orderId));
    return 'running';
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return 'closed';
    throw err;
  }
}

export function temporalPayoutStarter(client: Client, taskQueue: string): PayoutStarter {
  return {
    async startPayout(orderId: string): Promise<void> {
      await startPayoutWorkflow(client, taskQueue, orderId);
    },
  };
}

/** Runs the payout sweep now (resume of transfers): joins a sweep already running on resume. */
export async function startPayoutSweepNow(client: Client, taskQueue: string): Promise<string> {
  const handle = await client.workflow.start(PAYOUT_SWEEP_WORKFLOW_TYPE, {
    workflowId: `${PAYOUT_SWEEP_SCHEDULE_ID}-on-resume`,
    taskQueue,
    args: [{ batchSize: 100 }],
    workflowIdConflictPolicy: 'USE_EXISTING',
    workflowIdReusePolicy: 'ALLOW_DUPLICATE',
  });
  return handle.workflowId;
}
