/** What a payment snapshot means for us, whichever path brought it (webhook, browser callback,
 * sweep). A capture on one of our orders marks it paid; on a top-up it credits the wallet; on
 * anything else (not ours, or a cancelled order) it is refunded, never paid out. */
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
  | { kind: 'order'; orderId: string; status: string; customerSharePaise: number }
  | { kind: 'topup'; topupId: string }
  | { kind: 'none' };

async function ownerOf(tx: Tx, gatewayOrderId: string | null): Promise<Owner> {
  if (!gatewayOrderId) return { kind: 'none' };
  const order = await tx.query<{ id: string; status: string; customer_share_paise: number }>(
    // Locked: a cancellation racing this capture either commits first (we refund) or waits for us.
    'SELECT id, status, customer_share_paise FROM orders WHERE gateway_order_id = $1 FOR UPDATE', [gatewayOrderId],
  );
  if (order.rows[0]) return { kind: 'order', orderId: order.rows[0].id, status: order.rows[0].status, customerSharePaise: order.rows[0].customer_share_paise };
  const topup = await tx.query<{ id: string }>('SELECT id FROM wallet_topups WHERE gateway_order_id = $1', [gatewayOrderId]);
  if (topup.rows[0]) return { kind: 'topup', topupId: topup.rows[0].id };
  return { kind: 'none' };
}

export type SnapshotDeps = Pick<MoneyInDeps, 'db' | 'gateway' | 'payoutStarter'>;

export async function applyPaymentSnapshot(tx: Tx, payment: PaymentEntity, via: PaidVia, deps: SnapshotDeps): Promise<AfterCommit[]> {
  const owner = await ownerOf(tx, payment.order_id);
  await recordPayment(tx, payment, {
    orderId: owner.kind === 'order' ? owner.orderId : null,
    topupId: owner.kind === 'topup' ? owner.topupId : null,
  });
  if (payment.status === 'failed') {
    // Only a pending order fails; a paid one stays paid (the failure snapshot may be stale).
    if (owner.kind === 'order') await tx.query(`UPDATE orders SET status = 'failed', updated_at = now() WHERE id = $1 AND status = 'pending'`, [owner.orderId]);
    return [];
  }
  if (payment.status !== 'captured') return []; // authorized: recorded; nothing is payable before capture

  switch (owner.kind) {
    case 'topup':
      await creditTopup(tx, owner.topupId, payment.amount);
      return [];
    case 'none':
      return refundCapture(tx, payment, null, 'orphan_capture', deps);
    case 'order': {
      if (owner.status === 'cancelled') return refundCapture(tx, payment, owner.orderId, 'order_cancelled', deps);
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
