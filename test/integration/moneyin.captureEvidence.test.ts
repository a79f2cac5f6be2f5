/** Issue 10 item 11: a capture that does not match the order goes to a human, and a capture is dated
 * by its capture evidence, not by the payment's creation. Real API, Temporal worker (the sweep),
 * PostgreSQL and the sandbox. */
import { randomBytes, randomUUID } from 'node:crypto';
import { missedWebhookSweepWorkflowId } from '../../src/contracts/missedWebhookSweep';
import { addDays, istDateOf } from '../../src/domain/calendar';
import { reconcile } from '../../src/recon/reconcile';
import { loadReconInput } from '../../src/recon/inputLoader';
import { missedWebhookSweepWorkflow } from '../../src/workflows/missedWebhookSweep';
import { startTestWorker, type TestTemporal } from '../support/temporal';
import { http, payoutStartsOf, postWebhook, startHarnessWithPair, uniqueRef, type MoneyInHarness } from './moneyinHarness';
import { envelope, everyTable, exceptionsFor } from './webhooksHarness';

const EMPLOYER = 'emp_evid';
const VENDOR = 'ven_evid';
const DAY_MS = 86_400_000;

describe('money in: capture evidence', () => {
  let h: MoneyInHarness;
  let temporal: TestTemporal;

  beforeAll(async () => {
    h = await startHarnessWithPair({ employerId: EMPLOYER, vendorId: VENDOR });
    temporal = await startTestWorker({ db: h.db, config: h.config, gateway: h.gateway });
  });

  afterAll(async () => {
    await temporal?.close();
    await h?.sandbox.control.setClock(null);
    await h?.close();
  });

  async function placeOrder(customerSharePaise = 1_000) {
    const placed = await http(h, 'POST', '/v1/orders', {
      clientReference: uniqueRef('evid'), employerId: EMPLOYER, vendorId: VENDOR, employeeId: 'e-evid',
      totalPaise: 10_000, subsidyPaise: 10_000 - customerSharePaise, customerSharePaise, paymentMethod: 'online',
    });
    expect(placed.status).toBe(201);
    return placed.body.order as { orderId: string; gatewayOrderId: string };
  }

  test.each([
    ['more', 1_500],
    ['less', 600],
  ])('when the customer is charged %s than the customer share, then the order is held (capture_mismatch, not paid), its payout waits in review with AMOUNT_MISMATCH, finance sees an amount-mismatch and a redelivery changes nothing', async (_more, capturedPaise) => {
    const { orderId, gatewayOrderId } = await placeOrder();
    const payment = await h.sandbox.control.authorizeOrder(gatewayOrderId);
    await h.sandbox.control.drainWebhooks();
    // Razorpay's capture for this gateway order, as its webhook says, for a different amount.
    const captured = { ...payment, status: 'captured', captured: true, amount: capturedPaise, fee: Math.round(capturedPaise * 0.02), tax: 0 };
    const body = envelope(h, 'payment.captured', { payment: captured });
    const eventId = `evt_${randomUUID()}`;
    expect((await postWebhook(h, body, { eventId })).status).toBe(200);

    expect((await h.db.query('SELECT status, paid_at, paid_payment_id FROM orders WHERE id = $1', [orderId])).rows).toEqual([{ status: 'capture_mismatch', paid_at: null, paid_payment_id: payment.id }]);
    const payouts = (await h.db.query('SELECT status, last_code, amount_paise FROM payouts WHERE order_id = $1', [orderId])).rows;
    expect(payouts).toEqual([{ status: 'review', last_code: 'AMOUNT_MISMATCH', amount_paise: 8_100 }]);
    expect(await payoutStartsOf(h, orderId)).toContain(orderId); // its run waits for an ops decision, findable as PayoutStatus = review
    expect(await exceptionsFor(h.db, { reason: 'amount-mismatch', orderId })).toEqual([expect.objectContaining({
      class: 'mismatched', severity: 'high', status: 'open', entity_id: payment.id, expected_paise: 1_000, actual_paise: capturedPaise, raised_by: 'event',
      details: expect.objectContaining({ code: 'AMOUNT_MISMATCH', route: 'direct_transfer' }),
    })]);

    const before = await everyTable(h.db);
    expect((await postWebhook(h, body, { eventId: `evt_${randomUUID()}` })).status).toBe(200);
    const { processed_events: _a, ...after } = await everyTable(h.db);
    const { processed_events: _b, ...unchanged } = before;
    expect(after).toEqual(unchanged);
  });

  test('when the sweep finds a capture that happened days after the payment was created, then it is dated by its capture and recon does not call it overdue', async () => {
    const { orderId, gatewayOrderId } = await placeOrder();
    const createdAt = Date.now() - 8 * DAY_MS;
    await h.sandbox.control.setWebhookDelivery(false);
    let paymentId: string;
    try {
      await h.sandbox.control.setClock(createdAt);
      paymentId = (await h.sandbox.control.failPayment(gatewayOrderId)).id;
      await h.sandbox.control.setClock(null);
      await h.sandbox.control.lateAuthorize(paymentId); // the bank confirms it now; captured now
      const before = Date.now();
      await temporal.client.workflow.execute(missedWebhookSweepWorkflow, {
        workflowId: missedWebhookSweepWorkflowId(randomBytes(4).toString('hex')), taskQueue: temporal.taskQueue, args: [{ olderThanMs: 1 }],
      });
      const row = (await h.db.query('SELECT status, captured_at FROM payments WHERE id = $1', [paymentId])).rows[0];
      expect(row.status).toBe('captured');
      expect(row.captured_at.getTime()).toBeGreaterThanOrEqual(before - 1_000);
      expect((await h.db.query('SELECT status, paid_via FROM orders WHERE id = $1', [orderId])).rows[0]).toEqual({ status: 'paid', paid_via: 'sweep' });
    } finally {
      await h.sandbox.control.setClock(null);
      await h.sandbox.control.setWebhookDelivery(true);
    }

    // Settled T+2 working days from today's capture: not due yet, so not an overdue exception.
    const today = istDateOf(new Date());
    const input = await loadReconInput(h.db, { from: addDays(today, -9), to: today, asOf: today, holidays: new Set() });
    const flagged = reconcile(input).exceptions.filter((e) => e.entityId === paymentId);
    expect(flagged.map((e) => [e.reason, e.class])).toEqual([['captured-not-settled', 'expected']]);
  });
});
