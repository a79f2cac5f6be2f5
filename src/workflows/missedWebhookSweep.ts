/** missedWebhookSweepWorkflow: run by the `missed-webhook-sweep` Schedule (overlap SKIP). Orders
 * and top-ups still unpaid past the configured age have their payments fetched from the gateway;
 * captured ones become paid through the same markPaid as a webhook. Refund requests left without
 * a gateway answer are asked again (same receipt). One gateway order failing does not stop the rest. */
import { proxyActivities } from '@temporalio/workflow';
import type { MissedWebhookSweepActivities } from '../activities/moneyinSweep';
import type { MissedWebhookSweepInput, MissedWebhookSweepResult } from '../contracts/missedWebhookSweep';

/** Reads and idempotent writes: retry a few times. */
const gatewayAndDatabaseRead = proxyActivities<MissedWebhookSweepActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '20 seconds', maximumAttempts: 4 },
});
/** Moves money: never retried by Temporal. */
const moneyMovingCall = proxyActivities<MissedWebhookSweepActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 1 },
});

export async function missedWebhookSweepWorkflow(input: MissedWebhookSweepInput = {}): Promise<MissedWebhookSweepResult> {
  const window = { olderThanMs: input.olderThanMs ?? null, limit: input.batchSize ?? 200 };
  const result: MissedWebhookSweepResult = { examined: 0, capturedFound: 0, failed: 0, refundsRetried: 0 };

  for (const waiting of await gatewayAndDatabaseRead.listGatewayOrdersAwaitingPayment(window)) {
    try {
      const found = await gatewayAndDatabaseRead.reconcileGatewayOrderPayments(waiting.gatewayOrderId);
      result.examined += 1;
      result.capturedFound += found.captured;
    } catch {
      result.failed += 1; // logged by the activity's failure; the next run asks again
    }
  }

  for (const refundId of await gatewayAndDatabaseRead.listRefundsAwaitingGateway(window)) {
    try {
      await moneyMovingCall.requestRefundAgain(refundId);
      result.refundsRetried += 1;
    } catch {
      result.failed += 1;
    }
  }
  return result;
}
