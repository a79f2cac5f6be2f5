/** Traces end to end (issue 39) against a real Jaeger (scripts/install-jaeger.sh builds it; CI
 * does): an online order placed through the API and paid at the sandbox, whose payment.captured
 * webhook the sandbox delivers, is one trace in Jaeger — the webhook request, the outbox's workflow
 * start, the payout run and its activities, the Razorpay transfer — read back from Jaeger's own
 * query API, with the order's and payout's ids on its spans and no secret among its attributes. The
 * console's payout page draws the same tree. */
import path from 'node:path';
import { installedJaeger, startJaeger, type RunningJaeger } from '../../src/devstack/jaeger';
import { startTracing, tracingNow, type Tracing } from '../../src/observability/tracing';
import { spanTree, tracesOfPayout, type StoredTrace } from '../../src/observability/traceStore';
import { http, uniqueRef, type MoneyInHarness } from './moneyinHarness';
import { eventually, payoutRow } from './payoutSeed';
import { PAIR_ORDER, startPayoutStackWithPair, type PayoutStack } from './payoutStack';
import { inBrowser, keyOf } from './consoleBrowser';

const EMPLOYER = 'emp_traced';
const VENDOR = 'ven_traced';

describe('traces in Jaeger', () => {
  let jaeger: RunningJaeger;
  let tracing: Tracing;
  let stack: PayoutStack;
  let h: MoneyInHarness;

  beforeAll(async () => {
    const binary = installedJaeger();
    if (!binary) throw new Error('Jaeger is not built: bash scripts/install-jaeger.sh (.ci/run does it)');
    jaeger = await startJaeger({ binary, projectRoot: path.resolve(__dirname, '../..') });
    // Before the stack: its worker hands workflow spans to what this started.
    tracing = startTracing('payouts', jaeger.otlpUrl);
    ({ stack, h } = await startPayoutStackWithPair({ name: 'traces', employerId: EMPLOYER, vendorId: VENDOR, env: { TRACES_QUERY_URL: jaeger.queryUrl } }));
  });
  afterAll(async () => {
    await stack?.close();
    await tracing?.shutdown();
    await jaeger?.stop();
  });

  test('when an order is captured by webhook and paid, then one trace holds the request, the outbox start, the run, its activities and the Razorpay transfer, tagged with the order and payout', async () => {
    expect(tracingNow().enabled).toBe(true);
    const placed = await http(h, 'POST', '/v1/orders', {
      clientReference: uniqueRef('traced'), employerId: EMPLOYER, vendorId: VENDOR, employeeId: 'e-traced', ...PAIR_ORDER, paymentMethod: 'online',
    });
    expect(placed.status).toBe(201);
    const { orderId, gatewayOrderId } = placed.body.order as { orderId: string; gatewayOrderId: string };
    await stack.sandbox.control.payOrder(gatewayOrderId);
    const payout = await eventually(() => payoutRow(stack.db, orderId), (r) => r?.status === 'settled', 60_000);
    await tracing.flush();

    let trace: StoredTrace | undefined;
    await eventually(async () => {
      const found = await tracesOfPayout(jaeger.queryUrl, orderId, { isBatch: false });
      trace = found.ok ? found.traces.find((t) => t.spans.some((s) => s.name === 'POST /webhooks/razorpay')) : undefined;
      // Workflow spans leave the worker through its sink, a batch at a time: wait for the last of each kind.
      const want = ['StartWorkflow:payoutWorkflow', 'RunWorkflow:payoutWorkflow', 'RunActivity:recordTransferOutcome', 'razorpay transfers.create'];
      return trace && want.every((name) => trace!.spans.some((s) => s.name === name)) ? trace : null;
    }, (t) => t !== null, 20_000);
    const tree = spanTree(trace!.spans);
    const names = tree.map((s) => s.name);
    const depthOf = (name: string) => tree.find((s) => s.name === name)?.depth ?? -1;
    const parentOf = (name: string) => trace!.spans.find((s) => s.spanId === tree.find((x) => x.name === name)?.parentId)?.name;

    // The webhook request is the root; the outbox start continues it across the process boundary.
    expect(tree[0]).toMatchObject({ name: 'POST /webhooks/razorpay', depth: 0 });
    expect(tree[0]!.ids).toMatchObject({ 'payouts.order_id': orderId, 'razorpay.event': 'payment.captured' });
    expect(parentOf('outbox: start the payout run')).toBe('POST /webhooks/razorpay');
    expect(parentOf('StartWorkflow:payoutWorkflow')).toBe('outbox: start the payout run');
    expect(parentOf('RunWorkflow:payoutWorkflow')).toBe('StartWorkflow:payoutWorkflow');
    // The run's activities, and the money-moving one's Razorpay call beneath it.
    expect(names).toEqual(expect.arrayContaining(['StartActivity:sendDirectTransfer', 'RunActivity:sendDirectTransfer', 'RunActivity:recordTransferOutcome', 'razorpay transfers.create']));
    expect(parentOf('razorpay transfers.create')).toBe('RunActivity:sendDirectTransfer');
    expect(depthOf('razorpay transfers.create')).toBeGreaterThan(depthOf('RunWorkflow:payoutWorkflow'));
    const send = tree.find((s) => s.name === 'RunActivity:sendDirectTransfer')!;
    expect(send.ids).toMatchObject({ 'payouts.order_id': orderId, 'payouts.payout_id': payout!.id });

    // The Web UI's summary of the run names the trace it started in.
    const described = await stack.temporal.client.workflow.getHandle(`payout-${orderId}`).describe();
    expect(await described.staticDetails()).toContain(`Its trace: trace ${trace!.traceId}`);

    // No secret reaches the store: no signature, key or account number among any span's attributes.
    const raw = JSON.stringify(await (await fetch(`${jaeger.queryUrl}/api/traces/${trace!.traceId}`)).json());
    for (const secret of [stack.config.RAZORPAY_KEY_SECRET, stack.config.RAZORPAY_WEBHOOK_SECRET, 'x-razorpay-signature', 'accountNumber']) expect(raw).not.toContain(secret);

    // The console's payout page draws the same tree from the same store.
    const seen = await inBrowser('trace', { apiUrl: stack.apiUrl, key: keyOf(stack.keys.ops), person: 'Asha', orderId });
    expect(seen.traceIds).toContain(trace!.traceId);
    expect(seen.spans).toEqual(expect.arrayContaining(['POST /webhooks/razorpay', 'outbox: start the payout run', 'RunWorkflow:payoutWorkflow', 'razorpay transfers.create']));
  });
});
