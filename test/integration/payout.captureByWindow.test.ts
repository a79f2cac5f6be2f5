/** Issue 37, the `daily` goal: an online order of a batched pair waits for its cutoff anyway, so its
 * capture is confirmed by the missed-webhook sweep's once-more look window (GET /payments?from&to),
 * which also serves as its once-more look, not by a capture listing pass of its own: a daily order
 * costs no read of its own. A capture the window does not show is fetched alone, once, and a forged
 * one still moves no money. Real API (signed webhooks), Temporal worker, PostgreSQL and the sandbox,
 * whose call counts and ledger say what reached Razorpay. */
import { randomBytes, randomUUID } from 'node:crypto';
import { missedWebhookSweepWorkflowId } from '../../src/contracts/missedWebhookSweep';
import { payoutWorkflowId } from '../../src/contracts/payout';
import { closeBatchNowSignal, payoutBatchWorkflowId } from '../../src/contracts/payoutBatch';
import type { Db } from '../../src/db/pool';
import { missedWebhookSweepWorkflow, payoutSweepWorkflow } from '../../src/workflows';
import { http, postWebhook, uniqueRef, type MoneyInHarness } from './moneyinHarness';
import { eventually, payoutRow, recordHistory } from './payoutSeed';
import { startPayoutStackWithPair, type PayoutStack } from './payoutStack';
import { envelope, rzpId } from './webhooksHarness';

const EMPLOYER = 'emp_window';
const VENDOR = 'ven_window';
/** 10 000 paise, 9 000 of them subsidy: the customer pays 1 000 online; 19% commission leaves 8 100. */
const ORDER = { totalPaise: 10_000, subsidyPaise: 9_000, customerSharePaise: 1_000 };
const NET = 8_100;

