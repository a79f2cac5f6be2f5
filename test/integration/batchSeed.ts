/** Two orders of one pair on the `daily` schedule, each started through its payout run, joined into
 * the pair's open batch: what the batch pages and their tests start from. */
import { temporalPayoutStarter } from '../../src/payouts/temporalStarter';
import { eventually, seedPaidOrder, type SeededOrder } from './payoutSeed';
import type { PayoutStack } from './payoutStack';

export async function twoOrdersInADailyBatch(stack: PayoutStack): Promise<{ first: SeededOrder; second: SeededOrder; batchId: string }> {
  const account = await stack.sandbox.control.createLinkedAccount();
  const first = await seedPaidOrder(stack.db, { linkedAccountId: account });
  await stack.db.query(`UPDATE employer_vendor SET payout_schedule = 'daily' WHERE employer_id = $1 AND vendor_id = $2`, [first.employerId, first.vendorId]);
  const second = await seedPaidOrder(stack.db, { linkedAccountId: account, pair: first });
  const starter = temporalPayoutStarter(stack.temporal.client, stack.temporal.taskQueue, stack.db);
  for (const o of [first, second]) await starter.startPayout(o.orderId);
  await eventually(() => stack.db.query('SELECT batch_id FROM payout_batch_orders WHERE order_id = ANY($1)', [[first.orderId, second.orderId]]), (r) => r.rowCount === 2);
  const batchId = (await stack.db.query('SELECT batch_id FROM payout_batch_orders WHERE order_id = $1', [first.orderId])).rows[0].batch_id as string;
  return { first, second, batchId };
}
