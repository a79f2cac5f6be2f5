/** Issue 19 item 3, splits: a Route split reversed after it paid, from outside the app (the sandbox's
 * control route that does what the Razorpay Dashboard does) or by a refund made outside the app with
 * reverse_all. The split becomes `reversed` and what the vendor lost is owed offline, one
 * `transfer_reversal` line per reversal; a dashboard refund's clawback line nets the reversal it made.
 * When the transfer.reversed hint is lost, the split sweep looks again at the split the refund
 * touched. Real API (signed webhooks from the sandbox), Temporal, PostgreSQL and the sandbox. */
import { randomUUID } from 'node:crypto';
import type { Db } from '../../src/db/pool';
import { placeSplitOrder, runSplitSweep, seedVendor, splitRow, startSplitStack, until, type SplitStack } from './splits.support';

describe('splits: a processed split reversed later', () => {
  let s: SplitStack;
  let db: Db;

  beforeAll(async () => {
    s = await startSplitStack({ name: 'split-reversals' });
    db = s.db;
    await s.control.setPlatformBalance(10_000_000);
  });
  afterAll(async () => {
    await s?.close();
  });
  afterEach(async () => {
    await s.control.clearFaults();
  });

  /** What the open offline ledger owes the vendor: its lines, by route. */
  const owedToVendor = async (vendorId: string) => (await db.query(
    `SELECT route, amount_paise::int AS amount_paise, order_id, transfer_reversal_id FROM offline_ledger_open WHERE vendor_id = $1 ORDER BY route, amount_paise`, [vendorId])).rows;
  const reversalsOf = async (orderId: string) => (await db.query(
    `SELECT id, transfer_id, payout_id, split_order_id, amount_paise::int AS amount_paise, made_by, owed_paise::int AS owed_paise, customer_refund_id
       FROM transfer_reversals WHERE order_id = $1 ORDER BY recorded_at, id`, [orderId])).rows;

  /** An unsubsidised order paid online whose ₹81 split has processed; the split's transfer. */
  async function processedSplit(tag: string) {
    const vendor = await seedVendor(s, `${tag}_${randomUUID().slice(0, 6)}`);
    const order = await placeSplitOrder(s, vendor);
    const payment = await s.control.payOrder(order.gatewayOrderId);
    await s.control.drainWebhooks();
    const row = await until(() => splitRow(s.db, order.orderId), (r) => r?.status === 'processed');
    expect(await owedToVendor(vendor.vendorId)).toEqual([]);
    return { vendor, order, payment, transferId: row!.provider_transfer_id! };
  }

  test('when a processed split is reversed from the dashboard, then it is reversed and the vendor is owed offline exactly what was taken back, per reversal', async () => {
    const { vendor, order, transferId } = await processedSplit('split_rev');
    const part = await s.control.reverseTransferFromDashboard(transferId, { amountPaise: 3_000 });
    await s.control.drainWebhooks();
    await until(() => reversalsOf(order.orderId), (rows) => rows.length === 1);
    expect(await splitRow(db, order.orderId)).toMatchObject({ status: 'reversed', provider_status: 'partially_reversed', provider_transfer_id: transferId });
    expect(await reversalsOf(order.orderId)).toEqual([{
      id: part.id, transfer_id: transferId, payout_id: null, split_order_id: order.orderId, amount_paise: 3_000, made_by: 'outside', owed_paise: 3_000, customer_refund_id: null,
    }]);
    // The order's own line stays out: the split paid it; the reversal is owed on its own line.
    expect(await owedToVendor(vendor.vendorId)).toEqual([{ route: 'transfer_reversal', amount_paise: 3_000, order_id: null, transfer_reversal_id: part.id }]);

    const rest = await s.control.reverseTransferFromDashboard(transferId);
    await s.control.drainWebhooks();
    await until(() => reversalsOf(order.orderId), (rows) => rows.length === 2);
    expect(await s.control.linkedAccountBalance(vendor.linkedAccountId)).toBe(0);
    expect(await owedToVendor(vendor.vendorId)).toEqual([
      { route: 'transfer_reversal', amount_paise: order.splitPaise - 3_000, order_id: null, transfer_reversal_id: rest.id },
      { route: 'transfer_reversal', amount_paise: 3_000, order_id: null, transfer_reversal_id: part.id },
    ].sort((a, b) => a.amount_paise - b.amount_paise));

    // The split sweep and a second look change nothing.
    await runSplitSweep(s);
    expect(await reversalsOf(order.orderId)).toHaveLength(2);
    expect((await owedToVendor(vendor.vendorId)).reduce((sum, l) => sum + l.amount_paise, 0)).toBe(order.splitPaise);
  });

  test('when the customer is refunded from the dashboard with reverse_all and the transfer.reversed hint is lost, then the split sweep finds the reversal the refund made, and its owed line nets the clawback to nothing', async () => {
    const { vendor, order, payment, transferId } = await processedSplit('split_refund_rev');
    // Our fetch of the reversals after transfer.reversed fails: that hint is lost.
    await s.control.injectFault({ endpoint: 'transfers.reversals', fault: { kind: 'server_error_before' }, probability: 1, seed: 1 });
    const refunded = await s.gateway.createRefund({ paymentId: payment.id, amountPaise: 10_000, receipt: `dashboard-${randomUUID().slice(0, 12)}`, reverseAll: true });
    expect(refunded.type).toBe('accepted');
    await s.control.drainWebhooks();
    const refundId = refunded.type === 'accepted' ? refunded.entity.id : '';
    await until(async () => (await db.query('SELECT action FROM outside_refunds WHERE id = $1', [refundId])).rows[0], (r) => r?.action === 'owed_back');
    expect(await reversalsOf(order.orderId)).toEqual([]);
    expect(await splitRow(db, order.orderId)).toMatchObject({ status: 'processed' });
    await s.control.clearFaults();

    await runSplitSweep(s);
    const [reversal] = await s.control.reversals(transferId);
    expect(reversal).toMatchObject({ customer_refund_id: refundId, amount: order.splitPaise });
    expect(await splitRow(db, order.orderId)).toMatchObject({ status: 'reversed', provider_status: 'reversed' });
    expect(await reversalsOf(order.orderId)).toEqual([expect.objectContaining({ id: reversal!.id, made_by: 'outside_refund', owed_paise: order.splitPaise, customer_refund_id: refundId })]);
    // The vendor gave its share back through the reversal; the clawback says it owes it back: nothing is owed either way.
    const lines = await owedToVendor(vendor.vendorId);
    expect(lines.map((l) => l.route).sort()).toEqual(['refund_clawback', 'transfer_reversal']);
    expect(lines.reduce((sum, l) => sum + l.amount_paise, 0)).toBe(0);

    // Looked at once after the refund: the next sweep does not ask again.
    const before = (await s.control.callCounts())['transfers.reversals'] ?? 0;
    await runSplitSweep(s);
    expect((await s.control.callCounts())['transfers.reversals'] ?? 0).toBe(before);
  });
});
