/** What a payment snapshot means for us, whichever path brought it (webhook, browser callback,
 * sweep). A capture on one of our orders marks it paid; on a top-up it credits the wallet; on
 * anything else (not ours, a cancelled order, or a second capture on an order or top-up another
 * payment already paid) it is refunded, never paid out. */
import type { Tx } from '../db/pool';
import { logger } from '../logger';
import type { AfterCommit } from './afterCommit';
import type { MoneyInDeps } from './deps';
import { markPaid, startPayoutAfterCommit, type PaidVia } from './markPaid';
import { recordPayment } from './payments';
import { insertRefundRequest, requestRefundAfterCommit, type RefundReason } from './refunds';
import { creditTopup } from './topups';
import type { PaymentEntity } from './webhookEnvelope';

type Owner =
  | { kind: 'order'; orderId: string; status: string; customerSharePaise: number; paidPaymentId: string | null }
  | { kind: 'topup'; topupId: string }
  | { kind: 'none' };

async function ownerOf(tx: Tx, gatewayOrderId: string | null): Promise<Owner> {
  if (!gatewayOrderId) return { kind: 'none' };
  const order = await tx.query<{ id: string; status: string; customer_share_paise: number; paid_payment_id: string | null }>(
    // Locked: a cancellation or another payment's capture racing this one either commits first
    // (we refund) or waits for us.
    'SELECT id, status, customer_share_paise, paid_payment_id FROM orders WHERE gateway_order_id = $1 FOR UPDATE', [gatewayOrderId],
  );
  const o = order.rows[0];
  if (o) return { kind: 'order', orderId: o.id, status: o.status, customerSharePaise: o.customer_share_paise, paidPaymentId: o.paid_payment_id };
  const topup = await tx.query<{ id: string }>('SELECT id FROM wallet_topups WHERE gateway_order_id = $1', [gatewayOrderId]);
  if (topup.rows[0]) return { kind: 'topup', topupId: topup.rows[0].id };
  return { kind: 'none' };
}

export type SnapshotDeps = Pick<MoneyInDeps, 'db' | 'gateway' | 'payoutStarter'>;

/** `gatewayAtSec`: when the gateway says this snapshot happened — a webhook's event time; for a
 * fetched snapshot (callback, sweep) the payment's own `created_at`, the best it tells us. */
export async function applyPaymentSnapshot(tx: Tx, payment: PaymentEntity, via: PaidVia, deps: SnapshotDeps, gatewayAtSec: number = payment.created_at): Promise<AfterCommit[]> {
  const owner = await ownerOf(tx, payment.order_id);
  await recordPayment(tx, payment, {
    orderId: owner.kind === 'order' ? owner.orderId : null,
    topupId: owner.kind === 'topup' ? owner.topupId : null,
  }, gatewayAtSec);
  if (payment.status === 'failed') {
    // Only a pending order fails; a paid one stays paid (the failure snapshot may be stale).
    if (owner.kind === 'order') await tx.query(`UPDATE orders SET status = 'failed', updated_at = now() WHERE id = $1 AND status = 'pending'`, [owner.orderId]);
    return [];
  }
  if (payment.status !== 'captured') return []; // authorized: recorded; nothing is payable before capture

  switch (owner.kind) {
    case 'topup': {
      const credit = await creditTopup(tx, owner.topupId, payment.id, payment.amount);
      return credit === 'credited_by_another_payment' ? refundCapture(tx, payment, null, 'duplicate_capture', deps) : [];
    }
    case 'none':
      return refundCapture(tx, payment, null, 'orphan_capture', deps);
    case 'order': {
      if (owner.status === 'cancelled') return refundCapture(tx, payment, owner.orderId, 'order_cancelled', deps);
      // A second payment on the same gateway order (e.g. a failed one the bank authorised late)
      // charged the customer twice: refund it, the order stays paid by the first. (A paid order
      // without a paying payment id has no capture to compare with: never refund on a guess.)
      if (owner.status === 'paid' && owner.paidPaymentId && owner.paidPaymentId !== payment.id) return refundCapture(tx, payment, owner.orderId, 'duplicate_capture', deps);
      if (payment.amount !== owner.customerSharePaise) {
        logger.error({ orderId: owner.orderId, paymentId: payment.id, capturedPaise: payment.amount, expectedPaise: owner.customerSharePaise },
          'captured amount differs from the customer share: order left for review');
        return [];
      }
      const result = await markPaid(tx, owner.orderId, { via, paymentId: payment.id });
      return startPayoutAfterCommit(owner.orderId, result, deps.payoutStarter);
    }
  }
}

async function refundCapture(tx: Tx, payment: PaymentEntity, orderId: string | null, reason: RefundReason, deps: SnapshotDeps): Promise<AfterCommit[]> {
  const refundId = await insertRefundRequest(tx, { paymentId: payment.id, orderId, amountPaise: payment.amount, reason });
  if (refundId) logger.warn({ paymentId: payment.id, gatewayOrderId: payment.order_id, refundId, reason }, 'captured payment will be refunded');
  return requestRefundAfterCommit(refundId, deps);
}
