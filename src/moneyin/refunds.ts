/** Refunds of captured payments we must not keep: a capture on a gateway order that is not ours,
 * on an order that was cancelled, or a second capture on an order or top-up already paid. The request row is committed first (one per payment and
 * reason); the gateway is asked after the commit with our refund id as `receipt`, so asking again
 * after an unknown outcome cannot refund twice. */
import type { Db, Tx } from '../db/pool';
import type { Gateway } from '../gateway/types';
import { logger } from '../logger';
import type { AfterCommit } from './afterCommit';
import { newRefundId } from './ids';
import type { RefundEntity } from './webhookEnvelope';

export type RefundReason = 'orphan_capture' | 'order_cancelled' | 'duplicate_capture';

/** Razorpay's answer when a receipt was already used: the refund exists. */
const DUPLICATE_RECEIPT = 'BAD_REQUEST_REFUND_RECEIPT_ALREADY_PRESENT';
const UNKNOWN_OUTCOME_TRIES = 3;

/** Returns the new request's id, or null when this payment already has one for this reason. */
export async function insertRefundRequest(tx: Tx, req: { paymentId: string; orderId: string | null; amountPaise: number; reason: RefundReason }): Promise<string | null> {
  const { rows } = await tx.query<{ id: string }>(
    `INSERT INTO refunds (id, payment_id, order_id, amount_paise, reason) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (payment_id, reason) DO NOTHING RETURNING id`,
    [newRefundId(), req.paymentId, req.orderId, req.amountPaise, req.reason],
  );
  return rows[0]?.id ?? null;
}

export function requestRefundAfterCommit(refundId: string | null, deps: { db: Db; gateway: Gateway }): AfterCommit[] {
  if (!refundId) return [];
  return [{ what: `request refund ${refundId}`, run: async () => { await requestRefund(deps, refundId); } }];
}

/** Asks the gateway for a refund still `requested`. Idempotent by receipt; safe to call again. */
export async function requestRefund(deps: { db: Db; gateway: Gateway }, refundId: string): Promise<'accepted' | 'already_made' | 'rejected' | 'unknown' | 'nothing_to_do'> {
  const { rows } = await deps.db.query<{ payment_id: string; amount_paise: number; reason: string }>(
    `SELECT payment_id, amount_paise, reason FROM refunds WHERE id = $1 AND status = 'requested' AND gateway_refund_id IS NULL`,
    [refundId],
  );
  const refund = rows[0];
  if (!refund) return 'nothing_to_do';
  for (let attempt = 1; attempt <= UNKNOWN_OUTCOME_TRIES; attempt++) {
    const outcome = await deps.gateway.createRefund({
      paymentId: refund.payment_id, amountPaise: refund.amount_paise, receipt: refundId, notes: { refund_request_id: refundId, reason: refund.reason },
    });
    if (outcome.type === 'accepted') {
      await applyRefundSnapshot(deps.db, { id: outcome.entity.id, receipt: refundId, status: outcome.entity.status, payment_id: outcome.entity.payment_id });
      return 'accepted';
    }
    if (outcome.type === 'rejected') {
      if (outcome.error.code === DUPLICATE_RECEIPT) {
        // An earlier try went through; its refund.* webhook carries our receipt and records the id.
        await deps.db.query(`UPDATE refunds SET status = 'pending', updated_at = now() WHERE id = $1 AND status = 'requested'`, [refundId]);
        logger.warn({ refundId }, 'refund receipt already present at the gateway: an earlier request went through');
        return 'already_made';
      }
      logger.error({ err: outcome.error, refundId, httpStatus: outcome.httpStatus }, 'gateway rejected a refund');
      await deps.db.query(`UPDATE refunds SET status = 'failed', updated_at = now() WHERE id = $1 AND status = 'requested'`, [refundId]);
      return 'rejected';
    }
    logger.error({ err: outcome, refundId, attempt }, 'refund outcome unknown; asking again with the same receipt');
  }
  return 'unknown'; // still `requested`: the missed-webhook sweep asks again later
}

const REFUND_STATUS_ORDER = ['requested', 'pending', 'processed', 'failed'];

/** Records a gateway refund snapshot (API answer or webhook) against our request, forward only. */
export async function applyRefundSnapshot(q: Db | Tx, refund: Pick<RefundEntity, 'id' | 'receipt' | 'status' | 'payment_id'>): Promise<boolean> {
  const { rowCount } = await q.query(
    `UPDATE refunds SET
        gateway_refund_id = COALESCE(gateway_refund_id, $1),
        status = CASE WHEN array_position($4::text[], $3) > array_position($4::text[], status) THEN $3 ELSE status END,
        updated_at = now()
      WHERE (id = $2 OR gateway_refund_id = $1) AND payment_id = $5`,
    [refund.id, refund.receipt ?? null, refund.status, REFUND_STATUS_ORDER, refund.payment_id],
  );
  return (rowCount ?? 0) > 0;
}

/** Refund requests the gateway never definitively answered, oldest first. */
export async function refundsAwaitingGateway(db: Db, olderThanMs: number, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM refunds WHERE status = 'requested' AND gateway_refund_id IS NULL
        AND created_at < now() - make_interval(secs => $1::double precision / 1000)
      ORDER BY created_at LIMIT $2`,
    [olderThanMs, limit],
  );
  return rows.map((r) => r.id);
}
