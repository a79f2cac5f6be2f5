/** The missed-webhook sweep on the real Temporal dev server, PostgreSQL and the sandbox. */
import { randomBytes } from 'node:crypto';
import { hmacSha256Hex } from '../../src/gateway/signatures';
import { missedWebhookSweepWorkflowId } from '../../src/contracts/missedWebhookSweep';
import { providerTaskQueue } from '../../src/contracts/taskQueues';
import { startPayoutWorkflow } from '../../src/payouts/temporalStarter';
import { ensureMissedWebhookSchedule } from '../../src/moneyin/schedule';
import { missedWebhookSweepWorkflow } from '../../src/workflows/missedWebhookSweep';
import { activityTaskQueues, startTestWorker, type TestTemporal } from '../support/temporal';
import { eventually, http, postWebhook, registerEmployee, seedPair, snapshot, startMoneyInHarness, topUp, uniqueRef, walletBalance, type MoneyInHarness } from './moneyinHarness';

describe('money in: the missed-webhook sweep', () => {
  let h: MoneyInHarness;
  let temporal: TestTemporal;

  beforeAll(async () => {
    h = await startMoneyInHarness();
    temporal = await startTestWorker({ db: h.db, config: h.config, gateway: h.gateway });
    await seedPair(h, { employerId: 'emp_sweep', vendorId: 'ven_sweep', commissionBps: 1_900 });
    await topUp(h, 'employer', 'emp_sweep', 100_000);
    await registerEmployee(h, 'emp_sweep', 'e-sweep');
  });

  afterAll(async () => {
    await temporal?.close();
    await h?.close();
  });

  let lastSweepId = '';
  const sweep = () => temporal.client.workflow.execute(missedWebhookSweepWorkflow, {
    workflowId: (lastSweepId = missedWebhookSweepWorkflowId(randomBytes(4).toString('hex'))),
    taskQueue: temporal.taskQueue,
    args: [{ olderThanMs: 1 }],
  });

  test('when webhook delivery is off and the customer pays, then the sweep makes the order paid exactly once and a later duplicate webhook changes nothing', async () => {
    await h.sandbox.control.setWebhookDelivery(false);
    const placed = await http(h, 'POST', '/v1/orders', {
      clientReference: uniqueRef('sweep'), employerId: 'emp_sweep', vendorId: 'ven_sweep', employeeId: 'e-1',
      totalPaise: 10_000, subsidyPaise: 9_900, customerSharePaise: 100, paymentMethod: 'online',
    });
    const { orderId, gatewayOrderId } = placed.body.order;
    await h.sandbox.control.payOrder(gatewayOrderId);
    const topup = await http(h, 'POST', '/v1/wallets/employee/e-sweep/top-ups', { amountPaise: 20_000 });
    await h.sandbox.control.payOrder(topup.body.topup.gatewayOrderId);
    expect((await h.db.query('SELECT status FROM orders WHERE id = $1', [orderId])).rows[0].status).toBe('pending');

    const first = await sweep();
    expect(first.capturedFound).toBeGreaterThanOrEqual(2);
    expect(first.failed).toBe(0);
    expect((await h.db.query('SELECT status, paid_via FROM orders WHERE id = $1', [orderId])).rows[0]).toEqual({ status: 'paid', paid_via: 'sweep' });
    expect((await h.db.query('SELECT amount_paise, status FROM payouts WHERE order_id = $1', [orderId])).rows).toEqual([{ amount_paise: 8_100, status: 'pending' }]);
    expect(await walletBalance(h, 'employee', 'e-sweep')).toBe(20_000);

    const afterSweep = await snapshot(h.db);
    const second = await sweep();
    expect(second.examined).toBe(0); // nothing is waiting any more
    expect(await snapshot(h.db)).toEqual(afterSweep);

    // The webhook that was missed finally arrives (e.g. replayed from the dashboard): nothing changes but the event record.
    const events = (await h.sandbox.control.webhookEvents()).filter((e) => e.body.includes(gatewayOrderId) || e.body.includes(topup.body.topup.gatewayOrderId));
    for (const event of events) expect((await postWebhook(h, event.body, { eventId: event.id })).status).toBe(200);
    // Only the capture time may move: to the event's own time, the earliest capture evidence, no
    // later than the sweep's sighting.
    const withoutCaptureTime = (s: Record<string, unknown[]>) => ({ ...s, processed_events: [], payments: (s.payments as Array<Record<string, unknown>>).map(({ captured_at: _c, ...p }) => p) });
    const after = await snapshot(h.db);
    expect(withoutCaptureTime(after)).toEqual(withoutCaptureTime(afterSweep));
    for (const payment of after.payments as Array<{ id: string; captured_at: Date }>) {
      const sighted = (afterSweep.payments as Array<{ id: string; captured_at: Date }>).find((p) => p.id === payment.id)!.captured_at;
      expect(payment.captured_at.getTime()).toBeLessThanOrEqual(sighted.getTime());
    }
    await h.sandbox.control.setWebhookDelivery(true);
  });

  test('when an orphan refund request got no answer from the gateway, then the sweep asks again with the same receipt and it is refunded once', async () => {
    await h.sandbox.control.setWebhookDelivery(false);
    const orphan = await h.sandbox.control.capturedPaymentWithoutOrder(30_000);
    const [captured] = (await h.sandbox.control.webhookEvents()).filter((e) => e.event === 'payment.captured' && e.body.includes(orphan.id));
    await h.sandbox.control.injectFault({ endpoint: 'refunds.create', fault: { kind: 'server_error_before' }, calls: [1, 2, 3] });
    expect((await postWebhook(h, captured!.body, { eventId: captured!.id })).status).toBe(200);
    await h.sandbox.control.clearFaults();
    const requested = await h.db.query('SELECT id, status FROM refunds WHERE payment_id = $1', [orphan.id]);
    expect(requested.rows).toEqual([{ id: expect.any(String), status: 'requested' }]);
    expect((await h.sandbox.control.refunds()).filter((r) => r.payment_id === orphan.id)).toHaveLength(0);

    const result = await sweep();
    expect(result.refundsRetried).toBe(1);
    const made = (await h.sandbox.control.refunds()).filter((r) => r.payment_id === orphan.id);
    expect(made).toEqual([expect.objectContaining({ receipt: requested.rows[0].id, amount: 30_000 })]);
    // The refund request moves money: it runs on the provider budget's writes queue (issue 22).
    expect((await activityTaskQueues(temporal.client, lastSweepId)).requestRefundAgain).toEqual([providerTaskQueue(temporal.taskQueue, 'writes')]);
    await sweep();
    expect((await h.sandbox.control.refunds()).filter((r) => r.payment_id === orphan.id)).toHaveLength(1);
    await h.sandbox.control.setWebhookDelivery(true);
  });

  test('when a refund the gateway accepted as pending never gets its refund.processed webhook, then the sweep asks for it and records it processed', async () => {
    await h.sandbox.control.setWebhookDelivery(false);
    const orphan = await h.sandbox.control.capturedPaymentWithoutOrder(20_000);
    const [captured] = (await h.sandbox.control.webhookEvents()).filter((e) => e.event === 'payment.captured' && e.body.includes(orphan.id));
    expect((await postWebhook(h, captured!.body, { eventId: captured!.id })).status).toBe(200);
    const ours = async () => (await h.db.query('SELECT status, gateway_refund_id FROM refunds WHERE payment_id = $1', [orphan.id])).rows;
    const [pending] = await ours();
    expect(pending).toEqual({ status: 'pending', gateway_refund_id: expect.stringMatching(/^rfnd_/) });
    await h.sandbox.control.drainWebhooks(); // the gateway processes it; its webhooks are not delivered
    expect((await h.sandbox.control.refunds()).find((r) => r.id === pending.gateway_refund_id)?.status).toBe('processed');
    expect(await ours()).toEqual([pending]);

    await sweep();
    expect(await ours()).toEqual([{ status: 'processed', gateway_refund_id: pending.gateway_refund_id }]);
    expect((await h.sandbox.control.refunds()).filter((r) => r.payment_id === orphan.id)).toHaveLength(1);
    await h.sandbox.control.setWebhookDelivery(true);
  });

  /** ₹100 at 90% subsidy: the customer pays ₹10 online. */
  const placeTenRupeeOrder = async (ref: string): Promise<{ orderId: string; gatewayOrderId: string }> => (await http(h, 'POST', '/v1/orders', {
    clientReference: uniqueRef(ref), employerId: 'emp_sweep', vendorId: 'ven_sweep', employeeId: `e-${ref}`,
    totalPaise: 10_000, subsidyPaise: 9_000, customerSharePaise: 1_000, paymentMethod: 'online',
  })).body.order;

  test('when a paid order\'s failed payment is captured late and its webhook never arrives, then the sweep finds the second capture and refunds it once; the order stays paid once', async () => {
    const { orderId, gatewayOrderId } = await placeTenRupeeOrder('late');
    const failed = await h.sandbox.control.failPayment(gatewayOrderId);
    const paid = await h.sandbox.control.payOrder(gatewayOrderId);
    await h.sandbox.control.drainWebhooks();
    expect((await h.db.query('SELECT status, paid_payment_id FROM orders WHERE id = $1', [orderId])).rows).toEqual([{ status: 'paid', paid_payment_id: paid.id }]);
    expect((await h.db.query('SELECT status FROM payments WHERE id = $1', [failed.id])).rows).toEqual([{ status: 'failed' }]);

    // The bank authorises the failed payment late; every webhook about it is lost for good.
    await h.sandbox.control.setWebhookDelivery(false);
    await h.sandbox.control.lateAuthorize(failed.id);
    const result = await sweep();
    expect(result.endedOrdersChecked).toBeGreaterThanOrEqual(1);
    const refunds = (await h.sandbox.control.refunds()).filter((r) => r.payment_id === failed.id);
    expect(refunds).toEqual([expect.objectContaining({ amount: 1_000 })]);
    expect((await h.db.query('SELECT reason, order_id FROM refunds WHERE payment_id = $1', [failed.id])).rows).toEqual([{ reason: 'duplicate_capture', order_id: orderId }]);

    await sweep();
    expect((await h.sandbox.control.refunds()).filter((r) => r.payment_id === failed.id)).toHaveLength(1);
    expect((await h.db.query('SELECT status, paid_payment_id FROM orders WHERE id = $1', [orderId])).rows).toEqual([{ status: 'paid', paid_payment_id: paid.id }]);
    expect((await h.db.query('SELECT count(*)::int AS n FROM payouts WHERE order_id = $1', [orderId])).rows[0].n).toBe(1);
    await h.sandbox.control.setWebhookDelivery(true);
  });

  test('when an order is paid by one payment while another capture on it lost every webhook, then the sweep asks about the paid order once more and refunds the unknown capture once', async () => {
    const { orderId, gatewayOrderId } = await placeTenRupeeOrder('lost');
    // Webhooks are off for the whole story: a payment fails, a second one is captured (nobody hears
    // of it), the bank authorises the first late and the customer's browser reports that one.
    await h.sandbox.control.setWebhookDelivery(false);
    const known = await h.sandbox.control.failPayment(gatewayOrderId);
    const unknown = await h.sandbox.control.payOrder(gatewayOrderId);
    await h.sandbox.control.lateAuthorize(known.id);
    const signature = hmacSha256Hex(`${gatewayOrderId}|${known.id}`, h.config.RAZORPAY_KEY_SECRET);
    const callback = await http(h, 'POST', `/v1/orders/${orderId}/payment-callback`, { razorpay_order_id: gatewayOrderId, razorpay_payment_id: known.id, razorpay_signature: signature });
    expect(callback.body.order.status).toBe('paid');
    expect((await h.db.query('SELECT id FROM payments WHERE id = $1', [unknown.id])).rows).toEqual([]);

    // A paid order is asked once more LATE_CAPTURE_RECHECK_MS after its payment (here: at once), once
    // its payout has decided: this harness only records payout starts, so the run is started here.
    const recheck = await startTestWorker({ db: h.db, config: { ...h.config, LATE_CAPTURE_RECHECK_MS: 10 }, gateway: h.gateway });
    try {
      await startPayoutWorkflow(recheck.client, recheck.taskQueue, orderId);
      await eventually(() => h.db.query('SELECT status FROM payouts WHERE order_id = $1', [orderId]), (r) => ['accepted', 'settled'].includes(r.rows[0]?.status));
      const run = () => recheck.client.workflow.execute(missedWebhookSweepWorkflow, { workflowId: missedWebhookSweepWorkflowId(randomBytes(4).toString('hex')), taskQueue: recheck.taskQueue, args: [{ olderThanMs: 1 }] });
      await run();
      expect((await h.sandbox.control.refunds()).filter((r) => r.payment_id === unknown.id)).toEqual([expect.objectContaining({ amount: 1_000 })]);
      expect((await h.db.query('SELECT reason, order_id FROM refunds WHERE payment_id = $1', [unknown.id])).rows).toEqual([{ reason: 'duplicate_capture', order_id: orderId }]);
      const second = await run();
      expect(second.endedOrdersChecked).toBe(0); // asked once: it left the batch
      expect((await h.sandbox.control.refunds()).filter((r) => r.payment_id === unknown.id)).toHaveLength(1);
      expect((await h.sandbox.control.refunds()).filter((r) => r.payment_id === known.id)).toHaveLength(0);
      expect((await h.db.query('SELECT status, paid_payment_id FROM orders WHERE id = $1', [orderId])).rows).toEqual([{ status: 'paid', paid_payment_id: known.id }]);
    } finally {
      await recheck.close();
      await h.sandbox.control.setWebhookDelivery(true);
    }
  });

  test('when the schedule is ensured twice, then it exists once with overlap SKIP', async () => {
    const config = { ...h.config, TEMPORAL_TASK_QUEUE: temporal.taskQueue };
    const first = await ensureMissedWebhookSchedule(temporal.client, config);
    const second = await ensureMissedWebhookSchedule(temporal.client, config);
    expect([first, second]).toEqual([expect.stringMatching(/created|updated/), 'unchanged']);
    const described = await temporal.client.schedule.getHandle('missed-webhook-sweep').describe();
    expect(described.policies.overlap).toBe('SKIP');
    expect(described.action).toMatchObject({ type: 'startWorkflow', workflowType: 'missedWebhookSweepWorkflow', taskQueue: temporal.taskQueue });
    await temporal.client.schedule.getHandle('missed-webhook-sweep').delete();
  });
});
