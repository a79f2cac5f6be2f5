/** Ending an order that is not paid (pending, or failed and not yet late-authorised): cancelled by a
 * caller, or expired by the missed-webhook sweep once the gateway can no longer capture for it. The
 * employer's subsidy goes back to its wallet and the change is audited, in one transaction. A
 * capture that still arrives for it is refunded, never paid out (see paymentSnapshots.ts). */
import { AppError } from '../appError';
import { inTransaction, type Tx } from '../db/pool';
import type { MoneyInDeps } from './deps';
import { orderView, type OrderView } from './orderView';
import { creditWallet } from './wallets';

export interface UnpaidOrderEnd {
  to: 'cancelled' | 'expired';
  /** Who ended it, for the audit row (an API key's name, `system:missed-webhook-sweep`). */
  actor: string;
  reason: string;
  /** Only if the order was placed longer ago than this (the expiry's guard against a stale listing). */
  placedMoreThanMsAgo?: number;
}

/** pending|failed → `end.to`, subsidy credited back once (the wallet ledger's unique reference is the
 * backstop) and an `order_status_changes` row. False when the order is not unpaid (zero rows is not
 * an error: a capture or another caller won). */
export async function endUnpaidOrder(tx: Tx, orderId: string, end: UnpaidOrderEnd): Promise<boolean> {
  // Locked first, so the audit row names the status this change really ended.
  const before = await tx.query<{ status: string }>('SELECT status FROM orders WHERE id = $1 FOR UPDATE', [orderId]);
  const { rows } = await tx.query<{ employer_id: string; subsidy_paise: number }>(
    `UPDATE orders SET status = $2, updated_at = now()
      WHERE id = $1 AND status IN ('pending', 'failed')
        AND ($3::double precision IS NULL OR created_at < now() - make_interval(secs => $3::double precision / 1000))
      RETURNING employer_id, subsidy_paise`,
    [orderId, end.to, end.placedMoreThanMsAgo ?? null],
  );
  const ended = rows[0];
  if (!ended) return false;
  if (ended.subsidy_paise > 0) {
    await creditWallet(tx, { ownerKind: 'employer', ownerId: ended.employer_id }, 'refund_credit', ended.subsidy_paise, orderId);
  }
  await tx.query(
    `INSERT INTO order_status_changes (order_id, from_status, to_status, actor, reason) VALUES ($1, $2, $3, $4, $5)`,
    [orderId, before.rows[0]!.status, end.to, end.actor, end.reason],
  );
  return true;
}

/** `actor`: the caller's audit name; the API route does not pass it yet, so the row says so. */
export async function cancelOrder(deps: Pick<MoneyInDeps, 'db'>, orderId: string, actor: string): Promise<OrderView> {
  await inTransaction(deps.db, async (tx) => {
    if (await endUnpaidOrder(tx, orderId, { to: 'cancelled', actor, reason: 'cancelled before payment' })) return;
    const order = await orderView(tx, orderId);
    if (!order) throw new AppError(404, 'order_not_found', `order ${orderId} does not exist`);
    if (order.status === 'cancelled') return; // asked twice: same answer
    throw new AppError(409, 'order_not_cancellable', `order ${orderId} is ${order.status}`);
  });
  return (await orderView(deps.db, orderId))!;
}
