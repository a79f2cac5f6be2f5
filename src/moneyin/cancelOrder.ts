/** Cancelling an order that is not paid (pending, or failed and not yet late-authorised). The
 * employer's subsidy goes back to its wallet in the same transaction. A capture that still arrives
 * for a cancelled order is refunded, never paid out (see paymentSnapshots.ts). */
import { AppError } from '../appError';
import { inTransaction } from '../db/pool';
import type { MoneyInDeps } from './deps';
import { orderView, type OrderView } from './orderView';
import { creditWallet } from './wallets';

export async function cancelOrder(deps: Pick<MoneyInDeps, 'db'>, orderId: string): Promise<OrderView> {
  await inTransaction(deps.db, async (tx) => {
    const { rows } = await tx.query<{ employer_id: string; subsidy_paise: number }>(
      `UPDATE orders SET status = 'cancelled', updated_at = now()
        WHERE id = $1 AND status IN ('pending', 'failed') RETURNING employer_id, subsidy_paise`,
      [orderId],
    );
    const cancelled = rows[0];
    if (!cancelled) {
      const order = await orderView(tx, orderId);
      if (!order) throw new AppError(404, 'order_not_found', `order ${orderId} does not exist`);
      if (order.status === 'cancelled') return; // asked twice: same answer
      throw new AppError(409, 'order_not_cancellable', `order ${orderId} is ${order.status}`);
    }
    if (cancelled.subsidy_paise > 0) {
      await creditWallet(tx, { ownerKind: 'employer', ownerId: cancelled.employer_id }, 'refund_credit', cancelled.subsidy_paise, orderId);
    }
  });
  return (await orderView(deps.db, orderId))!;
}