describe('payouts: a batched order\'s capture confirmed by the once-more look\'s window', () => {
  let stack: PayoutStack;
  let db: Db;
  let h: MoneyInHarness;
  let linkedAccountId: string;

  beforeAll(async () => {
    ({ stack, h, linkedAccountId } = await startPayoutStackWithPair({
      name: 'capture-by-window', employerId: EMPLOYER, vendorId: VENDOR,
      // The once-more look a second after the payment; the sweep, run by the test below, every 2 s.
      env: { CAPTURE_BY_WINDOW: 'on', LATE_CAPTURE_RECHECK_MS: '1000', MISSED_WEBHOOK_SWEEP_EVERY_MS: '2000', PAYOUT_RETRY_BACKOFF_MS: '300', PAYOUT_RETRY_BACKOFF_MAX_MS: '600', PAYOUT_SETTLEMENT_POLL_MS: '1000', PAYOUT_HUMAN_RECHECK_MS: '60000' },
    }));
    db = stack.db;
    // Daily, its cutoff an hour ago (IST): the day's batch closes ~23 h from now, not during the test.
    await db.query(
      `UPDATE employer_vendor SET payout_schedule = 'daily', payout_cutoff_ist = date_trunc('minute', (now() AT TIME ZONE 'Asia/Kolkata') - interval '1 hour')::time
        WHERE employer_id = $1 AND vendor_id = $2`, [EMPLOYER, VENDOR]);
  });

  afterAll(async () => {
    await stack?.close();
  });

  const control = () => stack.sandbox.control;
  const calls = async () => control().callCounts();
  const delta = (after: Record<string, number>, before: Record<string, number>, endpoint: string) => (after[endpoint] ?? 0) - (before[endpoint] ?? 0);

  /** One run of the missed-webhook sweep (the Schedule's workflow), as the Schedule would start it. */
  const sweep = () => stack.temporal.client.workflow.execute(missedWebhookSweepWorkflow, {
    workflowId: missedWebhookSweepWorkflowId(randomBytes(4).toString('hex')), taskQueue: stack.config.TEMPORAL_TASK_QUEUE, args: [{ olderThanMs: 60_000 }],
  });

  /** Runs the sweep every second until `done` holds; returns the window pages it listed. */
  async function sweepUntil(done: () => Promise<boolean>, timeoutMs = 60_000): Promise<number> {
    let pages = 0;
    const deadline = Date.now() + timeoutMs;
    while (!(await done())) {
      if (Date.now() > deadline) throw new Error(`not done after ${timeoutMs} ms of sweeps`);
      await new Promise((r) => setTimeout(r, 1_000));
      pages += (await sweep()).recheckPages ?? 0;
    }
    return pages;
  }

  async function placeOnlineOrder(): Promise<{ orderId: string; gatewayOrderId: string }> {
    const placed = await http(h, 'POST', '/v1/orders', {
      clientReference: uniqueRef('window'), employerId: EMPLOYER, vendorId: VENDOR, employeeId: 'e-window', ...ORDER, paymentMethod: 'online',
    });
    expect(placed.status).toBe(201);
    return placed.body.order;
  }

  const waitingForWindow = (orderId: string) =>
    eventually(async () => (await db.query('SELECT capture_window_since FROM payouts WHERE order_id = $1', [orderId])).rows[0], (r) => !!r?.capture_window_since);
  const memberOf = async (orderId: string) => (await db.query<{ batch_id: string }>('SELECT batch_id FROM payout_batch_orders WHERE order_id = $1', [orderId])).rows[0]?.batch_id;

  test('when an online order of a daily pair is paid, then the window confirms its capture and is its once-more look: no capture pass and no payments.fetch; it joins the batch, whose close pays it once', async () => {
    const { orderId, gatewayOrderId } = await placeOnlineOrder();
    const before = await calls();
    const payment = await control().payOrder(gatewayOrderId);
    await control().drainWebhooks();
    await waitingForWindow(orderId);
    expect((await payoutRow(db, orderId))!.status).toBe('pending');
    // The payout sweep leaves a run that waits for its window alone: no wake signal grows its history.
    await stack.temporal.client.workflow.execute(payoutSweepWorkflow, { workflowId: `payout-sweep-window-${randomBytes(4).toString('hex')}`, taskQueue: stack.config.TEMPORAL_TASK_QUEUE, args: [{}] });
    const waitingHistory = await stack.temporal.client.workflow.getHandle(payoutWorkflowId(orderId)).fetchHistory();
    expect(waitingHistory.events!.filter((e) => e.workflowExecutionSignaledEventAttributes)).toEqual([]);

    const pages = await sweepUntil(async () => !!(await memberOf(orderId)));
    const after = await calls();
    // Every listing call was a window page of the sweep; the capture was never asked alone.
    expect(pages).toBeGreaterThanOrEqual(1);
    expect(delta(after, before, 'payments.list')).toBe(pages);
    expect(delta(after, before, 'payments.fetch')).toBe(0);
    expect(delta(after, before, 'orders.payments')).toBe(0);
    expect((await db.query('SELECT capture_confirmed_by FROM payments WHERE id = $1', [payment.id])).rows).toEqual([{ capture_confirmed_by: 'window' }]);
    // The window was its once-more look: the per-order look will not ask for it.
    expect((await db.query('SELECT payment_checked_at > paid_at AS looked FROM orders WHERE id = $1', [orderId])).rows).toEqual([{ looked: true }]);
    expect((await payoutRow(db, orderId))!.status).toBe('batched');

    const batchId = (await memberOf(orderId))!;
    await stack.temporal.client.workflow.getHandle(payoutBatchWorkflowId(batchId)).signal(closeBatchNowSignal, { actor: 'test' });
    await eventually(() => payoutRow(db, orderId), (p) => p?.status === 'settled', 60_000);
    const paid = (await control().transfers({ recipient: linkedAccountId })).filter((t) => (t.notes as Record<string, string>).batch_id === batchId || (t.notes as Record<string, string>).order_id === orderId);
    expect(paid.map((t) => t.amount)).toEqual([NET]);
    await recordHistory(stack.temporal.client, payoutWorkflowId(orderId), 'payout-capture-by-window');
  });

  test('when a signed payment.captured on a daily pair names a payment Razorpay never saw, then the window does not show it, the payment is fetched alone once, and the payout goes to review with no transfer', async () => {
    const { orderId, gatewayOrderId } = await placeOnlineOrder();
    const forged = {
      id: rzpId('pay'), entity: 'payment', amount: ORDER.customerSharePaise, currency: 'INR', status: 'captured', order_id: gatewayOrderId,
      method: 'card', captured: true, amount_refunded: 0, refund_status: null, fee: 20, tax: 0, notes: [], error_code: null, error_description: null,
      created_at: Math.floor(Date.now() / 1000),
    };
    const before = await calls();
    expect((await postWebhook(h, envelope(h, 'payment.captured', { payment: forged }), { eventId: `evt_${randomUUID()}` })).status).toBe(200);
    await waitingForWindow(orderId);
    await sweepUntil(async () => (await payoutRow(db, orderId))?.status === 'review');
    const after = await calls();
    expect(await payoutRow(db, orderId)).toMatchObject({ status: 'review', last_code: 'CAPTURE_NOT_CONFIRMED', provider_transfer_id: null });
    expect(await memberOf(orderId)).toBeUndefined();
    expect(delta(after, before, 'payments.fetch')).toBe(1);
    expect(delta(after, before, 'transfers.create')).toBe(0);
    expect((await control().transfers({ recipient: linkedAccountId })).filter((t) => (t.notes as Record<string, string>).order_id === orderId)).toEqual([]);
    await recordHistory(stack.temporal.client, payoutWorkflowId(orderId), 'payout-capture-by-window-forged');
  });
});
