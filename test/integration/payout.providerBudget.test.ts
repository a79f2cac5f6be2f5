/** Issue 22's provider budget against the real Temporal dev server, PostgreSQL and the sandbox:
 * the money-moving call runs on a task queue whose rate the server limits (so two workers together
 * stay within it), and a 429 storm drains with no duplicate and a bounded number of calls. */
import { payoutWorkflowId, type PayoutWorkflowResult } from '../../src/contracts/payout';
import { createGateway } from '../../src/gateway';
import { temporalPayoutStarter } from '../../src/payouts/temporalStarter';
import { startTestWorker, type TestTemporal } from '../support/temporal';
import { eventually, payoutRow, recordHistory, seedPaidOrder } from './payoutSeed';
import { startPayoutStack, type PayoutStack } from './payoutStack';

const WRITE_RPS = 2;

describe('payouts within the provider budget', () => {
  let stack: PayoutStack;
  let second: TestTemporal;

  beforeAll(async () => {
    stack = await startPayoutStack({
      name: 'provider-budget',
      // The sandbox's limit sits above the app's budget: the budget must keep every call under it.
      sandbox: { rateLimit: { writeRps: WRITE_RPS + 1, readRps: 100, burst: WRITE_RPS + 1 } },
      env: {
        RAZORPAY_WRITE_RPS: String(WRITE_RPS), RAZORPAY_READ_RPS: '20',
        GATEWAY_TIMEOUT_MS: '1500', PAYOUT_TRANSFER_TIMEOUT_MS: '4000', PAYOUT_STALE_CLAIM_MS: '5000',
        PAYOUT_RESOLVER_RETRY_MS: '300', PAYOUT_RESOLVER_RETRY_MAX_MS: '2400',
        PAYOUT_RETRY_BACKOFF_MS: '200', PAYOUT_RETRY_BACKOFF_MAX_MS: '800',
      },
    });
    await stack.sandbox.control.setPlatformBalance(1_000_000_000);
    // A second worker (as a second process would be) polling the same task queues.
    second = await startTestWorker({ db: stack.db, config: stack.config, gateway: createGateway(stack.config) }, stack.temporal.taskQueue);
  });

  afterAll(async () => {
    await second?.close();
    await stack?.close();
  });

  const starter = () => temporalPayoutStarter(stack.temporal.client, stack.temporal.taskQueue);
  const result = (orderId: string) => stack.temporal.client.workflow.getHandle(payoutWorkflowId(orderId)).result() as Promise<PayoutWorkflowResult>;

  test('when 12 payouts start at once on two workers, then transfers leave at the budgeted rate and the sandbox refuses none', async () => {
    const control = stack.sandbox.control;
    const account = await control.createLinkedAccount();
    const orders = await Promise.all(Array.from({ length: 12 }, () => seedPaidOrder(stack.db, { linkedAccountId: account })));
    const before = await control.callCounts();
    const started = Date.now();
    await Promise.all(orders.map((o) => starter().startPayout(o.orderId)));
    for (const o of orders) expect(await result(o.orderId)).toMatchObject({ kind: 'finished', status: 'settled' });
    const elapsedMs = Date.now() - started;
    const after = await control.callCounts();
    expect((after['ratelimit:write'] ?? 0) - (before['ratelimit:write'] ?? 0)).toBe(0);
    const transfers = await control.transfers({ recipient: account });
    expect(transfers).toHaveLength(12);
    // Unlimited, 12 transfers leave within a second; at 2/s the last leaves ≥ 5 s after the first few.
    expect(elapsedMs).toBeGreaterThanOrEqual(((12 - 2 * WRITE_RPS) / WRITE_RPS) * 1_000);
  });

  test('when most transfer and listing calls answer 429, then every payout is paid exactly once and the calls per transfer stay bounded', async () => {
    const control = stack.sandbox.control;
    const account = await control.createLinkedAccount();
    const orders = await Promise.all(Array.from({ length: 6 }, () => seedPaidOrder(stack.db, { linkedAccountId: account })));
    await control.injectFault({ endpoint: 'transfers.create', fault: { kind: 'rate_limited' }, probability: 0.5, seed: 22 });
    await control.injectFault({ endpoint: 'transfers.list', fault: { kind: 'rate_limited' }, probability: 0.7, seed: 23 });
    const before = await control.callCounts();
    await Promise.all(orders.map((o) => starter().startPayout(o.orderId)));
    await eventually(() => Promise.all(orders.map((o) => payoutRow(stack.db, o.orderId))), (rows) => rows.every((r) => r?.status === 'settled'), 90_000);
    await control.clearFaults();
    const after = await control.callCounts();
    const transfers = await control.transfers({ recipient: account });
    expect(transfers).toHaveLength(6);
    expect(new Set(transfers.map((t) => (t.notes as Record<string, string>).transaction_id)).size).toBe(6);
    const calls = (k: string) => (after[k] ?? 0) - (before[k] ?? 0);
    const perTransfer = (calls('transfers.create') + calls('transfers.list')) / transfers.length;
    // An unknown outcome is listed until its claim is older than the stale horizon (5 s at 0.3 s
    // retries, about 17 listings); refused listings back off, so the storm adds few on top.
    expect(perTransfer).toBeLessThan(40);
    process.stdout.write(`429 storm: ${calls('transfers.create')} creates, ${calls('transfers.list')} listings for ${transfers.length} transfers (${perTransfer.toFixed(1)} calls per transfer)\n`);
    await recordHistory(stack.temporal.client, payoutWorkflowId(orders[0]!.orderId), 'payout-rate-limited-storm');
  }, 120_000);
});
