/** Issue 10 item 6: the missed-webhook sweep cannot starve. Abandoned orders rotate (least recently
 * checked first) instead of filling every batch; an order unpaid past the late-authorisation window
 * is expired with its subsidy back in the wallet once, audited; cancelled and expired orders leave
 * the main batch but a capture that still arrives for one is found and refunded. Real Temporal,
 * PostgreSQL and the sandbox. With PAYOUT_RECORD_HISTORIES=1 a run is kept as a replay fixture. */
import { randomBytes } from 'node:crypto';
import { missedWebhookSweepWorkflowId, type MissedWebhookSweepInput } from '../../src/contracts/missedWebhookSweep';
import { providerTaskQueue } from '../../src/contracts/taskQueues';
import { gatewayOrdersAwaitingPayment } from '../../src/moneyin/missedPayments';
import { missedWebhookSweepWorkflow } from '../../src/workflows/missedWebhookSweep';
import { activityTaskQueues, startTestWorker, type TestTemporal } from '../support/temporal';
import { recordHistory } from './payoutSeed';
import { eventually, http, ops, startHarnessWithPair, uniqueRef, walletBalance, type MoneyInHarness } from './moneyinHarness';

const EMPLOYER = 'emp_fair';
const VENDOR = 'ven_fair';
const THREE_DAYS_AND_A_MINUTE = `interval '3 days 1 minute'`;

