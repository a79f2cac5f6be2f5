/** A payout held because its order's customer was refunded outside the app (moneyin/outsideRefunds.ts),
 * or may have been: a refund announced by a webhook and not yet read from Razorpay (migration 134,
 * moneyin/refundHints.ts) holds the payout at the last moments money could leave for it, a batch's
 * close and a transfer's send gate. Nothing has left for it: it goes to `review` (CUSTOMER_REFUNDED),
 * and a batched order leaves its open batch first. */
import { payoutLogFields, type PayoutView } from '../contracts/payout';
import type { Tx } from '../db/pool';
import { logger } from '../logger';
import { lockPayout, transition } from './repository';

/** The payout's `last_code` while it is held because the customer was refunded (payouts/reasons.ts). */
export const CUSTOMER_REFUNDED = 'CUSTOMER_REFUNDED';

/** A member's batch, when it is still open: held FOR SHARE (after the payout's row lock, as a join
 * takes them), so it cannot close until the caller's transaction ends and its close sums what is left. */
export async function openBatchOfMember(tx: Tx, orderId: string): Promise<string | null> {
  const { rows } = await tx.query<{ id: string }>(
    `SELECT b.id FROM payout_batch_orders m JOIN payout_batches b ON b.id = m.batch_id
      WHERE m.order_id = $1 AND b.status = 'open' FOR SHARE OF b`, [orderId]);
  return rows[0]?.id ?? null;
}

/** The order leaves its open batch (held by openBatchOfMember): nothing has been sent for it. */
async function leaveOpenBatch(tx: Tx, orderId: string, batchId: string): Promise<void> {
  await tx.query('DELETE FROM payout_batch_orders WHERE order_id = $1 AND batch_id = $2', [orderId, batchId]);
}

/** Holds a payout that has sent nothing (a claim not past the gate is taken back from its run; a
 * batched order leaves its open batch, held by the caller). Returns whether it moved. */
export async function holdRefundedPayout(tx: Tx, payout: PayoutView, requestSent: boolean, openBatchId: string | null = null): Promise<boolean> {
  if (openBatchId) await leaveOpenBatch(tx, payout.orderId, openBatchId);
  return (await transition(tx, payout, { type: 'customer_refunded', requestSent, batchOpen: openBatchId !== null }, {
    last_code: CUSTOMER_REFUNDED, next_attempt_at: null, ...(payout.status === 'processing' ? { claimed_by_run: null } : {}),
  })) !== null;
}

/** At a batch's close (the batch row held FOR UPDATE): each member whose order has a refund announced
 * and not yet read is held and leaves the batch, so the close sums only the others. A member whose
 * payout another transaction holds locked (the refund being recorded right now) is left in: that
 * transaction waits for the close and records the refund against the batch's fixed sum. */
export async function holdMembersOnUnreadRefunds(tx: Tx, batchId: string, attemptCap: number): Promise<string[]> {
  // From the hints (a handful), not the members (a daily batch may hold 60,000).
  const { rows } = await tx.query<{ id: string }>(
    `SELECT p.id FROM payouts p JOIN payout_batch_orders m ON m.order_id = p.order_id AND m.batch_id = $1
      WHERE p.status = 'batched' AND p.order_id IN (SELECT h.order_id FROM refund_hints h)
      ORDER BY p.id FOR UPDATE OF p SKIP LOCKED`, [batchId]);
  const held: string[] = [];
  for (const { id } of rows) {
    const payout = await lockPayout(tx, id, attemptCap);
    if (await holdOnUnreadRefund(tx, payout, batchId)) held.push(payout.orderId);
  }
  return held;
}

/** At the send gate (the payout locked, its claim ours, nothing sent on it): held when its order has a
 * refund announced and not yet read. */
export async function holdClaimOnUnreadRefund(tx: Tx, payout: PayoutView): Promise<boolean> {
  return holdOnUnreadRefund(tx, payout, null);
}

async function holdOnUnreadRefund(tx: Tx, payout: PayoutView, openBatchId: string | null): Promise<boolean> {
  const { rows } = await tx.query<{ refund_id: string }>('SELECT refund_id FROM refund_hints WHERE order_id = $1 ORDER BY refund_id FOR UPDATE', [payout.orderId]);
  if (rows.length === 0 || !(await holdRefundedPayout(tx, payout, false, openBatchId))) return false;
  // What the hold was made from: the refund, once read, is recorded as this hold.
  await tx.query('UPDATE refund_hints SET held_from = COALESCE(held_from, $2) WHERE order_id = $1', [payout.orderId, payout.status]);
  logger.warn({ ...payoutLogFields(payout), refunds: rows.map((r) => r.refund_id), from: payout.status },
    'held: a refund of the order was announced and Razorpay has not answered for it yet; nothing is sent for it until the refund is read');
  return true;
}
