/** missedWebhookSweepWorkflow: run by the `missed-webhook-sweep` Schedule (overlap SKIP). The story:
 * expire what can no longer be paid → ask the gateway about a fair batch of unpaid orders and
 * top-ups (least recently checked first) → and about cancelled/expired orders a late capture may
 * still arrive for → ask again for settlements still without a UTR → ask again for refund requests
 * left without an answer. Captured payments become paid through the same markPaid as a webhook.
 * One gateway order failing does not stop the rest. Runs recorded before FAIR_SWEEP_PATCH replay
 * the old story (one batch, then refunds). Since SWEEP_BUDGET_PATCH its calls that reach Razorpay
 * run on the provider budget's queues (issue 22): the reads on the reads queue, the refund request
 * on the writes queue; runs recorded before it replay on the workflow's own queue. Since
 * RECHECK_LISTING_PATCH the once-more look at paid orders lists payments by window first, a page per
 * call (moneyin/paymentRecheck.ts), and asks alone only for the orders the windows do not cover. */
import { patched, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { MissedWebhookSweepActivities } from '../activities/moneyinSweep';
import type { AwaitingPayment } from '../moneyin/missedPayments';
import {
  endedOrdersBatch, FAIR_SWEEP_PATCH, RECHECK_LISTING_PATCH, RECHECK_PAGES_PER_RUN, SWEEP_BUDGET_PATCH,
  type MissedWebhookSweepInput, type MissedWebhookSweepResult,
} from '../contracts/missedWebhookSweep';
import { providerTaskQueue } from '../contracts/taskQueues';

type SweepCalls = ReturnType<typeof proxyActivities<MissedWebhookSweepActivities>>;

/** Reads and idempotent writes: retry a few times. */
const readRetries = {
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '20 seconds', maximumAttempts: 4 },
} as const;
/** The database-only steps (listing what to ask about) stay on the workflow's queue. */
const databaseRead = proxyActivities<MissedWebhookSweepActivities>(readRetries);
/** Gateway orders asked about at once: a 200-order batch in seconds, well inside Razorpay's
 * unpublished rate limits (a 429 is retried by the activity's policy). */
const GATEWAY_ORDERS_IN_PARALLEL = 5;
/** Moves money: never retried by Temporal. */
const moneyMoving = { startToCloseTimeout: '1 minute', retry: { maximumAttempts: 1 } } as const;

/** The calls that ask Razorpay, and the one that asks it to move money. */
interface ProviderCalls { gatewayRead: SweepCalls; moneyMovingCall: SweepCalls }

function providerCalls(budgeted: boolean): ProviderCalls {
  if (!budgeted) return { gatewayRead: databaseRead, moneyMovingCall: proxyActivities<MissedWebhookSweepActivities>(moneyMoving) };
  const queue = workflowInfo().taskQueue;
  return {
    gatewayRead: proxyActivities<MissedWebhookSweepActivities>({ ...readRetries, taskQueue: providerTaskQueue(queue, 'reads') }),
    moneyMovingCall: proxyActivities<MissedWebhookSweepActivities>({ ...moneyMoving, taskQueue: providerTaskQueue(queue, 'writes') }),
  };
}

export async function missedWebhookSweepWorkflow(input: MissedWebhookSweepInput = {}): Promise<MissedWebhookSweepResult> {
  const window = { olderThanMs: input.olderThanMs ?? null, limit: input.batchSize ?? 200 };
  const result: MissedWebhookSweepResult = { examined: 0, capturedFound: 0, failed: 0, refundsRetried: 0 };
  const fair = patched(FAIR_SWEEP_PATCH);
  const { gatewayRead, moneyMovingCall } = providerCalls(patched(SWEEP_BUDGET_PATCH));

  // Runs before the patch asked one gateway order at a time; replaying them must do the same.
  const inParallel = fair ? GATEWAY_ORDERS_IN_PARALLEL : 1;

  if (fair) await expireUnpayable(gatewayRead, window.limit, result);
  await askAbout(gatewayRead, await databaseRead.listGatewayOrdersAwaitingPayment(window), result, inParallel);
  if (fair) {
    if (patched(RECHECK_LISTING_PATCH)) await recheckByListing(gatewayRead, result);
    const ended = await databaseRead.listEndedOrdersAwaitingLateCapture({ limit: endedOrdersBatch(window.limit) });
    result.endedOrdersChecked = ended.length;
    await askAbout(gatewayRead, ended, result, inParallel);
    const settlements = await gatewayRead.refreshSettlementsAwaitingUtr({ limit: window.limit });
    result.settlementsRefreshed = settlements.checked;
    result.settlementUtrsFound = settlements.utrFound;
  }

  for (const refundId of await databaseRead.listRefundsAwaitingGateway(window)) {
    try {
      await moneyMovingCall.requestRefundAgain(refundId);
      result.refundsRetried += 1;
    } catch {
      result.failed += 1;
    }
  }
  return result;
}

/** Each gateway order's payments, fetched and applied, `inParallel` at a time; a failure is counted
 * and asked again next run. */
async function askAbout(gatewayRead: SweepCalls, waiting: AwaitingPayment[], result: MissedWebhookSweepResult, inParallel: number): Promise<void> {
  for (let i = 0; i < waiting.length; i += inParallel) {
    await Promise.all(waiting.slice(i, i + inParallel).map(async (w) => {
      try {
        const found = await gatewayRead.reconcileGatewayOrderPayments(w.gatewayOrderId);
        result.examined += 1;
        result.capturedFound += found.captured;
      } catch {
        result.failed += 1; // logged by the activity's failure; the next run asks again
      }
    }));
  }
}

/** The once-more look's listing windows due when the listing began, a page per call, until nothing
 * more is due or the run's pages are spent; a failed call is counted and the next run lists again.
 * (The time is an activity argument: a run recorded without it replays the same commands.) */
async function recheckByListing(gatewayRead: SweepCalls, result: MissedWebhookSweepResult): Promise<void> {
  result.recheckPages = 0;
  result.recheckApplied = 0;
  const untilMs = Date.now();
  for (let i = 0; i < RECHECK_PAGES_PER_RUN; i++) {
    try {
      const page = await gatewayRead.recheckPaymentsPage({ untilMs });
      if (page.windowId !== null && !page.error) result.recheckPages += 1;
      result.recheckApplied += page.applied;
      if (page.done) return;
    } catch {
      result.failed += 1;
      return;
    }
  }
}

/** Orders still unpaid past the late-authorisation window: a last look at the gateway, then expired. */
async function expireUnpayable(gatewayRead: SweepCalls, limit: number, result: MissedWebhookSweepResult): Promise<void> {
  result.expired = 0;
  for (const order of await databaseRead.listUnpaidOrdersPastExpiry({ limit })) {
    try {
      if ((await gatewayRead.expireUnpaidOrder(order)) === 'expired') result.expired += 1;
    } catch {
      result.failed += 1;
    }
  }
}