describe('money in: the missed-webhook sweep is fair and bounded', () => {
  let h: MoneyInHarness;
  let temporal: TestTemporal;

  beforeAll(async () => {
    // 201 abandoned orders are placed 20 at a time and a sweep asks about 200 at once: neither the
    // API's own Razorpay budget (tested in moneyin.providerBudget) nor the sweep's reads queue (10/s by
    // default, tested in payout.providerBudget) is what this test is about.
    h = await startHarnessWithPair({ employerId: EMPLOYER, vendorId: VENDOR, walletPaise: 1_000_000, config: { API_RAZORPAY_RPS: 1_000, API_RAZORPAY_BURST: 1_000, RAZORPAY_READ_RPS: 1_000 } });
    temporal = await startTestWorker({ db: h.db, config: h.config, gateway: h.gateway });
  });

  afterAll(async () => {
    await temporal?.close();
    await h?.close();
  });

  let lastSweepId = '';
  async function sweep(input: MissedWebhookSweepInput = {}, fixture?: string) {
    const workflowId = (lastSweepId = missedWebhookSweepWorkflowId(randomBytes(4).toString('hex')));
    const result = await temporal.client.workflow.execute(missedWebhookSweepWorkflow, { workflowId, taskQueue: temporal.taskQueue, args: [{ olderThanMs: 1, ...input }] });
    if (fixture) await recordHistory(temporal.client, workflowId, fixture);
    return result;
  }

  async function placeOnline(shares: { subsidyPaise: number; customerSharePaise: number } = { subsidyPaise: 9_000, customerSharePaise: 1_000 }) {
    const placed = await http(h, 'POST', '/v1/orders', {
      clientReference: uniqueRef('fair'), employerId: EMPLOYER, vendorId: VENDOR, employeeId: 'e-fair',
      totalPaise: shares.subsidyPaise + shares.customerSharePaise, ...shares, paymentMethod: 'online',
    });
    expect(placed.status).toBe(201);
    return placed.body.order as { orderId: string; gatewayOrderId: string };
  }

  const orderRow = async (orderId: string) => (await h.db.query('SELECT status, paid_via FROM orders WHERE id = $1', [orderId])).rows[0];
  const placedLongAgo = (orderId: string) => h.db.query(`UPDATE orders SET created_at = now() - ${THREE_DAYS_AND_A_MINUTE} WHERE id = $1`, [orderId]);
  const subsidyCredits = async (orderId: string) =>
    (await h.db.query(`SELECT amount_paise FROM wallet_entries WHERE reference = $1 AND kind = 'refund_credit'`, [orderId])).rows;

  test('when an online order is still unpaid past the late-authorisation window, then the sweep expires it, its subsidy is credited back once and the expiry is audited', async () => {
    const { orderId } = await placeOnline();
    const afterPlacing = await walletBalance(h, 'employer', EMPLOYER);
    await placedLongAgo(orderId);

    const first = await sweep();
    expect(first.expired).toBe(1);
    expect(await orderRow(orderId)).toEqual({ status: 'expired', paid_via: null });
    expect(await walletBalance(h, 'employer', EMPLOYER)).toBe(afterPlacing + 9_000);
    expect(await subsidyCredits(orderId)).toEqual([{ amount_paise: 9_000 }]);
    expect((await h.db.query('SELECT from_status, to_status, actor, reason FROM order_status_changes WHERE order_id = $1', [orderId])).rows).toEqual([
      { from_status: 'pending', to_status: 'expired', actor: 'system:missed-webhook-sweep', reason: expect.stringMatching(/late-authorisation window/) },
    ]);

    expect((await sweep()).expired).toBe(0);
    expect(await walletBalance(h, 'employer', EMPLOYER)).toBe(afterPlacing + 9_000);
    expect(await subsidyCredits(orderId)).toHaveLength(1);
    // Neither a payout nor a cancel can move it any more.
    expect((await http(h, 'POST', `/v1/orders/${orderId}/cancel`, undefined, ops(h))).status).toBe(409);
  });

  test('when an old unpaid order was in fact captured and its webhooks were missed, then the last look pays it instead of expiring it', async () => {
    const { orderId, gatewayOrderId } = await placeOnline();
    await h.sandbox.control.setWebhookDelivery(false);
    try {
      await h.sandbox.control.payOrder(gatewayOrderId);
      await placedLongAgo(orderId);
      expect((await sweep()).expired).toBe(0);
      expect(await orderRow(orderId)).toEqual({ status: 'paid', paid_via: 'sweep' });
      expect(await subsidyCredits(orderId)).toEqual([]);
    } finally {
      await h.sandbox.control.setWebhookDelivery(true);
    }
  });

  test('when a capture arrives for a cancelled order and its webhook is missed, then the sweep finds it on the side path and refunds it; cancelled orders are not in the main batch', async () => {
    const { orderId, gatewayOrderId } = await placeOnline();
    await placeOnline(); // abandoned: the main batch has something to ask about too
    expect((await http(h, 'POST', `/v1/orders/${orderId}/cancel`, undefined, ops(h))).status).toBe(200);
    expect((await gatewayOrdersAwaitingPayment(h.db, { olderThanMs: 0, expiryMs: h.config.UNPAID_ORDER_EXPIRY_MS, limit: 1_000 })).map((w) => w.id)).not.toContain(orderId);

    await h.sandbox.control.setWebhookDelivery(false);
    try {
      const payment = await h.sandbox.control.payOrder(gatewayOrderId);
      const result = await sweep({}, 'missed-webhook-sweep-v5');
      expect(result.endedOrdersChecked).toBeGreaterThanOrEqual(1);
      // What asks Razorpay runs on the provider budget's reads queue; the database listings stay (issue 22).
      const reads = [providerTaskQueue(temporal.taskQueue, 'reads')];
      expect(await activityTaskQueues(temporal.client, lastSweepId)).toMatchObject({
        listGatewayOrdersAwaitingPayment: [temporal.taskQueue], listEndedOrdersAwaitingLateCapture: [temporal.taskQueue],
        listUnpaidOrdersPastExpiry: [temporal.taskQueue], listRefundsAwaitingGateway: [temporal.taskQueue],
        reconcileGatewayOrderPayments: reads, refreshSettlementsAwaitingUtr: reads, recheckPaymentsPage: reads,
      });
      const refunds = await eventually(
        async () => (await h.db.query('SELECT reason, order_id FROM refunds WHERE payment_id = $1', [payment.id])).rows, (rows) => rows.length > 0);
      expect(refunds).toEqual([{ reason: 'order_cancelled', order_id: orderId }]);
      expect((await h.sandbox.control.refunds()).filter((r) => r.payment_id === payment.id)).toEqual([expect.objectContaining({ amount: 1_000 })]);
      expect(await orderRow(orderId)).toEqual({ status: 'cancelled', paid_via: null });
      // Checked once per hour at most: the next run leaves it alone.
      expect((await sweep()).endedOrdersChecked).toBe(0);
    } finally {
      await h.sandbox.control.setWebhookDelivery(true);
    }
  });

  test('when 201 abandoned orders are older than a newer order whose capture webhook was missed, then the sweep still finds that capture by its second run', async () => {
    const abandoned = [];
    for (let i = 0; i < 201; i += 20) {
      abandoned.push(...await Promise.all(Array.from({ length: Math.min(20, 201 - i) }, () => placeOnline({ subsidyPaise: 0, customerSharePaise: 10_000 }))));
    }
    await h.db.query(`UPDATE orders SET created_at = now() - interval '2 hours' WHERE id = ANY($1)`, [abandoned.map((o) => o.orderId)]);
    const missed = await placeOnline({ subsidyPaise: 0, customerSharePaise: 10_000 });
    await h.sandbox.control.setWebhookDelivery(false);
    try {
      await h.sandbox.control.payOrder(missed.gatewayOrderId);
      const first = await sweep();
      expect(first.examined).toBe(200);
      const second = await sweep();
      expect(second.capturedFound).toBeGreaterThanOrEqual(1);
      expect(await orderRow(missed.orderId)).toEqual({ status: 'paid', paid_via: 'sweep' });
      // Every abandoned order was asked about once in those two runs, none twice before the rest.
      const checked = await h.db.query(`SELECT count(*)::int AS n FROM orders WHERE id = ANY($1) AND payment_checked_at IS NOT NULL`, [abandoned.map((o) => o.orderId)]);
      expect(checked.rows[0].n).toBe(201);
    } finally {
      await h.sandbox.control.setWebhookDelivery(true);
    }
  });

  test('when the once-more look\'s listing takes a while, then a sweep run lists the windows due when it began, one window a run, not another second or two chasing the moving edge', async () => {
    // Issue 37: bench:day saw 160 window calls where ~90 pages do, each run ending with 1-2 s windows.
    await sweep(); // caught up to now
    await new Promise((r) => setTimeout(r, 1_100));
    await h.sandbox.control.injectFault({ endpoint: 'payments.list', fault: { kind: 'latency', ms: 1_500 }, calls: [1] });
    const before = await h.sandbox.control.callCounts();
    const windowsBefore = (await h.db.query(`SELECT coalesce(max(id), 0)::int AS id FROM provider_listing_passes WHERE kind = 'payments_recheck'`)).rows[0].id as number;
    const run = await sweep();
    const after = await h.sandbox.control.callCounts();
    const opened = (await h.db.query(`SELECT listed_from_s::bigint AS from_s, listed_to_s::bigint AS to_s FROM provider_listing_passes
       WHERE kind = 'payments_recheck' AND id > $1 ORDER BY id`, [windowsBefore])).rows;
    expect(opened).toHaveLength(1);
    expect(run.recheckPages).toBe(1);
    expect((after['payments.list'] ?? 0) - (before['payments.list'] ?? 0)).toBe(1);
    // The next run starts where this one ended: no second is left out.
    await new Promise((r) => setTimeout(r, 1_100));
    await sweep();
    const next = (await h.db.query(`SELECT listed_from_s::bigint AS from_s FROM provider_listing_passes WHERE kind = 'payments_recheck' AND id > $1 ORDER BY id`, [windowsBefore])).rows[1];
    expect(Number(next.from_s)).toBe(Number(opened[0].to_s) + 1);
  });
});
