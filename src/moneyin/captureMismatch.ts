/** An order held on its capture (issue 36 item 6): Razorpay's capture is not the order's customer
 * share, so the customer was charged but the book must not say the order is paid — nor owed to the
 * vendor — until a human decides. The order is `capture_mismatch` (paid_at NULL; paid_via and
 * paid_payment_id name the capture), its direct-transfer payout waits in `review` (AMOUNT_MISMATCH),
 * and ops' decision on that payout (payouts/humanQueue.ts) makes it `paid`, whatever they decided:
 * retry, mark paid externally and pay offline say how the vendor is paid; cancel that it is owed
 * nothing, which the statement shows on a paid order as a cancelled payout. Both changes are
 * audited in order_status_changes. */
import type { Tx } from '../db/pool';
import { forgetOrderObligations, oweOrders } from '../ledger/orderObligations';

export const CAPTURE_MISMATCH = 'capture_mismatch';
/** Who holds an order: money in, on the capture's evidence. */
export const CAPTURE_HOLD_ACTOR = 'system:money-in';

/** Statuses of an order a capture has charged: another capture on it is a second charge. */
export const isCharged = (status: string): boolean => status === 'paid' || status === CAPTURE_MISMATCH;

/** In the transaction where markPaid has just paid the order on this capture (from `fromStatus`):
 * the order is held instead. */
export async function holdOrderOnCapture(tx: Tx, orderId: string, fromStatus: string, reason: string): Promise<void> {
  await tx.query(
    `WITH held AS (
       UPDATE orders SET status = '${CAPTURE_MISMATCH}', paid_at = NULL, updated_at = now() WHERE id = $1 AND status = 'paid' RETURNING id)
     INSERT INTO order_status_changes (order_id, from_status, to_status, actor, reason)
     SELECT id, $2, '${CAPTURE_MISMATCH}', $3, $4 FROM held`,
    [orderId, fromStatus, CAPTURE_HOLD_ACTOR, reason],
  );
  await forgetOrderObligations(tx, orderId);
}

/** Locks the order if it is held: the decision's transaction takes the order before its payout, as
 * every path that locks both does. False: not held (not an order, or paid already). */
export async function lockHeldOrder(tx: Tx, orderId: string): Promise<boolean> {
  const { rowCount } = await tx.query(`SELECT 1 FROM orders WHERE id = $1 AND status = '${CAPTURE_MISMATCH}' FOR UPDATE`, [orderId]);
  return rowCount === 1;
}

/** Ops decided on the held order's payout: the order is paid from now. */
export async function releaseHeldOrder(tx: Tx, orderId: string, actor: string, reason: string): Promise<boolean> {
  const { rowCount } = await tx.query(
    `WITH paid AS (
       UPDATE orders SET status = 'paid', paid_at = now(), updated_at = now() WHERE id = $1 AND status = '${CAPTURE_MISMATCH}' RETURNING id)
     INSERT INTO order_status_changes (order_id, from_status, to_status, actor, reason)
     SELECT id, '${CAPTURE_MISMATCH}', 'paid', $2, $3 FROM paid`,
    [orderId, actor, reason],
  );
  if (rowCount === 1) await oweOrders(tx, [orderId]);
  return rowCount === 1;
}
