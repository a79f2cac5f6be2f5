/** Issue 19 item 4: a refund made outside the app (the Razorpay Dashboard; here the gateway adapter's
 * createRefund with a receipt that is not ours stands in for it) of the payment a paid order kept.
 * Before the payout sends it is held in review (CUSTOMER_REFUNDED) and nothing is sent after
 * resume; after the payout settled the vendor's share of the refund is a negative offline-ledger
 * line and one recon exception carries it; a duplicate or replayed webhook changes nothing. Real API
 * (signed webhooks from the sandbox), Temporal worker, PostgreSQL and the sandbox. */
import { randomBytes, randomUUID } from 'node:crypto';
import { missedWebhookSweepWorkflowId } from '../../src/contracts/missedWebhookSweep';
import type { Db } from '../../src/db/pool';
import type { Gateway } from '../../src/gateway/types';
import { rebuildLedger } from '../../src/ledger/backfill';
import { setTransfersPaused } from '../../src/payouts/killSwitch';
import { http, postWebhook, uniqueRef, type MoneyInHarness } from './moneyinHarness';
import { eventually, payoutRow } from './payoutSeed';
import { opsApi, startPayoutStackWithPair, type PayoutStack } from './payoutStack';
import { missedWebhookSweepWorkflow } from '../../src/workflows';

const EMPLOYER = 'emp_outside_refund';
const VENDOR = 'ven_outside_refund';
/** 10 000 paise, 9 000 of them subsidy: the customer pays 1 000 online; 19% commission leaves 8 100. */
const ORDER = { totalPaise: 10_000, subsidyPaise: 9_000, customerSharePaise: 1_000 };
const NET = 8_100;

