/** Starts a batch's run (issue 22 item 4; issue 36 item 5). Joins are rows (payout_batch_orders), not
 * signals: every joiner makes sure the run exists with a plain start that uses the running one
 * (USE_EXISTING), which writes nothing to that run's history, so the run stays the same size with
 * 5 members or 60,000 (Temporal Cloud takes 10,000 signals per execution; any server ends a history
 * at 51,200 events). The first joiner's start creates it; the close sums the rows. A batch whose run
 * has completed is paid already (or decided by ops): nothing is started again. */
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { PAYOUT_BATCH_START_POLICIES, PAYOUT_BATCH_WORKFLOW_TYPE, closeBatchNowSignal, payoutBatchWorkflowId, type PayoutBatchWorkflowInput } from '../contracts/payoutBatch';
import { OrderIdAttr } from '../contracts/searchAttributes';

function batchStartOptions(taskQueue: string, batch: PayoutBatchWorkflowInput) {
  return {
    workflowId: payoutBatchWorkflowId(batch.batchId),
    taskQueue,
    args: [batch] as [PayoutBatchWorkflowInput],
    ...PAYOUT_BATCH_START_POLICIES,
    // The batch id is the payout key the ops surfaces search by, as an order id is for an order's run.
    typedSearchAttributes: [{ key: OrderIdAttr, value: batch.batchId }],
    staticSummary: `Batch ${batch.batchId}: closes at ${batch.cutoffAt}`,
    staticDetails: 'One transfer for the sum of the orders in this window; see the current details for its state.',
  };
}

/** 'running': the run was started or was already running; 'closed': it has completed. Idempotent and
 * free for the run: call it after every join, and from the sweep for a batch that lost its run. */
export async function startBatchRun(client: Client, taskQueue: string, batch: PayoutBatchWorkflowInput): Promise<'running' | 'closed'> {
  try {
    await client.workflow.start(PAYOUT_BATCH_WORKFLOW_TYPE, batchStartOptions(taskQueue, batch));
    return 'running';
  } catch (err) {
    // USE_EXISTING answers a running run without an error: this is a completed one the reuse policy keeps.
    if (err instanceof WorkflowExecutionAlreadyStartedError) return 'closed';
    throw err;
  }
}

/** Ops close an open batch now: its run (started here if it was lost) closes and pays it. One signal
 * per decision by a person, never one per member. */
export async function signalCloseBatchNow(client: Client, taskQueue: string, batch: { batchId: string; cutoffAt: string }, actor: string): Promise<void> {
  await client.workflow.signalWithStart(PAYOUT_BATCH_WORKFLOW_TYPE, {
    ...batchStartOptions(taskQueue, { batchId: batch.batchId, cutoffAt: batch.cutoffAt }),
    signal: closeBatchNowSignal,
    signalArgs: [{ actor }],
  });
}
