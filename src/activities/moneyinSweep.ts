/** Activities of the missed-webhook sweep. Listing and reconciling are reads plus idempotent DB
 * writes, so they may retry; asking again for a refund moves money and runs at most once per call
 * (its receipt makes a repeat harmless, but the workflow does not rely on that). */
import type { MoneyInDeps } from '../moneyin/deps';
import { gatewayOrdersAwaitingPayment, reconcileGatewayOrderPayments, type AwaitingPayment } from '../moneyin/missedPayments';
import { refundsAwaitingGateway, requestRefund } from '../moneyin/refunds';
import { leaveForSweep } from '../payouts/starter';
import type { ActivityDeps } from './index';

export function createMoneyInSweepActivities(deps: ActivityDeps) {
  const moneyIn: MoneyInDeps = { db: deps.db, gateway: deps.gateway, config: deps.config, payoutStarter: deps.payoutStarter ?? leaveForSweep };
  const ageOr = (olderThanMs: number | null) => olderThanMs ?? deps.config.MISSED_WEBHOOK_SWEEP_AGE_MS;
  return {
    async listGatewayOrdersAwaitingPayment(input: { olderThanMs: number | null; limit: number }): Promise<AwaitingPayment[]> {
      return gatewayOrdersAwaitingPayment(deps.db, ageOr(input.olderThanMs), input.limit);
    },
    async reconcileGatewayOrderPayments(gatewayOrderId: string): Promise<{ payments: number; captured: number }> {
      return reconcileGatewayOrderPayments(moneyIn, gatewayOrderId);
    },
    async listRefundsAwaitingGateway(input: { olderThanMs: number | null; limit: number }): Promise<string[]> {
      return refundsAwaitingGateway(deps.db, ageOr(input.olderThanMs), input.limit);
    },
    async requestRefundAgain(refundId: string): Promise<string> {
      return requestRefund(moneyIn, refundId);
    },
  };
}

export type MissedWebhookSweepActivities = ReturnType<typeof createMoneyInSweepActivities>;
