/** The Temporal-backed PayoutStarter: starts payoutWorkflow `payout-<orderId>` with the agreed
 * policies. Money in calls it after commit, the sweep for every due payout, the ops route to revive a
 * human-queue run; starting the same payout many times at once yields one run. */
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { PAYOUT_START_POLICIES, PAYOUT_WORKFLOW_TYPE, payoutWorkflowId, transfersResumedSignal, type PayoutWorkflowInput } from '../contracts/payout';
import { payoutStartDetails, payoutSummary, type TraceLinks } from '../contracts/payoutText';
import { currentTraceId } from '../observability/tracing';
import { OrderIdAttr } from '../contracts/searchAttributes';
import { CLOSED_BATCH_CUTOFF, isBatchKey, PAYOUT_BATCH_WORKFLOW_TYPE, type PayoutBatchWorkflowInput } from '../contracts/payoutBatch';
import type { Db } from '../db/pool';
import type { PayoutStarter } from './starter';

/** What the Web UI shows as the run's static summary ("₹81.00 to ven_… for ord_…"), when known. */
export interface PayoutSummaryFacts { amountPaise: number; vendorId: string; links?: TraceLinks }

/** The run type of a payout key: an order's payoutWorkflow, or a batch's payoutBatchWorkflow. */
export const payoutRunTypeOf = (key: string): string => (isBatchKey(key) ? PAYOUT_BATCH_WORKFLOW_TYPE : PAYOUT_WORKFLOW_TYPE);

export function payoutStartOptions(taskQueue: string, orderId: string, facts?: PayoutSummaryFacts) {
  // Started by key alone (an ops decision, a wake), a batch's run is for a closed batch.
  const args: [PayoutWorkflowInput] | [PayoutBatchWorkflowInput] = isBatchKey(orderId) ? [{ batchId: orderId, cutoffAt: CLOSED_BATCH_CUTOFF }] : [{ orderId }];
  return {
    workflowId: payoutWorkflowId(orderId),
    taskQueue,
    args,
    ...PAYOUT_START_POLICIES,
    typedSearchAttributes: [{ key: OrderIdAttr, value: orderId }],
    ...(facts ? { staticSummary: payoutSummary({ ...facts, orderId }), staticDetails: payoutStartDetails(orderId, currentTraceId(), facts.links) } : {}),
  };
}

/** Returns 'closed' when a completed run already exists (the payout row's status is the lasting guard). */
export async function startPayoutWorkflow(client: Client, taskQueue: string, orderId: string, facts?: PayoutSummaryFacts): Promise<'running' | 'closed'> {
  try {
    await client.workflow.start(payoutRunTypeOf(orderId), payoutStartOptions(taskQueue, orderId, facts));
    return 'running';
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return 'closed';
    throw err;
  }
}

/** The sweep's start: a run that exists hears `transfersResumed` (one waiting out the kill switch
 * goes on at once); a payout without a live run gets one. `afterCompletedRun`: the open payout is
 * owed again after its transfer was reversed, so its completed run may be followed by a new one
 * (this start only; the claim's row lock keeps it to one transfer). */
export async function wakePayoutWorkflow(client: Client, taskQueue: string, orderId: string, facts?: PayoutSummaryFacts, opts: { afterCompletedRun?: boolean } = {}): Promise<'running' | 'closed'> {
  try {
    await client.workflow.signalWithStart(payoutRunTypeOf(orderId), {
      ...payoutStartOptions(taskQueue, orderId, facts),
      ...(opts.afterCompletedRun && { workflowIdReusePolicy: 'ALLOW_DUPLICATE' as const }),
      signal: transfersResumedSignal,
      signalArgs: [],
    });
    return 'running';
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return 'closed';
    throw err;
  }
}

/** With `db`, the run gets its static summary from the payout row (one indexed read), and its
 * details the trace it starts in, linked where `links` say. */
export function temporalPayoutStarter(client: Client, taskQueue: string, db?: Pick<Db, 'query'>, links?: TraceLinks): PayoutStarter {
  return {
    async startPayout(orderId: string): Promise<void> {
      const row = db ? (await db.query<{ amount_paise: number; vendor_id: string }>('SELECT amount_paise, vendor_id FROM payouts WHERE order_id = $1', [orderId])).rows[0] : undefined;
      await startPayoutWorkflow(client, taskQueue, orderId, row ? { amountPaise: row.amount_paise, vendorId: row.vendor_id, links } : undefined);
    },
  };
}
