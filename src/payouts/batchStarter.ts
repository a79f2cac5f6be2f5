/** Starts a batch's run with signal-with-start (issue 22 item 4): every order that joins sends
 * `batchOrderJoined`, and the first one starts the run; a run that exists just hears the signal. A
 * batch whose run has completed is paid already (or decided by ops): nothing is started again. */
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { PAYOUT_BATCH_START_POLICIES, PAYOUT_BATCH_WORKFLOW_TYPE, batchOrderJoinedSignal, closeBatchNowSignal, payoutBatchWorkflowId, type PayoutBatchWorkflowInput } from '../contracts/payoutBatch';
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

export async function startBatchRun(client: Client, taskQueue: string, batch: PayoutBatchWorkflowInput, joinedOrderId: string | null): Promise<'running' | 'closed'> {
  try {
    await client.workflow.signalWithStart(PAYOUT_BATCH_WORKFLOW_TYPE, {
      ...batchStartOptions(taskQueue, batch),
      signal: batchOrderJoinedSignal,
      signalArgs: [{ orderId: joinedOrderId ?? '' }],
    });
    return 'running';
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return 'closed';
    throw err;
  }
}

/** Ops close an open batch now: its run (started here if it was lost) closes and pays it. */
export async function signalCloseBatchNow(client: Client, taskQueue: string, batch: { batchId: string; cutoffAt: string }, actor: string): Promise<void> {
  await client.workflow.signalWithStart(PAYOUT_BATCH_WORKFLOW_TYPE, {
    ...batchStartOptions(taskQueue, { batchId: batch.batchId, cutoffAt: batch.cutoffAt }),
    signal: closeBatchNowSignal,
    signalArgs: [{ actor }],
  });
}
