/** Issue 10 item 4: a captured payment on a gateway order that carries a Route split is refunded
 * without losing the vendor's share: when the split ran on that payment, the refund is made with
 * `reverse_all`, so the share comes back from the linked account (the sandbox's ledger shows it);
 * a second capture on a split order, which carried no transfer, is refunded alone and the vendor
 * keeps the split of the order it served. Real Temporal, PostgreSQL and the sandbox over HTTP. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { restoreDatabase, snapshotDatabase } from '../../src/devstack/dbRollback';
import { call, openOfflineLedger, placeSplitOrder, postSignedWebhook, runMissedWebhookSweep, seedVendor, splitRow, startSplitStack, until, type SplitStack } from './splits.support';

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

  test('when a cancelled split order paid anyway is refunded with reverse_all, then the missed-webhook sweep records the reversal the refund made (owed nothing), so recon knows the transfer and its reversal', async () => {
    const vendor = await seedVendor(s, 'cancel_split_rev');
    const order = await placeSplitOrder(s, vendor);
    expect((await call(s.apiUrl, 'POST', `/v1/orders/${order.orderId}/cancel`, {}, s.keys.ordering)).status).toBe(200);
    const payment = await s.control.payOrder(order.gatewayOrderId);
    await s.control.drainWebhooks();
    await until(() => refundsOf(payment.id), (rows) => rows[0]?.status === 'processed');
    const [split] = (await s.control.transfers({ recipient: vendor.linkedAccountId })).filter((t) => t.source === order.gatewayOrderId);
    const [reversal] = await s.control.reversals(split!.id);
    expect(reversal).toBeDefined();

    await runMissedWebhookSweep(s);
    const recorded = (await s.db.query('SELECT id, transfer_id, payout_id, split_order_id, order_id, made_by, amount_paise::int AS amount_paise, owed_paise::int AS owed_paise FROM transfer_reversals WHERE order_id = $1', [order.orderId])).rows;
    expect(recorded).toEqual([{ id: reversal!.id, transfer_id: split!.id, payout_id: null, split_order_id: null, order_id: order.orderId, made_by: 'our_refund', amount_paise: order.splitPaise, owed_paise: 0 }]);
    // Still never payable: no split row, nothing owed offline; a second sweep adds nothing.
    expect(await splitRow(s.db, order.orderId)).toBeUndefined();
    expect(await openOfflineLedger(s.db, order.orderId)).toEqual([]);
    await runMissedWebhookSweep(s);
    expect((await s.db.query('SELECT count(*)::int AS n FROM transfer_reversals WHERE order_id = $1', [order.orderId])).rows).toEqual([{ n: 1 }]);
  });

  test('when a cancelled split order paid anyway is refunded with reverse_all inside a window the database then loses, then after the restore the refund is found by its receipt and the reversal it made is recorded, with no second refund', async () => {
    const vendor = await seedVendor(s, 'cancel_split_restore');
    const order = await placeSplitOrder(s, vendor);
    expect((await call(s.apiUrl, 'POST', `/v1/orders/${order.orderId}/cancel`, {}, s.keys.ordering)).status).toBe(200);
    const snap = await snapshotDatabase(s.databaseUrl, 'split_refund');

    // The lost window: the stale page pays, Razorpay runs the split, our refund takes it back.
    const payment = await s.control.payOrder(order.gatewayOrderId);
    await s.control.drainWebhooks();
    const [before] = await until(() => refundsOf(payment.id), (rows) => rows[0]?.status === 'processed');
    const [split] = (await s.control.transfers({ recipient: vendor.linkedAccountId })).filter((t) => t.source === order.gatewayOrderId);
    expect(split).toMatchObject({ status: 'reversed' });
    const [reversal] = await s.control.reversals(split!.id);

    await restoreDatabase(s.databaseUrl, snap, { exclusive: true });
    expect(await refundsOf(payment.id)).toEqual([]);
    // The sweeps find the capture again; the refund request, asked once more, meets a split already
    // reversed (final: Razorpay does not run it again) and the provider's "duplicate receipt".
    const [after] = await until(async () => { await runMissedWebhookSweep(s); return refundsOf(payment.id); }, (rows) => rows[0]?.status === 'processed', 30_000);
    expect(after).toMatchObject({ id: before.id, gateway_refund_id: before.gateway_refund_id });
    expect((await s.control.refunds()).filter((r) => r.payment_id === payment.id)).toHaveLength(1);
    const recorded = await until(async () => {
      await runMissedWebhookSweep(s);
      return (await s.db.query('SELECT id, transfer_id, made_by, owed_paise::int AS owed_paise FROM transfer_reversals WHERE order_id = $1', [order.orderId])).rows;
    }, (rows) => rows.length > 0, 30_000);
    expect(recorded).toEqual([{ id: reversal!.id, transfer_id: split!.id, made_by: 'our_refund', owed_paise: 0 }]);
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
  test('when the order is paid by a late capture and the payment that carries the split arrives second, then its refund comes from the balance and the vendor keeps its only split (issue 19 item 1)', async () => {
    const vendor = await seedVendor(s, 'dup_split_first');
    const order = await placeSplitOrder(s, vendor);
    const early = await s.control.failPayment(order.gatewayOrderId);
    await s.control.drainWebhooks();
    // Razorpay captures `first` and runs the order's split on it; its webhooks go elsewhere (answered
    // 200 and lost to us), so our endpoint hears none of it yet.
    const blackHole = http.createServer((_req, res) => res.end());
    await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve));
    await s.control.setWebhookTarget(`http://127.0.0.1:${(blackHole.address() as AddressInfo).port}/`);
    const first = await s.control.payOrder(order.gatewayOrderId);
    await s.control.drainWebhooks();
    await s.control.setWebhookTarget(`${s.apiUrl}/webhooks/razorpay`);
    blackHole.close();
    const [split] = (await s.control.transfers({ recipient: vendor.linkedAccountId })).filter((t) => t.source === order.gatewayOrderId);
    expect(split).toMatchObject({ source: order.gatewayOrderId });
    // The bank authorises the failed attempt late: its capture is the first we hear, so it pays the order.
    await s.control.lateAuthorize(early.id);
    await s.control.drainWebhooks();
    await until(async () => (await s.db.query('SELECT paid_payment_id FROM orders WHERE id = $1', [order.orderId])).rows[0], (r) => r?.paid_payment_id === early.id);
    // Then the split is known to us as processed, and first's capture finally arrives.
    const lost = async (event: string, id: string) => (await s.control.webhookEvents()).find((e) => e.event === event && e.body.includes(id));
    await until(() => lost('transfer.processed', split!.id), (e) => e !== undefined);
    expect((await postSignedWebhook(s, (await lost('transfer.processed', split!.id))!.body)).status).toBe(200);
    await until(() => splitRow(s.db, order.orderId), (r) => r?.status === 'processed' && r.provider_transfer_id === split!.id);
    const captured = await lost('payment.captured', first.id);
    expect((await postSignedWebhook(s, captured!.body)).status).toBe(200);
    const [ours] = await until(() => refundsOf(first.id), (rows) => rows[0]?.gateway_refund_id != null);
    expect(ours).toMatchObject({ reason: 'duplicate_capture', reverse_all: false });
    const [after] = (await s.control.transfers({ recipient: vendor.linkedAccountId })).filter((t) => t.source === order.gatewayOrderId);
    expect(after).toMatchObject({ status: 'processed', amount_reversed: 0 });
    expect(await s.control.linkedAccountBalance(vendor.linkedAccountId)).toBe(order.splitPaise);
    expect((await s.control.refunds()).map((r) => r.payment_id)).not.toContain(early.id);
  });
});