describe('refunds made outside the app on the payment a paid order kept', () => {
  let stack: PayoutStack;
  let db: Db;
  let gateway: Gateway;
  let h: MoneyInHarness;
  let linkedAccountId: string;

  beforeAll(async () => {
    ({ stack, h, linkedAccountId } = await startPayoutStackWithPair({
      name: 'outside-refunds', employerId: EMPLOYER, vendorId: VENDOR,
      env: { PAYOUT_RETRY_BACKOFF_MS: '300', PAYOUT_RETRY_BACKOFF_MAX_MS: '600', PAYOUT_SETTLEMENT_POLL_MS: '1000', PAYOUT_HUMAN_RECHECK_MS: '60000', LATE_CAPTURE_RECHECK_MS: '1000' },
    }));
    db = stack.db;
    gateway = h.gateway;
  });

  afterAll(async () => {
    await stack?.close();
  });

  afterEach(async () => {
    await setTransfersPaused(db, { paused: false, actor: 'test', reason: 'reset' });
    // A fault one test leaves (a listing that cannot be read) would hold the next test's once-more look.
    await control().clearFaults();
  });

  const control = () => stack.sandbox.control;
  const transfersFor = async (orderId: string) => (await control().transfers({ recipient: linkedAccountId })).filter((t) => (t.notes as Record<string, string>).order_id === orderId);
  const statusIs = (orderId: string, ...statuses: string[]) => eventually(() => payoutRow(db, orderId), (p) => !!p && statuses.includes(p.status));

  async function payOnlineOrder(): Promise<{ orderId: string; paymentId: string }> {
    const placed = await http(h, 'POST', '/v1/orders', {
      clientReference: uniqueRef('outside'), employerId: EMPLOYER, vendorId: VENDOR, employeeId: 'e-outside', ...ORDER, paymentMethod: 'online',
    });
    expect(placed.status).toBe(201);
    const payment = await control().payOrder(placed.body.order.gatewayOrderId);
    return { orderId: placed.body.order.orderId, paymentId: payment.id };
  }

  /** As the Razorpay Dashboard would: a refund with no receipt of ours. */
  async function refundFromDashboard(paymentId: string, amountPaise: number): Promise<string> {
    const outcome = await gateway.createRefund({ paymentId, amountPaise, receipt: `dashboard-${randomUUID().slice(0, 12)}` });
    if (outcome.type !== 'accepted') throw new Error(`the sandbox refused the refund: ${JSON.stringify(outcome)}`);
    await control().drainWebhooks();
    return outcome.entity.id;
  }

  const outsideRefund = async (refundId: string) => (await db.query('SELECT * FROM outside_refunds WHERE id = $1', [refundId])).rows[0];
  const clawbacks = async (orderId: string) =>
    (await db.query('SELECT order_id, outside_refund_id, vendor_id, amount_paise::int AS amount_paise, route FROM offline_ledger WHERE clawback_order_id = $1', [orderId])).rows;
  const exceptionsFor = async (orderId: string) =>
    (await db.query("SELECT key, reason, class, severity, status, expected_paise::int AS expected_paise, actual_paise::int AS actual_paise, updated_at FROM recon_exceptions WHERE order_id = $1 AND reason = 'refund-outside-app'", [orderId])).rows;

  /** One run of the missed-webhook sweep (the Schedule's workflow), as the Schedule would start it. */
  const sweep = () => stack.temporal.client.workflow.execute(missedWebhookSweepWorkflow, {
    workflowId: missedWebhookSweepWorkflowId(randomBytes(4).toString('hex')), taskQueue: stack.config.TEMPORAL_TASK_QUEUE, args: [{ olderThanMs: 1 }],
  });

  test('when the customer is refunded from the dashboard while the payout waits on paused transfers, then the payout is held in review with CUSTOMER_REFUNDED and nothing is sent after the resume', async () => {
    await setTransfersPaused(db, { paused: true, actor: 'test', reason: 'hold the payout before it sends' });
    const { orderId, paymentId } = await payOnlineOrder();
    await statusIs(orderId, 'pending');

    const refundId = await refundFromDashboard(paymentId, ORDER.customerSharePaise);

    const held = await statusIs(orderId, 'review', 'processing', 'accepted', 'settled');
    expect(held).toMatchObject({ status: 'review', last_code: 'CUSTOMER_REFUNDED', provider_transfer_id: null });
    await eventually(() => outsideRefund(refundId), (r) => r?.status === 'processed');
    expect(await outsideRefund(refundId)).toMatchObject({ payment_id: paymentId, order_id: orderId, amount_paise: ORDER.customerSharePaise, action: 'payout_held', payout_status: 'pending' });

    const queue = await opsApi(stack)('GET', '/ops/payouts?reason=CUSTOMER_REFUNDED');
    expect(queue.body.items).toEqual([expect.objectContaining({ orderId, status: 'review', reason: expect.objectContaining({ code: 'CUSTOMER_REFUNDED', words: expect.stringMatching(/refunded outside the app/) }) })]);

    expect((await opsApi(stack)('POST', '/ops/transfers/resume', { reason: 'the bank is back' })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 2_000));
    expect(await payoutRow(db, orderId)).toMatchObject({ status: 'review', last_code: 'CUSTOMER_REFUNDED' });
    expect(await transfersFor(orderId)).toEqual([]);
    expect(await clawbacks(orderId)).toEqual([]);
  });

  test('when the customer is refunded from the dashboard while the payout waits on paused transfers and Razorpay refuses every read of the refund, then after the resume the send gate holds the payout (nothing sent), and the refund, once read, is recorded as that hold', async () => {
    await setTransfersPaused(db, { paused: true, actor: 'test', reason: 'hold the payout before it sends' });
    const { orderId, paymentId } = await payOnlineOrder();
    await statusIs(orderId, 'pending');
    await control().injectFault({ endpoint: 'refunds.fetch', fault: { kind: 'rate_limited' }, probability: 1 });
    try {
      const refundId = await refundFromDashboard(paymentId, ORDER.customerSharePaise);
      await eventually(async () => (await control().callCounts())['refunds.fetch'] ?? 0, (n) => n > 0);
      expect(await outsideRefund(refundId)).toBeUndefined();
      expect(await payoutRow(db, orderId)).toMatchObject({ status: 'pending' });

      expect((await opsApi(stack)('POST', '/ops/transfers/resume', { reason: 'the bank is back' })).status).toBe(200);
      const held = await statusIs(orderId, 'review', 'accepted', 'settled');
      expect(held).toMatchObject({ status: 'review', last_code: 'CUSTOMER_REFUNDED', provider_transfer_id: null });
      expect(await transfersFor(orderId)).toEqual([]);

      await control().clearFaults();
      expect(await eventually(() => outsideRefund(refundId), (r) => !!r, 60_000)).toMatchObject({ action: 'payout_held', payout_status: 'processing', clawback_paise: null });
      expect(await payoutRow(db, orderId)).toMatchObject({ status: 'review', last_code: 'CUSTOMER_REFUNDED' });
      expect(await transfersFor(orderId)).toEqual([]);
      expect(await clawbacks(orderId)).toEqual([]);
    } finally {
      await control().clearFaults();
    }
  });

  test('when a refund announced by webhook while Razorpay refuses its read turns out, once read, to be one of ours (our request\'s row committed after the webhook), then its hint is answered: nothing waits on it and no outside refund is recorded', async () => {
    await setTransfersPaused(db, { paused: true, actor: 'test', reason: 'hold the payout before it sends' });
    const { orderId, paymentId } = await payOnlineOrder();
    await statusIs(orderId, 'pending');
    const hint = async (refundId: string) => (await db.query('SELECT refund_id FROM refund_hints WHERE refund_id = $1', [refundId])).rows[0];
    await control().injectFault({ endpoint: 'refunds.fetch', fault: { kind: 'rate_limited' }, probability: 1 });
    try {
      const receipt = `ours-${randomUUID().slice(0, 12)}`;
      const made = await gateway.createRefund({ paymentId, amountPaise: ORDER.customerSharePaise, receipt });
      if (made.type !== 'accepted') throw new Error(`the sandbox refused the refund: ${JSON.stringify(made)}`);
      await control().drainWebhooks();
      await eventually(() => hint(made.entity.id), (h) => !!h);
      // Our request's row, written in a transaction that committed after the webhook's.
      await db.query(`INSERT INTO refunds (id, payment_id, order_id, amount_paise, reason, status) VALUES ($1, $2, $3, $4, 'test_ours_late', 'requested')`,
        [receipt, paymentId, orderId, ORDER.customerSharePaise]);
      await control().clearFaults();
      await eventually(async () => (await db.query('SELECT gateway_refund_id FROM refunds WHERE id = $1', [receipt])).rows[0], (r) => r?.gateway_refund_id === made.entity.id, 60_000);
      expect(await eventually(() => hint(made.entity.id), (h) => !h, 10_000)).toBeUndefined();
      expect(await outsideRefund(made.entity.id)).toBeUndefined();
    } finally {
      await control().clearFaults();
    }
  });

  test('when the customer is refunded from the dashboard while the payout is claimed but its request has not left (the capture check is slow), then the payout is held in review with CUSTOMER_REFUNDED, nothing is sent and the vendor owes nothing back', async () => {
    // The listing cannot be read, so the send fetches the capture, and that fetch takes 3 s: the payout
    // sits claimed (processing, no request sent).
    await control().injectFault({ endpoint: 'payments.list', fault: { kind: 'server_error_before' }, probability: 1 });
    await control().injectFault({ endpoint: 'payments.fetch', fault: { kind: 'latency', ms: 3_000 }, calls: [1] });
    const { orderId, paymentId } = await payOnlineOrder();
    await eventually(async () => (await db.query('SELECT status, request_sent_at FROM payouts WHERE order_id = $1', [orderId])).rows[0],
      (r) => r?.status === 'processing' && r.request_sent_at === null, 10_000);

    const refundId = await refundFromDashboard(paymentId, ORDER.customerSharePaise);

    await eventually(() => outsideRefund(refundId), (r) => !!r);
    expect(await outsideRefund(refundId)).toMatchObject({ action: 'payout_held', payout_status: 'processing', clawback_paise: null });
    const held = await statusIs(orderId, 'review', 'accepted', 'settled');
    expect(held).toMatchObject({ status: 'review', last_code: 'CUSTOMER_REFUNDED', provider_transfer_id: null });
    await new Promise((r) => setTimeout(r, 3_500)); // the slow capture check answers; its gate finds the hold
    expect(await payoutRow(db, orderId)).toMatchObject({ status: 'review', last_code: 'CUSTOMER_REFUNDED' });
    expect(await transfersFor(orderId)).toEqual([]);
    expect(await clawbacks(orderId)).toEqual([]);
  });

  test('when the customer is partly refunded from the dashboard after the payout settled, then the vendor owes back its share (rounded down) in a negative offline-ledger line with one exception, and a duplicate or replayed webhook changes nothing', async () => {
    const { orderId, paymentId } = await payOnlineOrder();
    await statusIs(orderId, 'settled');

    const refundId = await refundFromDashboard(paymentId, 333); // 8 100 × 333 / 1 000 = 2 697.3
    const owed = 2_697;

    await eventually(() => outsideRefund(refundId), (r) => r?.status === 'processed');
    expect(await outsideRefund(refundId)).toMatchObject({ action: 'owed_back', payout_status: 'settled', clawback_paise: owed, captured_paise: ORDER.customerSharePaise });
    expect(await clawbacks(orderId)).toEqual([{ order_id: null, outside_refund_id: refundId, vendor_id: VENDOR, amount_paise: -owed, route: 'refund_clawback' }]);
    const [exception, ...more] = await exceptionsFor(orderId);
    expect(more).toEqual([]);
    expect(exception).toMatchObject({ key: `refund-outside-app|${refundId}`, class: 'unmatched', severity: 'high', status: 'open', expected_paise: owed, actual_paise: 333 });
    // The vendor's own line is untouched and the clawback is in the open offline ledger, to net off.
    expect((await db.query('SELECT amount_paise::int AS a FROM offline_ledger WHERE order_id = $1', [orderId])).rows).toEqual([{ a: NET }]);
    expect((await db.query(`SELECT amount_paise::int AS a FROM offline_ledger_open WHERE vendor_id = $1 AND route = 'refund_clawback'`, [VENDOR])).rows).toEqual([{ a: -owed }]);
    expect(await payoutRow(db, orderId)).toMatchObject({ status: 'settled' });

    // Razorpay delivers again (same event id) and a replay comes under a new id: nothing changes.
    const delivered = (await control().webhookEvents()).filter((e) => e.event.startsWith('refund.') && e.body.includes(refundId));
    expect(delivered.map((e) => e.event).sort()).toEqual(['refund.created', 'refund.processed']);
    for (const e of delivered) {
      expect((await postWebhook(h, e.body, { eventId: e.id })).status).toBe(200);
      expect((await postWebhook(h, e.body, { eventId: `evt_${randomUUID().replace(/-/g, '').slice(0, 14)}` })).status).toBe(200);
    }
    await new Promise((r) => setTimeout(r, 500));
    expect(await clawbacks(orderId)).toHaveLength(1);
    expect(await exceptionsFor(orderId)).toEqual([exception]);
    expect((await db.query('SELECT count(*)::int AS n FROM outside_refunds WHERE order_id = $1', [orderId])).rows).toEqual([{ n: 1 }]);
  });

  test('when the capture\'s webhooks are lost and the customer is refunded in full from the dashboard before the sweep asks, then the sweep pays the order (the capture happened), its payout is held by the capture check with nothing sent, and the once-more look records the refund as made outside the app', async () => {
    // A database restored to before the capture's webhook was answered is the same story: the
    // campaign's --db-rollback found the order left unpaid, then expired, and our own refund of a
    // payment already refunded asked and rejected.
    await control().setWebhookDelivery(false);
    let orderId: string;
    let refundId: string;
    try {
      const paid = await payOnlineOrder();
      orderId = paid.orderId;
      const refund = await gateway.createRefund({ paymentId: paid.paymentId, amountPaise: ORDER.customerSharePaise, receipt: `dashboard-${randomUUID().slice(0, 12)}` });
      if (refund.type !== 'accepted') throw new Error(`the sandbox refused the refund: ${JSON.stringify(refund)}`);
      refundId = refund.entity.id;
      expect((await gateway.fetchPayment(paid.paymentId)).status).toBe('refunded');

      await sweep();
      expect((await db.query('SELECT status, paid_via FROM orders WHERE id = $1', [orderId])).rows[0]).toEqual({ status: 'paid', paid_via: 'sweep' });
      expect(await statusIs(orderId, 'review', 'settled', 'parked')).toMatchObject({ status: 'review', last_code: 'CAPTURE_NOT_CONFIRMED', provider_transfer_id: null });
      await new Promise((r) => setTimeout(r, 1_100)); // past LATE_CAPTURE_RECHECK_MS: the once-more look is due
      await sweep();
      await eventually(() => outsideRefund(refundId), (r) => !!r);
    } finally {
      await control().setWebhookDelivery(true);
    }
    expect(await outsideRefund(refundId)).toMatchObject({ order_id: orderId, action: 'reported', payout_status: 'review', clawback_paise: null });
    expect(await exceptionsFor(orderId)).toEqual([expect.objectContaining({ key: `refund-outside-app|${refundId}`, status: 'open' })]);
    // The webhooks delivered late (the capture, the refund) change nothing, and nothing of ours was asked.
    await control().drainWebhooks();
    await new Promise((r) => setTimeout(r, 500));
    expect(await transfersFor(orderId)).toEqual([]);
    expect(await clawbacks(orderId)).toEqual([]);
    expect(await payoutRow(db, orderId)).toMatchObject({ status: 'review', last_code: 'CAPTURE_NOT_CONFIRMED' });
    expect((await db.query('SELECT status FROM orders WHERE id = $1', [orderId])).rows[0]).toEqual({ status: 'paid' });
    expect((await db.query('SELECT count(*)::int AS n FROM refunds WHERE order_id = $1', [orderId])).rows).toEqual([{ n: 0 }]);
    expect((await db.query('SELECT count(*)::int AS n FROM outside_refunds WHERE order_id = $1', [orderId])).rows).toEqual([{ n: 1 }]);
  });

  test('when the customer is refunded from the dashboard while the transfer request is in flight and the transfer is then rejected, then the vendor owes nothing back (the clawback is taken back) and the payout is held in review', async () => {
    await control().injectFault({ endpoint: 'transfers.create', fault: { kind: 'latency', ms: 3_000 }, calls: [1] });
    const { orderId, paymentId } = await payOnlineOrder();
    await eventually(async () => (await db.query('SELECT status, request_sent_at FROM payouts WHERE order_id = $1', [orderId])).rows[0],
      (r) => r?.status === 'processing' && r.request_sent_at !== null, 10_000);
    try {
      // While the request is in the air the account is suspended (Razorpay will refuse it) and the
      // customer is refunded: the refund, seen first, owes the vendor its share back.
      await control().setLinkedAccountStatus(linkedAccountId, 'suspended');
      const refundId = await refundFromDashboard(paymentId, ORDER.customerSharePaise);
      await eventually(() => outsideRefund(refundId), (r) => !!r);
      expect(await outsideRefund(refundId)).toMatchObject({ payout_status: 'processing' });

      // The transfer is rejected: the vendor was never paid, so it owes nothing back.
      const held = await statusIs(orderId, 'review', 'settled');
      expect(held).toMatchObject({ status: 'review', last_code: 'CUSTOMER_REFUNDED', provider_transfer_id: null });
      expect(await outsideRefund(refundId)).toMatchObject({ action: 'payout_held', clawback_paise: null });
      expect(await clawbacks(orderId)).toEqual([]);
      expect((await transfersFor(orderId)).filter((t) => t.status === 'processed')).toEqual([]);
      // The ledger took the clawback back with its line (campaign finding 7: it kept the obligation).
      expect((await db.query(`SELECT cause, amount_paise::int AS amount_paise FROM ledger_obligations WHERE order_id = $1 AND cause = 'clawback'`, [orderId])).rows).toEqual([]);
      expect((await rebuildLedger(db)).disagreements).toEqual([]);
    } finally {
      await control().setLinkedAccountStatus(linkedAccountId, 'activated');
    }
  });

  test('when paid orders are due their once-more look, then the sweep lists the payments by window, a page per call, with no GET /orders/:id/payments, and a refund from the Dashboard among them whose webhooks were lost is recorded as made outside the app', async () => {
    // Issue 37: the once-more look asked GET /orders/:id/payments for every paid online order.
    const paid = [await payOnlineOrder(), await payOnlineOrder(), await payOnlineOrder(), await payOnlineOrder()];
    for (const p of paid) await statusIs(p.orderId, 'settled');
    await control().setWebhookDelivery(false);
    let refundId: string;
    try {
      const outcome = await gateway.createRefund({ paymentId: paid[2]!.paymentId, amountPaise: ORDER.customerSharePaise, receipt: `dashboard-${randomUUID().slice(0, 12)}` });
      if (outcome.type !== 'accepted') throw new Error(`the sandbox refused the refund: ${JSON.stringify(outcome)}`);
      refundId = outcome.entity.id;
      const before = await control().callCounts();
      let recheckPages = 0;
      await eventually(async () => {
        await new Promise((r) => setTimeout(r, 300));
        recheckPages += (await sweep()).recheckPages ?? 0;
        return outsideRefund(refundId);
      }, (r) => !!r, 30_000);
      const after = await control().callCounts();
      expect((after['orders.payments'] ?? 0) - (before['orders.payments'] ?? 0)).toBe(0);
      expect(recheckPages).toBeGreaterThanOrEqual(1);
      expect((after['payments.list'] ?? 0) - (before['payments.list'] ?? 0)).toBe(recheckPages);
    } finally {
      await control().setWebhookDelivery(true);
    }
    expect(await outsideRefund(refundId)).toMatchObject({ order_id: paid[2]!.orderId, action: 'owed_back', clawback_paise: NET });
    const looked = await db.query('SELECT count(*)::int AS n FROM orders WHERE id = ANY($1) AND payment_checked_at > paid_at', [paid.map((p) => p.orderId)]);
    expect(looked.rows).toEqual([{ n: 4 }]);
    await control().drainWebhooks();
  });
});
