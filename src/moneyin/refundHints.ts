/** Refund webhooks for paid orders, kept until the refund is read (migration 134, issue 36 campaign
 * finding 2). A webhook is a hint: the refund is believed only once fetched from Razorpay, and the
 * fetch after the webhook's commit may be refused (429, 5xx, a timeout). Until then the hint row
 * stays, a worker reads it again after a backoff (refundHintFollower.ts), and no money leaves for its
 * order (payouts/refundHolds.ts holds the payout at a batch's close and at a transfer's send gate).
 * The transaction that records what the fetch said deletes it. */
import type { Db, Tx } from '../db/pool';

type Queryable = Pick<Db, 'query'>;

/** How long a read taken by a follower is its own before another may take it. */
export const REFUND_HINT_LEASE_MS = 30_000;

/** How long the webhook's own read, right after its commit, has before a follower may read it too. */
export const WEBHOOK_READ_LEASE_MS = 5_000;

/** In the webhook's transaction: the refund of a payment that pays `orderId` waits to be read, unless
 * it was read before (its outside_refunds row exists). A second webhook adds nothing. */
export async function noteRefundHint(tx: Tx, hint: { refundId: string; paymentId: string; orderId: string }): Promise<void> {
  await tx.query(
    `INSERT INTO refund_hints (refund_id, payment_id, order_id, next_attempt_at)
     SELECT $1, $2, $3, now() + $4 * interval '1 millisecond' WHERE NOT EXISTS (SELECT 1 FROM outside_refunds WHERE id = $1)
     ON CONFLICT (refund_id) DO NOTHING`,
    [hint.refundId, hint.paymentId, hint.orderId, WEBHOOK_READ_LEASE_MS]);
}

/** In the transaction that records a fetched refund: the hint is answered. Returns the status its
 * payout was held from while the hint was unread, if it held one. */
export async function settleRefundHint(tx: Tx, refundId: string): Promise<{ heldFrom: string | null } | null> {
  const { rows } = await tx.query<{ held_from: string | null }>('DELETE FROM refund_hints WHERE refund_id = $1 RETURNING held_from', [refundId]);
  return rows[0] ? { heldFrom: rows[0].held_from } : null;
}

/** The read failed: again after 1 s, 2 s, 4 s … at most 30 s after each failure. */
export async function refundHintReadFailed(db: Queryable, refundId: string, err: unknown): Promise<void> {
  await db.query(
    `UPDATE refund_hints SET attempts = attempts + 1, last_error = $2,
            next_attempt_at = now() + least(interval '30 seconds', interval '1 second' * 2 ^ least(attempts, 10))
      WHERE refund_id = $1`,
    [refundId, String((err as Error)?.message ?? JSON.stringify(err)).slice(0, 500)]);
}

/** Takes up to `limit` due hints for one follower (a lease: another follower skips them until it runs out). */
export async function claimDueRefundHints(db: Queryable, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ refund_id: string }>(
    `UPDATE refund_hints SET next_attempt_at = now() + $2 * interval '1 millisecond'
      WHERE refund_id IN (SELECT refund_id FROM refund_hints WHERE next_attempt_at <= now() ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
      RETURNING refund_id`,
    [limit, REFUND_HINT_LEASE_MS]);
  return rows.map((r) => r.refund_id);
}
