/** How the payout workflow calls its activities: short idempotent database steps (remote for runs
 * started before issue 12, local after), the resolver's heartbeating listing, and the money-moving
 * call that Temporal never retries. */
import { proxyActivities, proxyLocalActivities, workflowInfo } from '@temporalio/workflow';
import type { PayoutActivities } from '../../activities/payout';
import { LISTING_PAGE_TIMEOUT_MS, type PayoutPolicy } from '../../contracts/payout';
import { providerTaskQueue } from '../../contracts/taskQueues';

/** Idempotent database steps: safe to retry. */
const databaseCall = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 20 },
} as const;

export type PayoutCalls = ReturnType<typeof proxyActivities<PayoutActivities>>;

export const remoteDb: PayoutCalls = proxyActivities<PayoutActivities>(databaseCall);
/** The same short, idempotent database steps as local activities: no activity task round trip, a
 * marker in the history instead of three events (issue 12). Never the money-moving call. */
export const localDb: PayoutCalls = proxyLocalActivities<PayoutActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '10 seconds', maximumAttempts: 20 },
});
/** The resolver pages through the provider's listing and heartbeats while it does. */
export const { resolveUnknownTransfer: askProviderLedger } = proxyActivities<PayoutActivities>({
  ...databaseCall, startToCloseTimeout: '5 minutes', heartbeatTimeout: '30 seconds',
});

/** The money-moving call is never retried by Temporal: a retry is a decision of the workflow. */
export function moneyMovingCalls(policy: PayoutPolicy): PayoutCalls {
  return proxyActivities<PayoutActivities>({ startToCloseTimeout: policy.transferTimeoutMs, retry: { maximumAttempts: 1 } });
}

/** The calls that reach Razorpay, each on its call class's rate-limited task queue (issue 22): the
 * money-moving call on the writes queue (still never retried by Temporal), the resolver's listing and
 * the settlement fetch on the reads queue. */
export interface ProviderCalls {
  send: PayoutCalls['sendDirectTransfer'];
  askProviderLedger: PayoutCalls['resolveUnknownTransfer'];
  checkSettlement: PayoutCalls['checkSettlement'];
  /** Confirms the order's capture with Razorpay, then joins its batch (a scheduled pair). */
  joinBatch: PayoutCalls['joinPayoutBatch'];
  /** One page of a listing pass of Razorpay's payments, confirming the captures it shows (issue 37). */
  listPayments: PayoutCalls['listPaymentsForCaptures'];
}

export function providerBudgetCalls(policy: PayoutPolicy): ProviderCalls {
  const queue = workflowInfo().taskQueue;
  const writes = proxyActivities<PayoutActivities>({ taskQueue: providerTaskQueue(queue, 'writes'), startToCloseTimeout: policy.transferTimeoutMs, retry: { maximumAttempts: 1 } });
  const reads = providerTaskQueue(queue, 'reads');
  return {
    send: writes.sendDirectTransfer,
    askProviderLedger: proxyActivities<PayoutActivities>({ ...databaseCall, taskQueue: reads, startToCloseTimeout: '5 minutes', heartbeatTimeout: '30 seconds' }).resolveUnknownTransfer,
    checkSettlement: proxyActivities<PayoutActivities>({ ...databaseCall, taskQueue: reads }).checkSettlement,
    joinBatch: proxyActivities<PayoutActivities>({ ...databaseCall, taskQueue: reads }).joinPayoutBatch,
    listPayments: listingPageCall(reads),
  };
}

/** A page of a listing pass: one provider call, not retried. A failed call finishes the pass with its
 * error (the captures it covered are asked for alone); an activity that died leaves the pass to its
 * lease. */
const listingPageCall = (taskQueue: string | undefined): PayoutCalls['listPaymentsForCaptures'] =>
  proxyActivities<PayoutActivities>({
    ...(taskQueue ? { taskQueue } : {}), startToCloseTimeout: LISTING_PAGE_TIMEOUT_MS, retry: { maximumAttempts: 1 },
  }).listPaymentsForCaptures;

/** The same calls on the workflow's own task queue, as runs recorded before issue 22 replay them. */
export function workflowQueueCalls(policy: PayoutPolicy): ProviderCalls {
  return { send: moneyMovingCalls(policy).sendDirectTransfer, askProviderLedger, checkSettlement: remoteDb.checkSettlement, joinBatch: remoteDb.joinPayoutBatch, listPayments: listingPageCall(undefined) };
}
