/** Issue 10 item 9: refunds are idempotent the documented way and never terminal and silent. The
 * adapter sends X-Refund-Idempotency (our refund id) with the receipt; a lost answer is asked again
 * under the same key and learns the same refund; a transient rejection is retried with backoff by the
 * missed-webhook sweep (real Temporal); a terminal rejection lands in the ops queue
 * (GET /ops/refunds?status=rejected, role ops) with its code. The sandbox's ledger shows the money. */
import { call, placeSplitOrder, postSignedWebhook, runMissedWebhookSweep, seedVendor, startSplitStack, until, type SplitStack } from './splits.support';

describe('refunds: idempotent, retried with backoff, and never silently rejected', () => {
  let s: SplitStack;

  beforeAll(async () => {
    s = await startSplitStack({ name: 'refund-retries', env: { REFUND_RETRY_BACKOFF_MS: '400', REFUND_RETRY_BACKOFF_MAX_MS: '2000' } });
  });
  afterAll(async () => {
    await s?.close();
  });
  afterEach(async () => {
    await s.control.clearFaults();
    await s.control.setWebhookDelivery(true);
  });

  const refundRow = async (paymentId: string) =>
    (await s.db.query('SELECT * FROM refunds WHERE payment_id = $1', [paymentId])).rows[0];
  const attemptsOf = async (refundId: string) =>
    (await s.db.query('SELECT attempt_no, idempotency_key, outcome, provider_code FROM refund_attempts WHERE refund_id = $1 ORDER BY id', [refundId])).rows;
  const atProvider = async (paymentId: string) => (await s.control.refunds()).filter((r) => r.payment_id === paymentId);

  test('when the refund answer is lost after Razorpay made it, then the retry under the same X-Refund-Idempotency learns the same refund at once', async () => {
    // No refund webhook reaches us here: what we learn, we learn from the API's answers.
    await s.control.setWebhookDelivery(false);
    const orphan = await s.control.capturedPaymentWithoutOrder(12_300);
    const captured = (await s.control.webhookEvents()).find((e) => e.event === 'payment.captured' && e.body.includes(orphan.id));
    await s.control.injectFault({ endpoint: 'refunds.create', fault: { kind: 'drop_after_commit' }, calls: [1] });
    expect((await postSignedWebhook(s, captured!.body, captured!.id)).status).toBe(200);
    const ours = await until(() => refundRow(orphan.id), (r) => r != null && r.status !== 'requested');
    const made = await atProvider(orphan.id);
    expect(made).toHaveLength(1);
    // The retry got the refund back (not a duplicate-receipt rejection): its id is known without a webhook.
    expect(ours).toMatchObject({ status: 'pending', gateway_refund_id: made[0]!.id, idempotency_key: ours.id, attempts: 1 });
    expect(made[0]).toMatchObject({ receipt: ours.id, amount: 12_300 });
    expect(await s.control.refundIdempotencyKeyOf(made[0]!.id)).toBe(ours.id);
    expect((await attemptsOf(ours.id)).map((a) => a.outcome)).toEqual(['unknown', 'accepted']);
  });

  test('when the platform balance is short, then the refund waits with backoff, the sweep asks again once due, and it is refunded exactly once', async () => {
    const balance = await s.control.platformBalance();
    await s.control.setPlatformBalance(0);
    let refundId = '';
    try {
      const orphan = await s.control.capturedPaymentWithoutOrder(30_000);
      await s.control.drainWebhooks();
      const waiting = await until(() => refundRow(orphan.id), (r) => r?.status !== 'requested' || (r?.attempts === 1 && r.last_code != null));
      refundId = waiting.id;
      expect(waiting).toMatchObject({ status: 'requested', last_code: 'BAD_REQUEST_ERROR', idempotency_key: `${refundId}_r1`, next_attempt_at: expect.any(Date) });
      expect(await atProvider(orphan.id)).toEqual([]);
      // Not in the ops queue: it is being retried.
      expect((await call(s.opsUrl, 'GET', '/ops/refunds?status=rejected', undefined, s.keys.ops)).body.refunds.map((r: { id: string }) => r.id)).not.toContain(refundId);
      expect((await call(s.opsUrl, 'GET', '/ops/refunds?status=requested', undefined, s.keys.ops)).body.refunds).toEqual(
        expect.arrayContaining([expect.objectContaining({ id: refundId, attempts: 1, lastCode: 'BAD_REQUEST_ERROR' })]));

      // Still short when it is due: rejected again, and the next wait is longer (doubling).
      await new Promise((r) => setTimeout(r, 500));
      expect((await runMissedWebhookSweep(s)).refundsRetried).toBe(1);
      const again = await refundRow(orphan.id);
      expect(again).toMatchObject({ status: 'requested', attempts: 2, idempotency_key: `${refundId}_r2` });
      expect(again.next_attempt_at.getTime() - Date.now()).toBeGreaterThan(400);

      // Before it is due the sweep leaves it alone, even with money back.
      await s.control.setPlatformBalance(balance);
      expect((await runMissedWebhookSweep(s)).refundsRetried).toBe(0);
      await until(() => refundRow(orphan.id), (r) => r.next_attempt_at.getTime() <= Date.now(), 5_000);
      expect((await runMissedWebhookSweep(s)).refundsRetried).toBe(1);
      await s.control.drainWebhooks();
      const done = await until(() => refundRow(orphan.id), (r) => r.status === 'processed');
      const made = await atProvider(orphan.id);
      expect(made).toEqual([expect.objectContaining({ id: done.gateway_refund_id, receipt: refundId, amount: 30_000 })]);
      expect(await s.control.refundIdempotencyKeyOf(made[0]!.id)).toBe(`${refundId}_r2`);
      expect((await attemptsOf(refundId)).map((a) => a.outcome)).toEqual(['transient_rejection', 'transient_rejection', 'accepted']);
      expect((await runMissedWebhookSweep(s)).refundsRetried).toBe(0);
      expect(await atProvider(orphan.id)).toHaveLength(1);
    } finally {
      await s.control.setPlatformBalance(Math.max(balance, await s.control.platformBalance()));
    }
  });

  test('when the gateway refuses a refund for good, then it is rejected with its code, in the ops queue, and never asked again', async () => {
    // A cancelled split order paid anyway, after the vendor's linked account already paid its balance out:
    // the reverse_all refund cannot recover the split. The customer's money is still with us.
    const vendor = await seedVendor(s, 'refund_terminal');
    const order = await placeSplitOrder(s, vendor);
    expect((await call(s.apiUrl, 'POST', `/v1/orders/${order.orderId}/cancel`, {}, s.keys.ordering)).status).toBe(200);
    await s.control.setWebhookDelivery(false);
    const payment = await s.control.payOrder(order.gatewayOrderId);
    await s.control.setLinkedAccountBalance(vendor.linkedAccountId, 0);
    const captured = (await s.control.webhookEvents()).find((e) => e.event === 'payment.captured' && e.body.includes(payment.id));
    expect((await postSignedWebhook(s, captured!.body, captured!.id)).status).toBe(200);
    const rejected = await until(() => refundRow(payment.id), (r) => r != null && r.status !== 'requested');
    expect(rejected.status).toBe('rejected');
    expect(rejected).toMatchObject({ attempts: 1, last_code: 'BAD_REQUEST_ERROR', next_attempt_at: null });
    expect(await atProvider(payment.id)).toEqual([]);

    const queue = await call(s.opsUrl, 'GET', '/ops/refunds?status=rejected', undefined, s.keys.ops);
    expect(queue.status).toBe(200);
    expect(queue.body.refunds).toEqual([expect.objectContaining({
      id: rejected.id, paymentId: payment.id, orderId: order.orderId, amountPaise: 10_000, reason: 'order_cancelled', status: 'rejected',
      lastCode: 'BAD_REQUEST_ERROR', reverseAll: true,
      lastError: expect.objectContaining({ error: expect.objectContaining({ description: 'The linked account does not have sufficient balance to process a reversal.' }) }),
    })]);
    expect((await call(s.opsUrl, 'GET', '/ops/refunds?status=rejected', undefined, s.keys.ordering)).status).toBe(403);
    expect((await call(s.opsUrl, 'GET', '/ops/refunds?status=rejected')).status).toBe(401);
    expect((await call(s.opsUrl, 'GET', '/ops/refunds?status=lost', undefined, s.keys.ops)).status).toBe(400);

    expect((await runMissedWebhookSweep(s)).refundsRetried).toBe(0);
    expect((await attemptsOf(rejected.id)).map((a) => a.outcome)).toEqual(['rejected']);
  });

  test('when the gateway refuses an orphan refund with a validation error, then it is rejected into the ops queue instead of failing silently', async () => {
    // Someone refunded the payment from the dashboard before our request reached the gateway.
    await s.control.setWebhookDelivery(false);
    const orphan = await s.control.capturedPaymentWithoutOrder(5_000);
    const byHand = await s.gateway.createRefund({ paymentId: orphan.id, amountPaise: 5_000, receipt: 'rfr_dashboard_refund' });
    expect(byHand.type).toBe('accepted');
    const captured = (await s.control.webhookEvents()).find((e) => e.event === 'payment.captured' && e.body.includes(orphan.id));
    expect((await postSignedWebhook(s, captured!.body, captured!.id)).status).toBe(200);
    const row = await until(() => refundRow(orphan.id), (r) => r != null && r.status !== 'requested');
    expect(row).toMatchObject({ status: 'rejected', last_code: 'BAD_REQUEST_ERROR', reason: 'orphan_capture' });
    const queue = (await call(s.opsUrl, 'GET', '/ops/refunds', undefined, s.keys.ops)).body;
    expect(queue.status).toBe('rejected');
    expect(queue.refunds).toEqual(expect.arrayContaining([expect.objectContaining({
      id: row.id, lastError: expect.objectContaining({ error: expect.objectContaining({ description: 'The payment has been fully refunded already' }) }),
    })]));
    expect(await atProvider(orphan.id)).toHaveLength(1);
  });
});
