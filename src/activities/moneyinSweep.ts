/** Activities of the missed-webhook sweep. Listing and reconciling are reads plus idempotent DB
 * writes, so they may retry; asking again for a refund moves money and runs at most once per call
 * (its receipt makes a repeat harmless, but the workflow does not rely on that). */
import type { MoneyInDeps } from '../moneyin/deps';
import {
  endedOrdersAwaitingLateCapture, expireUnpaidOrder, gatewayOrdersAwaitingPayment, reconcileGatewayOrderPayments, unpaidOrdersPastExpiry,
  type AwaitingPayment,
} from '../moneyin/missedPayments';
import { recordNeverPayableReversals } from '../moneyin/neverPayableReversals';
import { recheckNextPage, type RecheckPage } from '../moneyin/paymentRecheck';
import { refreshPendingRefunds, refundsAwaitingGateway, requestRefund } from '../moneyin/refunds';
import { leaveForSweep } from '../payouts/starter';
import { refreshSettlementsAwaitingUtr, type UtrRefresh } from '../recon/settlementEvidence';
import type { ActivityDeps } from './deps';

export function createMoneyInSweepActivities(deps: ActivityDeps) {
  const moneyIn: MoneyInDeps = { db: deps.db, gateway: deps.gateway, config: deps.config, payoutStarter: deps.payoutStarter ?? leaveForSweep };
  const ageOr = (olderThanMs: number | null) => olderThanMs ?? deps.config.MISSED_WEBHOOK_SWEEP_AGE_MS;
  const expiryMs = deps.config.UNPAID_ORDER_EXPIRY_MS;
  return {
    /** The next fair batch (least recently checked first); taking a row stamps it checked. */
    async listGatewayOrdersAwaitingPayment(input: { olderThanMs: number | null; limit: number }): Promise<AwaitingPayment[]> {
      return gatewayOrdersAwaitingPayment(deps.db, { olderThanMs: ageOr(input.olderThanMs), expiryMs, limit: input.limit });
    },
    /** The once-more look's next page of payments (one listing call: on the reads budget's queue), of
     * the windows due by `untilMs` (when the run began listing; runs recorded before it pass nothing). */
    async recheckPaymentsPage(input?: { untilMs?: number }): Promise<RecheckPage> {
      return recheckNextPage(moneyIn, input?.untilMs ?? null);
    },
    async listEndedOrdersAwaitingLateCapture(input: { limit: number }): Promise<AwaitingPayment[]> {
      return endedOrdersAwaitingLateCapture(deps.db, input.limit, deps.config.LATE_CAPTURE_RECHECK_MS);
    },
    async reconcileGatewayOrderPayments(gatewayOrderId: string): Promise<{ payments: number; captured: number }> {
      return reconcileGatewayOrderPayments(moneyIn, gatewayOrderId);
    },
    async listUnpaidOrdersPastExpiry(input: { limit: number }): Promise<Array<{ orderId: string; gatewayOrderId: string | null }>> {
      return unpaidOrdersPastExpiry(deps.db, expiryMs, input.limit);
    },
    async expireUnpaidOrder(order: { orderId: string; gatewayOrderId: string | null }): Promise<'expired' | 'not_unpaid'> {
      return expireUnpaidOrder(moneyIn, order, expiryMs);
    },
    /** Refunds still waiting on the gateway: those accepted as pending are asked for their final
     * status here (a read: fetched by id, or found by receipt among the payment's refunds after a
     * duplicate-receipt answer; in this activity so the sweep's commands stay as they are), and the
     * ids of requests without an answer that are due are returned for the money-moving retry. */
    async listRefundsAwaitingGateway(input: { olderThanMs: number | null; limit: number }): Promise<string[]> {
      await refreshPendingRefunds(deps.db, deps.gateway, ageOr(input.olderThanMs), input.limit, deps.config.REFUND_RECEIPT_LOOKUP_GIVE_UP_MS);
      // And what our processed reverse_all refunds took back on orders nothing of ours pays (same reason).
      await recordNeverPayableReversals(deps.db, deps.gateway, input.limit);
      return refundsAwaitingGateway(deps.db, ageOr(input.olderThanMs), input.limit);
    },
    async requestRefundAgain(refundId: string): Promise<string> {
      return requestRefund(moneyIn, refundId);
    },
    /** Settlements still without a UTR, each asked at most every SETTLEMENT_UTR_REFRESH_MS. */
    async refreshSettlementsAwaitingUtr(input: { limit: number }): Promise<UtrRefresh> {
      return refreshSettlementsAwaitingUtr(deps.db, deps.gateway, { staleAfterMs: deps.config.SETTLEMENT_UTR_REFRESH_MS, limit: input.limit });
    },
  };
}

export type MissedWebhookSweepActivities = ReturnType<typeof createMoneyInSweepActivities>;
