/** Money in through real HTTP, real PostgreSQL and the Razorpay sandbox delivering signed webhooks. */
import { randomUUID } from 'node:crypto';
import { hmacSha256Hex } from '../../src/gateway/signatures';
import { admin, eventually, http, ops, payoutStartsOf, vendorKey, postWebhook, registerEmployee, seedPair, snapshot, startMoneyInHarness, topUp, uniqueRef, walletBalance, type MoneyInHarness } from './moneyinHarness';

const EMPLOYER = 'emp_acme';
const VENDOR = 'ven_dosa';

describe('money in: orders, checkout, webhooks', () => {
  let h: MoneyInHarness;
  let linkedAccountId: string;

  beforeAll(async () => {
    h = await startMoneyInHarness();
    ({ linkedAccountId } = (await seedPair(h, { employerId: EMPLOYER, vendorId: VENDOR, commissionBps: 1_900 })) as { linkedAccountId: string });
    await topUp(h, 'employer', EMPLOYER, 5_000_000);
    // Employee wallets take top-ups and pay wallet orders only for their own employer (issue 21 item 10).
    for (const employeeId of ['emp-42', 'emp-wallet-1', 'emp-wallet-2']) await registerEmployee(h, EMPLOYER, employeeId);
  });

  afterAll(async () => {
    await h?.close();
  });

  const order = (overrides: Record<string, unknown> = {}) => ({
    clientReference: uniqueRef('ord'), employerId: EMPLOYER, vendorId: VENDOR, employeeId: 'emp-17',
    totalPaise: 10_000, subsidyPaise: 9_900, customerSharePaise: 100, paymentMethod: 'online', ...overrides,
  });

  const orderRow = async (orderId: string) => (await h.db.query('SELECT status, paid_via FROM orders WHERE id = $1', [orderId])).rows[0];
  const payoutsOf = async (orderId: string) => (await h.db.query('SELECT amount_paise, linked_account_id, status, idempotency_key, id::text FROM payouts WHERE order_id = $1', [orderId])).rows;

  /** Recorded sandbox events about one gateway order (delivered or not). */
  async function eventsFor(gatewayOrderId: string, event: string) {
    const all = await h.sandbox.control.webhookEvents();
    return all.filter((e) => e.event === event && e.body.includes(gatewayOrderId));
  }

  test('when a ₹100 order is 99% subsidised at 19% commission and the customer pays ₹1 at checkout, then it is paid once and a pending ₹81 payout to the linked account exists', async () => {
    const before = await walletBalance(h, 'employer', EMPLOYER);
    const body = order();
    const placed = await http(h, 'POST', '/v1/orders', body);
    expect(placed.status).toBe(201);
    expect(placed.body.order).toMatchObject({ status: 'pending', commissionPaise: 1_900, vendorNetPaise: 8_100, customerSharePaise: 100 });
    expect(placed.body.checkout).toMatchObject({ amountPaise: 100, orderId: placed.body.order.gatewayOrderId });
    const orderId: string = placed.body.order.orderId;
    expect(orderId).toMatch(/^ord_[A-Za-z0-9]{14}$/);

    const retried = await http(h, 'POST', '/v1/orders', body);
    expect(retried.status).toBe(200);
    expect(retried.body.order).toMatchObject({ orderId, gatewayOrderId: placed.body.order.gatewayOrderId });
    const gatewayOrder = await h.gateway.fetchOrder(placed.body.order.gatewayOrderId);
    expect(gatewayOrder).toMatchObject({ amount: 100, receipt: orderId });

    await h.sandbox.control.payOrder(placed.body.order.gatewayOrderId);
    await h.sandbox.control.drainWebhooks();

    expect(await orderRow(orderId)).toEqual({ status: 'paid', paid_via: 'webhook' });
    const payouts = await payoutsOf(orderId);
    expect(payouts).toEqual([expect.objectContaining({ amount_paise: 8_100, linked_account_id: linkedAccountId, status: 'pending' })]);
    expect(payouts[0].idempotency_key).toBe(payouts[0].id);
    const ledger = await h.db.query('SELECT amount_paise, route FROM offline_ledger WHERE order_id = $1', [orderId]);
    expect(ledger.rows).toEqual([{ amount_paise: 8_100, route: 'direct_transfer' }]);
    expect(await walletBalance(h, 'employer', EMPLOYER)).toBe(before - 9_900);
    expect(await payoutStartsOf(h, orderId)).toHaveLength(1);
  });

  test('when the same webhook is delivered 3 times concurrently and order.paid comes before payment.captured, then there is one paid transition and one payout row', async () => {
    await h.sandbox.control.setWebhookDelivery(false);
    try {
      const placed = await http(h, 'POST', '/v1/orders', order());
      const { orderId, gatewayOrderId } = placed.body.order;
      await h.sandbox.control.payOrder(gatewayOrderId);
      const [orderPaid] = await eventsFor(gatewayOrderId, 'order.paid');
      const [captured] = await eventsFor(gatewayOrderId, 'payment.captured');

      const first = await Promise.all([1, 2, 3].map(() => postWebhook(h, orderPaid!.body, { eventId: orderPaid!.id })));
      expect(first.map((r) => r.status)).toEqual([200, 200, 200]);
      expect(first.filter((r) => r.body.duplicate === false)).toHaveLength(1);
      const second = await Promise.all([1, 2, 3].map(() => postWebhook(h, captured!.body, { eventId: captured!.id })));
      expect(second.map((r) => r.status)).toEqual([200, 200, 200]);

      expect(await orderRow(orderId)).toEqual({ status: 'paid', paid_via: 'webhook' });
      expect(await payoutsOf(orderId)).toHaveLength(1);
      expect((await h.db.query('SELECT count(*)::int AS n FROM offline_ledger WHERE order_id = $1', [orderId])).rows[0].n).toBe(1);
      expect(await payoutStartsOf(h, orderId)).toHaveLength(1);
    } finally {
      await h.sandbox.control.setWebhookDelivery(true);
    }
  });

  test('when a top-up capture webhook comes 3 times concurrently and out of order, then the wallet is credited once', async () => {
    await h.sandbox.control.setWebhookDelivery(false);
    try {
      const before = await walletBalance(h, 'employee', 'emp-42');
      const res = await http(h, 'POST', '/v1/wallets/employee/emp-42/top-ups', { amountPaise: 50_000 });
      expect(res.status).toBe(201);
      const { topupId, gatewayOrderId } = res.body.topup;
      await h.sandbox.control.payOrder(gatewayOrderId);
      const [orderPaid] = await eventsFor(gatewayOrderId, 'order.paid');
      const [captured] = await eventsFor(gatewayOrderId, 'payment.captured');
      await Promise.all([
        ...[1, 2, 3].map(() => postWebhook(h, orderPaid!.body, { eventId: orderPaid!.id })),
        ...[1, 2, 3].map(() => postWebhook(h, captured!.body, { eventId: captured!.id })),
      ]);
      expect(await walletBalance(h, 'employee', 'emp-42')).toBe(before + 50_000);
      const entries = await h.db.query(`SELECT amount_paise FROM wallet_entries WHERE reference = $1`, [topupId]);
      expect(entries.rows).toEqual([{ amount_paise: 50_000 }]);
      expect((await http(h, 'GET', `/v1/top-ups/${topupId}`)).body.topup.status).toBe('credited');
    } finally {
      await h.sandbox.control.setWebhookDelivery(true);
    }
  });

  test('when the browser callback and the webhook race, then there is one effect', async () => {
    const placed = await http(h, 'POST', '/v1/orders', order());
    const { orderId, gatewayOrderId } = placed.body.order;
    const payment = await h.sandbox.control.payOrder(gatewayOrderId); // its webhooks are on their way now
    const signature = hmacSha256Hex(`${gatewayOrderId}|${payment.id}`, h.config.RAZORPAY_KEY_SECRET);
    const callbacks = await Promise.all([1, 2].map(() =>
      http(h, 'POST', `/v1/orders/${orderId}/payment-callback`, { razorpay_order_id: gatewayOrderId, razorpay_payment_id: payment.id, razorpay_signature: signature })));
    expect(callbacks.map((c) => c.status)).toEqual([200, 200]);
    expect(callbacks[0]!.body.order.status).toBe('paid');
    await h.sandbox.control.drainWebhooks();
    expect((await orderRow(orderId)).status).toBe('paid');
    expect(await payoutsOf(orderId)).toHaveLength(1);
    expect(await payoutStartsOf(h, orderId)).toHaveLength(1);
  });

  test('when a payment is only authorised, then nothing is payable; the checkout callback captures it and the order becomes paid', async () => {
    const placed = await http(h, 'POST', '/v1/orders', order());
    const { orderId, gatewayOrderId } = placed.body.order;
    const payment = await h.sandbox.control.authorizeOrder(gatewayOrderId);
    await h.sandbox.control.drainWebhooks();
    expect((await orderRow(orderId)).status).toBe('pending');
    expect((await h.db.query('SELECT status FROM payments WHERE id = $1', [payment.id])).rows).toEqual([{ status: 'authorized' }]);
    expect(await payoutsOf(orderId)).toHaveLength(0);

    const signature = hmacSha256Hex(`${gatewayOrderId}|${payment.id}`, h.config.RAZORPAY_KEY_SECRET);
    // The capture's own webhooks are held until the callback has answered: otherwise they may
    // record the order paid first (paidVia 'webhook'), which is right but not what this proves.
    await h.sandbox.control.setWebhookDelivery(false);
    try {
      const answer = await http(h, 'POST', `/v1/orders/${orderId}/payment-callback`, { razorpay_order_id: gatewayOrderId, razorpay_payment_id: payment.id, razorpay_signature: signature });
      expect(answer.status).toBe(200);
      expect(answer.body.order).toMatchObject({ status: 'paid', paidVia: 'callback' });
    } finally {
      await h.sandbox.control.setWebhookDelivery(true);
    }
    await h.sandbox.control.drainWebhooks(); // the capture's own webhooks now arrive and change nothing
    expect(await payoutsOf(orderId)).toHaveLength(1);
    expect((await h.gateway.fetchPayment(payment.id)).status).toBe('captured');
  });

  test('when the sandbox delivers every event twice and the capture after order.paid, then the end state is the same and replies come well within 5 s', async () => {
    await h.sandbox.control.injectWebhookFault('duplicate', { count: 10 });
    await h.sandbox.control.injectWebhookFault('out_of_order', { events: ['payment.captured'], count: 1 });
    const placed = await http(h, 'POST', '/v1/orders', order());
    const { orderId, gatewayOrderId } = placed.body.order;
    await h.sandbox.control.payOrder(gatewayOrderId);
    await h.sandbox.control.drainWebhooks();
    const delivered = (await h.sandbox.control.webhookEvents()).filter((e) => e.body.includes(gatewayOrderId));
    expect(delivered.every((e) => e.deliveredAt !== null)).toBe(true);
    expect(await orderRow(orderId)).toEqual({ status: 'paid', paid_via: 'webhook' });
    expect(await payoutsOf(orderId)).toHaveLength(1);
    expect(await payoutStartsOf(h, orderId)).toHaveLength(1);

    const [captured] = await eventsFor(gatewayOrderId, 'payment.captured');
    const started = Date.now();
    await Promise.all([1, 2, 3, 4, 5].map(() => postWebhook(h, captured!.body, { eventId: captured!.id })));
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  test('when a payment fails and the bank later authorises it, then the order goes failed → paid', async () => {
    const placed = await http(h, 'POST', '/v1/orders', order());
    const { orderId, gatewayOrderId } = placed.body.order;
    const failed = await h.sandbox.control.failPayment(gatewayOrderId);
    await h.sandbox.control.drainWebhooks();
    expect((await orderRow(orderId)).status).toBe('failed');
    expect(await payoutsOf(orderId)).toHaveLength(0);

    await h.sandbox.control.lateAuthorize(failed.id);
    await h.sandbox.control.drainWebhooks();
    expect(await orderRow(orderId)).toEqual({ status: 'paid', paid_via: 'webhook' });
    expect(await payoutsOf(orderId)).toHaveLength(1);
  });

  test('when concurrent orders together exceed the employer wallet, then only those it covers succeed and the balance never goes negative', async () => {
    await seedPair(h, { employerId: 'emp_thrifty', vendorId: 'ven_idli', commissionBps: 1_000 });
    await topUp(h, 'employer', 'emp_thrifty', 15_000);
    const answers = await Promise.all([1, 2, 3, 4, 5].map(() =>
      http(h, 'POST', '/v1/orders', order({ employerId: 'emp_thrifty', vendorId: 'ven_idli', totalPaise: 5_000, subsidyPaise: 4_000, customerSharePaise: 1_000 }))));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(3);
    const refused = answers.filter((a) => a.status !== 201);
    expect(refused.map((a) => [a.status, a.body.error.code])).toEqual([[409, 'insufficient_wallet_balance'], [409, 'insufficient_wallet_balance']]);
    expect(await walletBalance(h, 'employer', 'emp_thrifty')).toBe(3_000);
    const entries = await h.db.query(`SELECT amount_paise, balance_after_paise FROM wallet_entries WHERE owner_id = 'emp_thrifty' ORDER BY id`);
    expect(entries.rows.map((e) => e.amount_paise)).toEqual([15_000, -4_000, -4_000, -4_000]);
    expect(entries.rows.map((e) => e.balance_after_paise)).toEqual([15_000, 11_000, 7_000, 3_000]);
    expect((await h.db.query(`SELECT count(*)::int AS n FROM orders WHERE employer_id = 'emp_thrifty'`)).rows[0].n).toBe(3);
  });

  test('when a captured payment belongs to no order of ours and its webhook comes three times, then it is refunded exactly once', async () => {
    await h.sandbox.control.setWebhookDelivery(false);
    const orphan = await h.sandbox.control.capturedPaymentWithoutOrder(25_000);
    const [captured] = await eventsFor(orphan.order_id!, 'payment.captured');
    const [orderPaid] = await eventsFor(orphan.order_id!, 'order.paid');
    await h.sandbox.control.setWebhookDelivery(true);
    const answers = await Promise.all([
      ...[1, 2, 3].map(() => postWebhook(h, captured!.body, { eventId: captured!.id })),
      postWebhook(h, orderPaid!.body, { eventId: orderPaid!.id }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    await h.sandbox.control.drainWebhooks();

    const providerRefunds = (await h.sandbox.control.refunds()).filter((r) => r.payment_id === orphan.id);
    expect(providerRefunds).toHaveLength(1);
    expect(providerRefunds[0]).toMatchObject({ amount: 25_000 });
    const ours = await eventually(
      async () => (await h.db.query('SELECT id, status, gateway_refund_id, reason, order_id FROM refunds WHERE payment_id = $1', [orphan.id])).rows,
      (rows) => rows[0]?.status === 'processed',
    );
    expect(ours).toEqual([{ id: providerRefunds[0]!.receipt, status: 'processed', gateway_refund_id: providerRefunds[0]!.id, reason: 'orphan_capture', order_id: null }]);
    expect((await h.db.query('SELECT order_id FROM payments WHERE id = $1', [orphan.id])).rows).toEqual([{ order_id: null }]);
    expect((await h.db.query('SELECT count(*)::int AS n FROM payouts')).rows[0].n).toBe((await h.db.query(`SELECT count(*)::int AS n FROM orders WHERE status = 'paid' AND payment_method <> 'cash'`)).rows[0].n);
  });

  test('when an order is cancelled and its payment is still captured, then the subsidy goes back to the wallet and the capture is refunded once, never paid out', async () => {
    const before = await walletBalance(h, 'employer', EMPLOYER);
    const placed = await http(h, 'POST', '/v1/orders', order());
    const { orderId, gatewayOrderId } = placed.body.order;
    expect((await http(h, 'POST', `/v1/orders/${orderId}/cancel`, undefined, {})).status).toBe(401);
    const cancelled = await http(h, 'POST', `/v1/orders/${orderId}/cancel`, undefined, ops(h));
    expect(cancelled.body.order.status).toBe('cancelled');
    expect((await http(h, 'POST', `/v1/orders/${orderId}/cancel`, undefined, ops(h))).status).toBe(200);
    expect(await walletBalance(h, 'employer', EMPLOYER)).toBe(before);

    await h.sandbox.control.injectWebhookFault('duplicate', { events: ['payment.captured', 'order.paid'], count: 4 });
    const payment = await h.sandbox.control.payOrder(gatewayOrderId); // the customer's stale checkout page still pays
    await h.sandbox.control.drainWebhooks();
    expect((await orderRow(orderId)).status).toBe('cancelled');
    expect(await payoutsOf(orderId)).toHaveLength(0);
    expect((await h.sandbox.control.refunds()).filter((r) => r.payment_id === payment.id)).toHaveLength(1);
    const ours = await eventually(
      async () => (await h.db.query('SELECT reason, order_id, status FROM refunds WHERE payment_id = $1', [payment.id])).rows,
      (rows) => rows[0]?.status === 'processed',
    );
    expect(ours).toEqual([{ reason: 'order_cancelled', order_id: orderId, status: 'processed' }]);
  });

  test('when a paid order is cancelled, then it is refused', async () => {
    const placed = await http(h, 'POST', '/v1/orders', order({ paymentMethod: 'wallet', employeeId: 'emp-wallet-2', customerSharePaise: 0, subsidyPaise: 10_000 }));
    const answer = await http(h, 'POST', `/v1/orders/${placed.body.order.orderId}/cancel`, undefined, ops(h));
    expect([answer.status, answer.body.error.code]).toEqual([409, 'order_not_cancellable']);
  });

  test('when the vendor confirms a cash order, then it is paid and the ledger owes subsidy − commission (negative here)', async () => {
    const placed = await http(h, 'POST', '/v1/orders', order({ paymentMethod: 'cash', subsidyPaise: 1_000, customerSharePaise: 9_000 }));
    expect(placed.status).toBe(201);
    expect(placed.body.checkout).toBeNull();
    const { orderId } = placed.body.order;
    expect((await http(h, 'POST', `/v1/orders/${orderId}/cash-confirmation`, undefined, {})).status).toBe(401);
    const counter = await vendorKey(h, VENDOR);
    const confirmed = await http(h, 'POST', `/v1/orders/${orderId}/cash-confirmation`, undefined, { ...counter, 'x-actor': 'dosa-counter-1' });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.order.status).toBe('paid');
    expect((await http(h, 'POST', `/v1/orders/${orderId}/cash-confirmation`, undefined, ops(h))).status).toBe(200);
    const ledger = await h.db.query('SELECT amount_paise, route FROM offline_ledger WHERE order_id = $1', [orderId]);
    expect(ledger.rows).toEqual([{ amount_paise: -900, route: 'cash' }]);
    expect((await h.db.query('SELECT paid_confirmed_by FROM orders WHERE id = $1', [orderId])).rows[0].paid_confirmed_by).toMatch(/^key:test-vendor-.+ \(dosa-counter-1\)$/);
    expect(await payoutsOf(orderId)).toHaveLength(0);
  });

  test('when an employee pays from their wallet, then the order is paid at once and the vendor net is payable', async () => {
    await topUp(h, 'employee', 'emp-wallet-1', 10_000);
    const placed = await http(h, 'POST', '/v1/orders', order({ employeeId: 'emp-wallet-1', paymentMethod: 'wallet', subsidyPaise: 6_000, customerSharePaise: 4_000 }));
    expect(placed.status).toBe(201);
    expect(placed.body.order).toMatchObject({ status: 'paid', paidVia: 'wallet', gatewayOrderId: null });
    expect(await walletBalance(h, 'employee', 'emp-wallet-1')).toBe(6_000);
    expect(await payoutsOf(placed.body.order.orderId)).toEqual([expect.objectContaining({ amount_paise: 8_100, status: 'pending' })]);
  });

  test('when an unsubsidised order is paid online, then its gateway order carries the split and no payout is written', async () => {
    const placed = await http(h, 'POST', '/v1/orders', order({ subsidyPaise: 0, customerSharePaise: 10_000 }));
    const { orderId, gatewayOrderId } = placed.body.order;
    expect(placed.body.order).toMatchObject({ splitTransferPaise: 8_100, splitLinkedAccountId: linkedAccountId });
    await h.sandbox.control.payOrder(gatewayOrderId);
    await h.sandbox.control.drainWebhooks();
    expect((await orderRow(orderId)).status).toBe('paid');
    expect(await payoutsOf(orderId)).toHaveLength(0);
    const split = await h.db.query('SELECT amount_paise, linked_account_id, status FROM split_transfers WHERE order_id = $1', [orderId]);
    expect(split.rows).toEqual([{ amount_paise: 8_100, linked_account_id: linkedAccountId, status: expect.stringMatching(/expected|processed/) }]);
    const providerSplits = (await h.sandbox.control.transfers({ recipient: linkedAccountId })).filter((t) => t.source === gatewayOrderId);
    expect(providerSplits).toHaveLength(1);
    // The split's transfer.processed webhook settles our row, so the order stays out of the open offline ledger.
    const settled = await eventually(
      async () => (await h.db.query('SELECT status, provider_transfer_id FROM split_transfers WHERE order_id = $1', [orderId])).rows[0],
      (row) => row?.status === 'processed',
    );
    expect(settled).toEqual({ status: 'processed', provider_transfer_id: providerSplits[0]!.id });
    expect((await h.db.query('SELECT count(*)::int AS n FROM offline_ledger_open WHERE order_id = $1', [orderId])).rows[0].n).toBe(0);
  });

  test('when the pair is corporate_direct, then a paid order records an obligation and no payout', async () => {
    await seedPair(h, { employerId: EMPLOYER, vendorId: 'ven_corp', commissionBps: 1_200, settlementMode: 'corporate_direct' });
    const placed = await http(h, 'POST', '/v1/orders', order({ vendorId: 'ven_corp', paymentMethod: 'wallet', employeeId: 'emp-wallet-1', subsidyPaise: 10_000, customerSharePaise: 0 }));
    expect(placed.body.order.status).toBe('paid');
    const { orderId } = placed.body.order;
    expect((await h.db.query('SELECT amount_paise FROM vendor_obligations WHERE order_id = $1', [orderId])).rows).toEqual([{ amount_paise: 8_800 }]);
    expect(await payoutsOf(orderId)).toHaveLength(0);
  });

  test('when Razorpay fails to create the order, then the client gets 502 and a retry with the same reference gets the same order with its gateway order', async () => {
    const body = order();
    await h.sandbox.control.injectFault({ endpoint: 'orders.create', fault: { kind: 'server_error_before' }, calls: [1] });
    const failed = await http(h, 'POST', '/v1/orders', body);
    expect([failed.status, failed.body.error.code]).toEqual([502, 'gateway_unavailable']);
    await h.sandbox.control.clearFaults();
    const retried = await http(h, 'POST', '/v1/orders', body);
    expect(retried.status).toBe(200);
    expect(retried.body.order.gatewayOrderId).toMatch(/^order_/);
    const rows = await h.db.query('SELECT id, gateway_order_id FROM orders WHERE client_reference = $1', [body.clientReference]);
    expect(rows.rows).toEqual([{ id: retried.body.order.orderId, gateway_order_id: retried.body.order.gatewayOrderId }]);
    expect((await http(h, 'POST', '/v1/orders', { ...body, totalPaise: 20_000, subsidyPaise: 19_900 })).body.error.code).toBe('client_reference_reused');
  });

  test('when the refund answer is lost after Razorpay made it, then asking again with the same receipt makes no second refund and the webhook records it', async () => {
    await h.sandbox.control.injectFault({ endpoint: 'refunds.create', fault: { kind: 'drop_after_commit' }, calls: [1] });
    const orphan = await h.sandbox.control.capturedPaymentWithoutOrder(12_300);
    await h.sandbox.control.drainWebhooks();
    const ours = await eventually(
      async () => (await h.db.query('SELECT id, status, gateway_refund_id FROM refunds WHERE payment_id = $1', [orphan.id])).rows,
      (rows) => rows[0]?.status === 'processed',
    );
    await h.sandbox.control.clearFaults();
    const made = (await h.sandbox.control.refunds()).filter((r) => r.payment_id === orphan.id);
    expect(made).toHaveLength(1);
    expect(ours).toEqual([{ id: made[0]!.receipt, status: 'processed', gateway_refund_id: made[0]!.id }]);
  });

  test('when admin and top-up requests are malformed or unauthenticated, then they are refused and nothing is written', async () => {
    const before = await snapshot(h.db);
    const refusals = await Promise.all([
      http(h, 'POST', '/v1/admin/vendors', { id: 'ven_x', name: 'X', linkedAccountId: 'acc_short' }, admin(h)),
      http(h, 'POST', '/v1/admin/vendors', { id: 'ven_x', name: 'X' }, {}),
      http(h, 'PUT', `/v1/admin/employers/${EMPLOYER}/vendors/ven_nobody`, { commissionBps: 1_000 }, admin(h)),
      http(h, 'PUT', `/v1/admin/employers/${EMPLOYER}/vendors/${VENDOR}`, { commissionBps: 10_001 }, admin(h)),
      http(h, 'PUT', `/v1/admin/employers/${EMPLOYER}/vendors/${VENDOR}`, { commissionBps: 1_000, settlementMode: 'barter' }, admin(h)),
      http(h, 'POST', '/v1/wallets/employer/emp_nobody/top-ups', { amountPaise: 10_000 }),
      http(h, 'POST', '/v1/wallets/employer/' + EMPLOYER + '/top-ups', { amountPaise: 99 }),
      http(h, 'POST', '/v1/wallets/robot/r1/top-ups', { amountPaise: 10_000 }),
    ]);
    expect(refusals.map((r) => [r.status, r.body.error.code])).toEqual([
      [400, 'invalid_request'], [401, 'unauthorized'], [422, 'unknown_vendor'], [400, 'invalid_request'], [400, 'invalid_request'],
      [422, 'unknown_employer'], [400, 'invalid_request'], [400, 'invalid_request'],
    ]);
    expect(await snapshot(h.db)).toEqual(before);
  });

  describe('bad input: a clear 4xx and the database unchanged', () => {
    let validBody: string;
    let validEventId: string;
    let pendingOrderId: string;

    beforeAll(async () => {
      await h.sandbox.control.setWebhookDelivery(false);
      const placed = await http(h, 'POST', '/v1/orders', order());
      pendingOrderId = placed.body.order.orderId;
      await h.sandbox.control.payOrder(placed.body.order.gatewayOrderId);
      const [captured] = await eventsFor(placed.body.order.gatewayOrderId, 'payment.captured');
      validBody = captured!.body;
      validEventId = captured!.id;
    });

    afterAll(async () => {
      await h.sandbox.control.setWebhookDelivery(true);
    });

    const withPayment = (change: (payment: Record<string, unknown>) => void): string => {
      const envelope = JSON.parse(validBody);
      change(envelope.payload.payment.entity);
      return JSON.stringify(envelope);
    };

    const webhookCases: Array<[string, () => Promise<{ status: number; body: any }>, number, string]> = [ // eslint-disable-line @typescript-eslint/no-explicit-any
      ['a forged signature', () => postWebhook(h, validBody, { eventId: validEventId, signature: hmacSha256Hex(validBody, 'not-the-webhook-secret') }), 401, 'invalid_signature'],
      ['one changed byte', () => postWebhook(h, validBody.replace('"amount":100', '"amount":900'), { eventId: validEventId, signature: hmacSha256Hex(validBody, h.config.RAZORPAY_WEBHOOK_SECRET) }), 401, 'invalid_signature'],
      ['a missing signature header', () => postWebhook(h, validBody, { eventId: validEventId, signature: null }), 401, 'invalid_signature'],
      ['malformed JSON', () => postWebhook(h, validBody.slice(0, -2), { eventId: validEventId }), 400, 'malformed_json'],
      ['a missing event id', () => postWebhook(h, validBody, { eventId: '' }), 400, 'missing_event_id'],
    ];
    // Signed, but refused by our schema: quarantined and answered 2xx (webhooks.quarantine.test.ts).
    // An unknown but well-formed event name is acknowledged (webhooks.acknowledge.test.ts); a name that is not one is not an event.
    const quarantinedCases: Array<[string, () => string]> = [
      ['an ill-formed event name', () => validBody.replace('"event":"payment.captured"', '"event":"Payment Captured"')],
      ['a negative amount', () => withPayment((p) => { p.amount = -100; })],
      ['a non-integer amount', () => withPayment((p) => { p.amount = 100.5; })],
    ];

    test.each(quarantinedCases)('when a signed webhook has %s, then it is quarantined (2xx) and nothing else is written', async (_name, body) => {
      const before = await snapshot(h.db);
      const eventId = `evt_${randomUUID()}`;
      const answer = await postWebhook(h, body(), { eventId });
      expect([answer.status, answer.body.setAside]).toEqual([200, 'schema_refused']);
      expect(await snapshot(h.db)).toEqual(before);
      expect((await h.db.query('SELECT reason FROM quarantined_webhooks WHERE event_id = $1', [eventId])).rows).toEqual([{ reason: 'schema_refused' }]);
    });

    test.each(webhookCases)('when a webhook has %s, then it is refused and nothing is written', async (_name, send, status, code) => {
      const before = await snapshot(h.db);
      const answer = await send();
      expect([answer.status, answer.body.error.code]).toEqual([status, code]);
      expect(await snapshot(h.db)).toEqual(before);
    });

    const orderCases: Array<[string, Record<string, unknown>, number, string]> = [
      ['shares that do not add up', { subsidyPaise: 9_900, customerSharePaise: 99 }, 400, 'shares_do_not_add_up'],
      ['a negative total', { totalPaise: -10_000, subsidyPaise: 0, customerSharePaise: -10_000 }, 400, 'invalid_request'],
      ['a non-integer subsidy', { subsidyPaise: 9_899.5, customerSharePaise: 100.5 }, 400, 'invalid_request'],
      ['an amount sent as a string', { totalPaise: '10000' }, 400, 'invalid_request'],
      ['an unknown vendor', { vendorId: 'ven_nobody' }, 422, 'unknown_vendor'],
      ['an unknown payment method', { paymentMethod: 'cheque' }, 400, 'invalid_request'],
      ['a subsidy the wallet cannot cover', { totalPaise: 900_000_000, subsidyPaise: 899_999_900 }, 409, 'insufficient_wallet_balance'],
      ['an online share Razorpay cannot take', { subsidyPaise: 9_950, customerSharePaise: 50 }, 422, 'customer_share_below_gateway_minimum'],
    ];

    test.each(orderCases)('when an order has %s, then it is refused and nothing is written', async (_name, overrides, status, code) => {
      const before = await snapshot(h.db);
      const answer = await http(h, 'POST', '/v1/orders', order(overrides));
      expect([answer.status, answer.body.error.code]).toEqual([status, code]);
      expect(await snapshot(h.db)).toEqual(before);
    });

    test('when a checkout callback carries a forged signature, then it is refused and nothing is written', async () => {
      const gatewayOrderId = (await h.db.query('SELECT gateway_order_id FROM orders WHERE id = $1', [pendingOrderId])).rows[0].gateway_order_id;
      const paymentId = JSON.parse(validBody).payload.payment.entity.id;
      const before = await snapshot(h.db);
      const answer = await http(h, 'POST', `/v1/orders/${pendingOrderId}/payment-callback`, {
        razorpay_order_id: gatewayOrderId, razorpay_payment_id: paymentId, razorpay_signature: hmacSha256Hex(`${gatewayOrderId}|${paymentId}`, 'wrong-secret'),
      });
      expect([answer.status, answer.body.error.code]).toEqual([400, 'invalid_payment_signature']);
      expect(await snapshot(h.db)).toEqual(before);
    });

    test('when the untouched webhook is then delivered, then it is accepted and the order becomes paid (the cases above were refused for their fault alone)', async () => {
      const answer = await postWebhook(h, validBody, { eventId: validEventId });
      expect(answer.status).toBe(200);
      expect((await orderRow(pendingOrderId)).status).toBe('paid');
    });
  });
});
