/** Issue 12 item 2: a direct transfer that the provider answers `processed` (the documented sample:
 * processed_at = created_at; the sandbox with no processing delay) is settled when its answer is
 * recorded, from the same evidence a fetch gives, so the run neither waits nor fetches. The
 * transfer.processed webhook that follows is a no-op. Real Temporal, PostgreSQL, the sandbox and the
 * API as the webhook target. */
import { payoutWorkflowId, type PayoutWorkflowResult } from '../../src/contracts/payout';
import type { Db } from '../../src/db/pool';
import type { RzpTransfer } from '../../src/gateway/types';
import { temporalPayoutStarter } from '../../src/payouts/temporalStarter';
import { attemptOutcomes, eventually, payoutRow, recordHistory, seedPaidOrder } from './payoutSeed';
import { startPayoutStack, type PayoutStack } from './payoutStack';

describe('payouts: settled from the provider\'s own create answer', () => {
  let stack: PayoutStack;
  let db: Db;

  beforeAll(async () => {
    // No processing delay: the sandbox answers a direct transfer `processed`, as Razorpay's sample does.
    stack = await startPayoutStack({ name: 'payout-settled-at-create', sandbox: { transferProcessingDelayMs: 0 }, env: { PAYOUT_SETTLEMENT_POLL_MS: '60000' } });
    db = stack.db;
    await stack.sandbox.control.setPlatformBalance(10_000_000);
  });
  afterAll(async () => {
    await stack?.close();
  });

  test('when the create answer says processed, then the payout is settled with that answer as evidence, without a settlement wait or fetch, and the later transfer.processed changes nothing and asks Razorpay nothing', async () => {
    const { control } = stack.sandbox;
    const account = await control.createLinkedAccount();
    const order = await seedPaidOrder(db, { linkedAccountId: account });
    // The provider's webhooks wait until the run has settled the payout from the create answer.
    await control.setWebhookDelivery(false);
    await temporalPayoutStarter(stack.temporal.client, stack.temporal.taskQueue).startPayout(order.orderId);
    const handle = stack.temporal.client.workflow.getHandle(payoutWorkflowId(order.orderId));
    // The settlement poll is a minute: finishing well before it means the run did not wait for it.
    const started = Date.now();
    expect((await handle.result()) as PayoutWorkflowResult).toMatchObject({ kind: 'finished', status: 'settled', attempts: 1 });
    expect(Date.now() - started).toBeLessThan(30_000);
    const row = () => db.query('SELECT status, settled_at, updated_at, idempotency_key FROM payouts WHERE id = $1', [order.payoutId]);
    const atSettlement = (await row()).rows;

    const transfers = await control.transfers({ recipient: account });
    expect(transfers).toHaveLength(1);
    const [transfer] = transfers as [RzpTransfer];
    expect(transfer).toMatchObject({ status: 'processed', amount: order.vendorNetPaise, notes: { transaction_id: order.payoutId } });
    expect(transfer.processed_at).toBe(transfer.created_at);
    expect(await payoutRow(db, order.orderId)).toMatchObject({ status: 'settled', attempts: 1, provider_transfer_id: transfer.id });
    expect(await attemptOutcomes(db, order.payoutId!)).toEqual(['accepted', 'settled']);
    // The same evidence columns a fetch writes: settled_at, and the provider's transfer with its processed_at.
    const settled = await db.query<{ source: string; status: string; processed_at: number; settled_at: Date | null; run: string | null }>(
      `SELECT a.raw->>'source' AS source, a.raw->'transfer'->>'status' AS status, (a.raw->'transfer'->>'processed_at')::int8 AS processed_at,
              p.settled_at, a.workflow_run_id AS run
       FROM payout_attempts a JOIN payouts p ON p.id = a.payout_id WHERE a.payout_id = $1 AND a.outcome = 'settled'`, [order.payoutId]);
    expect(settled.rows).toEqual([{ source: 'create', status: 'processed', processed_at: transfer.processed_at, settled_at: expect.any(Date), run: (await handle.describe()).runId }]);

    // One money-moving activity and nothing else remote: no settlement timer, no checkSettlement.
    const history = await handle.fetchHistory();
    const activities = (history.events ?? []).flatMap((e) => (e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes.activityType?.name] : []));
    expect(activities).toEqual(['sendDirectTransfer']);
    expect((history.events ?? []).filter((e) => e.timerStartedEventAttributes)).toHaveLength(0);

    // The provider's transfer.processed arrives afterwards: recorded as received, the payout unchanged,
    // and not fetched (issue 37): it says what the settled row already holds from the provider itself.
    const fetchesBefore = (await control.callCounts())['transfers.fetch'] ?? 0;
    await control.setWebhookDelivery(true);
    await control.drainWebhooks();
    const [event] = (await control.webhookEvents()).filter((e) => e.event === 'transfer.processed' && e.body.includes(transfer.id));
    expect(event?.deliveredAt).not.toBeNull();
    await eventually(async () => (await db.query('SELECT 1 FROM processed_events WHERE event_id = $1', [event!.id])).rowCount, (n) => n === 1);
    await new Promise((r) => setTimeout(r, 500)); // the webhook's after-commit fetch
    expect((await row()).rows).toEqual(atSettlement);
    expect(await attemptOutcomes(db, order.payoutId!)).toEqual(['accepted', 'settled']);
    expect(await control.transfers({ recipient: account })).toHaveLength(1);
    expect((await control.callCounts())['transfers.fetch'] ?? 0).toBe(fetchesBefore);
    await recordHistory(stack.temporal.client, payoutWorkflowId(order.orderId), 'payout-settled-at-create');
  });

  test('when transfer.processed reaches the API while the transfer request is still in flight, then the API asks Razorpay nothing: the run settles the payout from its create answer', async () => {
    const { control } = stack.sandbox;
    const account = await control.createLinkedAccount();
    const order = await seedPaidOrder(db, { linkedAccountId: account });
    // Razorpay makes the transfer and sends its webhook at once, but its answer to us takes 1.5 s.
    await control.injectFault({ endpoint: 'transfers.create', fault: { kind: 'delay_after_commit', ms: 1_500 }, calls: [1] });
    const fetchesBefore = (await control.callCounts())['transfers.fetch'] ?? 0;
    await temporalPayoutStarter(stack.temporal.client, stack.temporal.taskQueue).startPayout(order.orderId);
    const [transfer] = await eventually(() => control.transfers({ recipient: account }), (ts) => ts.length === 1);
    const [event] = await eventually(async () => (await control.webhookEvents()).filter((e) => e.event === 'transfer.processed' && e.body.includes(transfer!.id) && e.deliveredAt), (es) => es.length === 1);
    expect(event).toBeDefined();
    expect((await payoutRow(db, order.orderId))?.status).toBe('processing');
    const result = (await stack.temporal.client.workflow.getHandle(payoutWorkflowId(order.orderId)).result()) as PayoutWorkflowResult;
    expect(result).toMatchObject({ kind: 'finished', status: 'settled', attempts: 1 });
    const settledBy = await db.query(`SELECT raw->>'source' AS source FROM payout_attempts WHERE payout_id = $1 AND outcome = 'settled'`, [order.payoutId]);
    expect(settledBy.rows).toEqual([{ source: 'create' }]);
    expect((await control.callCounts())['transfers.fetch'] ?? 0).toBe(fetchesBefore);
    await control.clearFaults();
  });
});
