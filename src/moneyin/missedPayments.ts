/** The missed-webhook sweep's work: orders and top-ups still waiting for their money past a
 * configurable age (inside the gateway's 3-day late-authorisation window) have their payments
 * fetched from the gateway, and each snapshot goes through the same path as a webhook. Reads and
 * DB writes here are idempotent, so the activities that call them may retry. */
import { inTransaction } from '../db/pool';
import { runAfterCommit } from './afterCommit';
import type { MoneyInDeps } from './deps';
import { applyPaymentSnapshot } from './paymentSnapshots';
import { paymentEntitySchema } from './webhookEnvelope';

/** Razorpay keeps asking the bank for about 3 days after a failure (late authorisation). */
const LATE_AUTHORISATION_WINDOW = '3 days';

export interface AwaitingPayment { kind: 'order' | 'topup'; id: string; gatewayOrderId: string }

export async function gatewayOrdersAwaitingPayment(db: MoneyInDeps['db'], olderThanMs: number, limit: number): Promise<AwaitingPayment[]> {
  const { rows } = await db.query<{ kind: 'order' | 'topup'; id: string; gateway_order_id: string }>(
    `SELECT * FROM (
       SELECT 'order' AS kind, id, gateway_order_id, created_at FROM orders
        -- cancelled too: a capture that still arrived for it must be found and refunded
        WHERE status IN ('pending', 'failed', 'cancelled') AND payment_method = 'online' AND gateway_order_id IS NOT NULL
          AND created_at < now() - make_interval(secs => $1::double precision / 1000)
          AND created_at > now() - $3::interval
       UNION ALL
       SELECT 'topup', id, gateway_order_id, created_at FROM wallet_topups
        WHERE status IN ('pending', 'failed') AND gateway_order_id IS NOT NULL
          AND created_at < now() - make_interval(secs => $1::double precision / 1000)
          AND created_at > now() - $3::interval
     ) waiting ORDER BY created_at LIMIT $2`,
    [olderThanMs, limit, LATE_AUTHORISATION_WINDOW],
  );
  return rows.map((r) => ({ kind: r.kind, id: r.id, gatewayOrderId: r.gateway_order_id }));
}

/** Fetches the gateway order's payments and applies each; returns how many were captured. */
export async function reconcileGatewayOrderPayments(deps: MoneyInDeps, gatewayOrderId: string): Promise<{ payments: number; captured: number }> {
  const payments = (await deps.gateway.fetchOrderPayments(gatewayOrderId)).map((p) => paymentEntitySchema.parse(p));
  let captured = 0;
  for (const payment of payments) {
    const afterCommit = await inTransaction(deps.db, (tx) => applyPaymentSnapshot(tx, payment, 'sweep', deps));
    await runAfterCommit(afterCommit);
    if (payment.status === 'captured') captured++;
  }
  return { payments: payments.length, captured };
}
