/** Issue 36 item 4 (first part), against the real Temporal dev server, PostgreSQL and the Razorpay
 * sandbox: a batch paid by its run, then a database restored to before the batch closed. The batch
 * is open again with its members `batched` while Temporal says its run completed; the payout sweep
 * must wake it, and the run started again must find the transfer the restore forgot (the provider
 * lookup by the batch payout's note) rather than send a second one. Money is read from the SANDBOX. */
import { randomBytes } from 'node:crypto';
import { payoutWorkflowId, transfersResumedSignal, type PayoutWorkflowResult } from '../../src/contracts/payout';
import { closeBatchNowSignal, payoutBatchWorkflowId } from '../../src/contracts/payoutBatch';
import type { Db } from '../../src/db/pool';
import { restoreDatabase, snapshotDatabase } from '../../src/devstack/dbRollback';
import { startPayoutWorkflow } from '../../src/payouts/temporalStarter';
import type { SandboxControl } from '../../src/sandbox/control';
import { payoutSweepWorkflow } from '../../src/workflows/payoutSweep';
import { attemptOutcomes, eventually, seedPaidOrder, type SeededOrder } from './payoutSeed';
import { startBatchPayoutStack, type PayoutStack } from './payoutStack';

const NET = 8_100;

describe('payouts: a batch whose close a restore forgot', () => {
  let stack: PayoutStack;
  let db: Db;
  let control: SandboxControl;

  beforeAll(async () => {
    stack = await startBatchPayoutStack('payout-batch-restore');
    ({ db } = stack);
    control = stack.sandbox.control;
  });

  afterAll(async () => {
    await stack?.close();
  });

  const client = () => stack.temporal.client;
  const taskQueue = () => stack.config.TEMPORAL_TASK_QUEUE;
  const runResult = (key: string) => client().workflow.getHandle(payoutWorkflowId(key)).result() as Promise<PayoutWorkflowResult>;

  /** An hourly pair with `n` paid orders (8,100 paise net each, capture confirmed). */
  async function hourlyPair(n: number): Promise<{ account: string; orders: SeededOrder[] }> {
    const account = await control.createLinkedAccount();
    const first = await seedPaidOrder(db, { linkedAccountId: account });
    await db.query(`UPDATE employer_vendor SET payout_schedule = 'hourly' WHERE employer_id = $1 AND vendor_id = $2`, [first.employerId, first.vendorId]);
    const orders = [first];
    for (let i = 1; i < n; i += 1) orders.push(await seedPaidOrder(db, { linkedAccountId: account, pair: first }));
    return { account, orders };
  }

  /** Each order's run hands its order to the batch; the batch's id. */
  async function joinAll(orders: SeededOrder[]): Promise<string> {
    for (const o of orders) await startPayoutWorkflow(client(), taskQueue(), o.orderId);
    const results = await Promise.all(orders.map((o) => runResult(o.orderId)));
    const batchIds = new Set(results.map((r) => (r.kind === 'batched' ? r.batchId : `not batched: ${JSON.stringify(r)}`)));
    expect(batchIds.size).toBe(1);
    return [...batchIds][0]!;
  }

  const batchRow = async (batchId: string) => (await db.query<{ status: string }>('SELECT status FROM payout_batches WHERE id = $1', [batchId])).rows[0];
  const batchPayout = async (batchId: string) => (await db.query('SELECT * FROM payouts WHERE batch_id = $1', [batchId])).rows[0];
  const memberStatuses = async (batchId: string) => (await db.query<{ status: string }>(
    'SELECT p.status FROM payout_batch_orders m JOIN payouts p ON p.order_id = m.order_id WHERE m.batch_id = $1 ORDER BY p.order_id', [batchId])).rows.map((r) => r.status);
  const liveTransfersTo = async (account: string) => (await control.transfers({ recipient: account })).filter((t) => t.status !== 'failed' && t.status !== 'reversed');
  const sweepPayouts = () => client().workflow.execute(payoutSweepWorkflow, {
    workflowId: `payout-sweep-test-${randomBytes(4).toString('hex')}`, taskQueue: taskQueue(), args: [{}],
  });

  test('when a paid batch is restored to before its close, then the payout sweep wakes it, its run finds the forgotten transfer by its note, and the vendor is paid the sum once', async () => {
    const { account, orders } = await hourlyPair(2);
    const batchId = await joinAll(orders);
    const url = stack.config.DATABASE_URL!;
    const snap = await snapshotDatabase(url, 'batch_joined_open');

    // The lost window: ops close the batch early, its run pays it by one transfer and completes.
    await client().workflow.getHandle(payoutBatchWorkflowId(batchId)).signal(closeBatchNowSignal, { actor: 'test' });
    expect(await runResult(batchId)).toMatchObject({ kind: 'finished', status: 'settled' });
    const [paid] = await liveTransfersTo(account);
    expect(paid).toMatchObject({ amount: 2 * NET, notes: { batch_id: batchId } });
    expect(await memberStatuses(batchId)).toEqual(['settled', 'settled']);
    const createsBefore = (await control.callCounts())['transfers.create'] ?? 0;

    // The restore forgets the close, the batch's payout and the transfer; Temporal and Razorpay remember.
    await restoreDatabase(url, snap, { exclusive: true });
    expect(await batchRow(batchId)).toMatchObject({ status: 'open' });
    expect(await batchPayout(batchId)).toBeUndefined();
    expect(await memberStatuses(batchId)).toEqual(['batched', 'batched']);

    await sweepPayouts();
    const carrier = await eventually(() => batchPayout(batchId), (p) => p?.status === 'settled', 30_000);

    // The sandbox's ledger: one transfer for the sum, the one the restore forgot; nothing new was sent.
    const live = await liveTransfersTo(account);
    expect(live.map((t) => ({ id: t.id, amount: t.amount }))).toEqual([{ id: paid!.id, amount: 2 * NET }]);
    expect((await control.callCounts())['transfers.create'] ?? 0).toBe(createsBefore);
    expect(carrier).toMatchObject({ status: 'settled', amount_paise: 2 * NET, provider_transfer_id: paid!.id, provider_may_know_since: null });
    // The run asked the provider by the batch payout's note before any send.
    expect(await attemptOutcomes(db, carrier.id)).toEqual(['unknown', 'recovered', 'settled']);
    expect(await batchRow(batchId)).toMatchObject({ status: 'closed' });
    expect(await memberStatuses(batchId)).toEqual(['settled', 'settled']);
  });

  const setPaused = (paused: boolean) => db.query(
    `UPDATE transfer_switch SET paused = $1, reason = 'test', changed_by = 'test', changed_at = now() WHERE id = 1`, [paused]);

  test('when a paid batch is restored to after its close but before its transfer, then the payout sweep wakes its payout, which finds the forgotten transfer by its note: the vendor is paid the sum once', async () => {
    const { account, orders } = await hourlyPair(2);
    const batchId = await joinAll(orders);
    const url = stack.config.DATABASE_URL!;
    // Transfers paused: the close commits the batch's payout, and its claim waits for the resume.
    await setPaused(true);
    await client().workflow.getHandle(payoutBatchWorkflowId(batchId)).signal(closeBatchNowSignal, { actor: 'test' });
    await eventually(() => batchPayout(batchId), (p) => p?.status === 'pending');
    const snap = await snapshotDatabase(url, 'batch_closed_unpaid');

    // The lost window: transfers resume, the run pays the batch by one transfer and completes.
    await setPaused(false);
    await client().workflow.getHandle(payoutBatchWorkflowId(batchId)).signal(transfersResumedSignal);
    expect(await runResult(batchId)).toMatchObject({ kind: 'finished', status: 'settled' });
    const [paid] = await liveTransfersTo(account);
    expect(paid).toMatchObject({ amount: 2 * NET, notes: { batch_id: batchId } });
    const createsBefore = (await control.callCounts())['transfers.create'] ?? 0;

    // The restore forgets the transfer (and the resume, which ops make again).
    await restoreDatabase(url, snap, { exclusive: true });
    await setPaused(false);
    expect(await batchRow(batchId)).toMatchObject({ status: 'closed' });
    expect(await batchPayout(batchId)).toMatchObject({ status: 'pending', attempts: 0 });
    expect(await memberStatuses(batchId)).toEqual(['batched', 'batched']);

    await sweepPayouts();
    const carrier = await eventually(() => batchPayout(batchId), (p) => p?.status === 'settled', 30_000);

    const live = await liveTransfersTo(account);
    expect(live.map((t) => ({ id: t.id, amount: t.amount }))).toEqual([{ id: paid!.id, amount: 2 * NET }]);
    expect((await control.callCounts())['transfers.create'] ?? 0).toBe(createsBefore);
    expect(carrier).toMatchObject({ provider_transfer_id: paid!.id, provider_may_know_since: null });
    expect(await attemptOutcomes(db, carrier.id)).toEqual(['unknown', 'recovered', 'settled']);
    expect(await memberStatuses(batchId)).toEqual(['settled', 'settled']);
  });
});
