/** A cash order is paid at the counter; the vendor (or ops on its behalf) confirms it through the
 * API, and it becomes paid through the same markPaid as every other path. */
import { AppError } from '../appError';
import { inTransaction } from '../db/pool';
import { runAfterCommit } from './afterCommit';
import type { MoneyInDeps } from './deps';
import { markPaid, startPayoutAfterCommit } from './markPaid';
import { orderView, type OrderView } from './orderView';

export async function confirmCashPayment(deps: MoneyInDeps, orderId: string, confirmedBy: string): Promise<OrderView> {
  const afterCommit = await inTransaction(deps.db, async (tx) => {
    const order = await orderView(tx, orderId);
    if (!order) throw new AppError(404, 'order_not_found', `order ${orderId} does not exist`);
    if (order.paymentMethod !== 'cash') throw new AppError(409, 'not_a_cash_order', `order ${orderId} is paid ${order.paymentMethod}, not in cash`);
    if (order.status === 'cancelled') throw new AppError(409, 'order_cancelled', `order ${orderId} is cancelled`);
    return startPayoutAfterCommit(orderId, await markPaid(tx, orderId, { via: 'cash', confirmedBy }), deps.payoutStarter, deps.db);
  });
  await runAfterCommit(afterCommit);
  return (await orderView(deps.db, orderId))!;
}
