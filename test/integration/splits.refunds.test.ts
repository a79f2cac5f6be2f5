/** Issue 10 item 4: a captured payment on a gateway order that carries a Route split is refunded
 * without losing the vendor's share: when the split ran on that payment, the refund is made with
 * `reverse_all`, so the share comes back from the linked account (the sandbox's ledger shows it);
 * a second capture on a split order, which carried no transfer, is refunded alone and the vendor
 * keeps the split of the order it served. Real Temporal, PostgreSQL and the sandbox over HTTP. */
import { call, openOfflineLedger, placeSplitOrder, seedVendor, splitRow, startSplitStack, until, type SplitStack } from './splits.support';

describe('splits: refunds reverse the vendor share the documented way', () => {
  let s: SplitStack;

  beforeAll(async () => {
    s = await startSplitStack({ name: 'split-refunds' });
  });
  afterAll(async () => {
    await s?.close();
  });

  const refundsOf = async (paymentId: string) =>
    (await s.db.query('SELECT * FROM refunds WHERE payment_id = $1', [paymentId])).rows;

  test('when a cancelled split order is paid anyway, then the refund reverses the split from the linked account and the platform loses nothing to it', async () => {
    const vendor = await seedVendor(s, 'cancel_split');
    const order = await placeSplitOrder(s, vendor);
    expect((await call(s.apiUrl, 'POST', `/v1/orders/${order.orderId}/cancel`, {}, s.keys.ordering)).status).toBe(200);
    const platformBefore = await s.control.platformBalance();

    // The customer's checkout completes anyway: Razorpay captures and runs the order's split.
    const payment = await s.control.payOrder(order.gatewayOrderId);
    await s.control.drainWebhooks();
    const [ours] = await until(() => refundsOf(payment.id), (rows) => rows[0]?.gateway_refund_id != null);
    const [refund] = (await s.control.refunds()).filter((r) => r.payment_id === payment.id);
    expect(refund).toMatchObject({ id: ours.gateway_refund_id, amount: 10_000, receipt: ours.id });
    // The sandbox's ledger: the split came back from the linked account; the platform paid only the gateway's fees.
    const [split] = (await s.control.transfers({ recipient: vendor.linkedAccountId })).filter((t) => t.source === order.gatewayOrderId);
    expect(split).toMatchObject({ amount: order.splitPaise, status: 'reversed', amount_reversed: order.splitPaise });
    expect(await s.control.linkedAccountBalance(vendor.linkedAccountId)).toBe(0);
    expect(await s.control.platformBalance()).toBe(platformBefore - (payment.fee ?? 0) - split!.fees);
    expect(await s.control.reversals(split!.id)).toEqual([expect.objectContaining({ amount: order.splitPaise, customer_refund_id: refund!.id })]);
    expect(ours).toMatchObject({ reason: 'order_cancelled', reverse_all: true });
    // A cancelled order was never payable: no split row, nothing owed offline.
    expect(await splitRow(s.db, order.orderId)).toBeUndefined();
    expect(await openOfflineLedger(s.db, order.orderId)).toEqual([]);
  });

  test('when a split order is captured twice, then the second payment is refunded alone and the vendor keeps the split of the first', async () => {
    const vendor = await seedVendor(s, 'dup_split');
    const order = await placeSplitOrder(s, vendor);
    const early = await s.control.failPayment(order.gatewayOrderId);
    const paying = await s.control.payOrder(order.gatewayOrderId);
    await s.control.drainWebhooks();
    await until(() => splitRow(s.db, order.orderId), (r) => r?.status === 'processed');
    // The bank authorises the failed attempt late: a second capture on the same order.
    await s.control.lateAuthorize(early.id);
    await s.control.drainWebhooks();
    const [ours] = await until(() => refundsOf(early.id), (rows) => rows[0]?.gateway_refund_id != null);
    expect(ours).toMatchObject({ reason: 'duplicate_capture' });
    expect((await s.control.refunds()).map((r) => r.payment_id)).toContain(early.id);
    expect((await s.control.refunds()).map((r) => r.payment_id)).not.toContain(paying.id);
    const [split] = (await s.control.transfers({ recipient: vendor.linkedAccountId })).filter((t) => t.source === order.gatewayOrderId);
    expect(split).toMatchObject({ status: 'processed', amount_reversed: 0 });
    expect(await s.control.reversals(split!.id)).toEqual([]);
    expect(await s.control.linkedAccountBalance(vendor.linkedAccountId)).toBe(order.splitPaise);
    expect(await splitRow(s.db, order.orderId)).toMatchObject({ status: 'processed' });
    expect(await openOfflineLedger(s.db, order.orderId)).toEqual([]);
    expect(ours).toMatchObject({ reverse_all: false });
  });
});
