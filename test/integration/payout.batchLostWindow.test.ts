/** Issue 36, campaign finding 8: a batch that closed and paid inside a restore's lost window. After
 * the restore its row is open again with only the members that joined before the restore point; the
 * provider holds its one transfer for the members the close saw. The batch must end paid by that
 * transfer, with exactly those members: an order whose earlier run joined it comes back to it (its
 * completed run is the record the restore could not erase), and an order that first joins after the
 * cutoff goes to the next window, never into the sum the provider already paid. Real Temporal dev
 * server, PostgreSQL and sandbox; money read from the SANDBOX's ledger. */
import { randomBytes } from 'node:crypto';
import { payoutWorkflowId, type PayoutWorkflowResult } from '../../src/contracts/payout';
import { closeBatchNowSignal, payoutBatchWorkflowId } from '../../src/contracts/payoutBatch';
import type { Db } from '../../src/db/pool';
import { restoreDatabase, snapshotDatabase } from '../../src/devstack/dbRollback';
import { startPayoutWorkflow } from '../../src/payouts/temporalStarter';
import { payoutSweepWorkflow } from '../../src/workflows/payoutSweep';
import { expectLedgerTies } from './ledgerTie';
import { eventually, seedPaidOrder, type SeededOrder } from './payoutSeed';
import { startBatchPayoutStack, type PayoutStack } from './payoutStack';

const NET = 8_100;
const IST_OFFSET_MS = (5 * 60 + 30) * 60_000;

/** The IST time of day `ms` from now, as PostgreSQL's `time` text (a daily cutoff that soon). */
const istTimeIn = (ms: number): string => new Date(Date.now() + ms + IST_OFFSET_MS).toISOString().slice(11, 19);

describe('payout batches: a batch closed and paid inside the window a restore forgot', () => {
  let stack: PayoutStack;
  let db: Db;

  beforeAll(async () => {
    stack = await startBatchPayoutStack('payout-batch-lost-window');
    ({ db } = stack);
  });

  afterAll(async () => {
    await stack?.close();
  });

  const client = () => stack.temporal.client;
  const taskQueue = () => stack.config.TEMPORAL_TASK_QUEUE;
  const control = () => stack.sandbox.control;
  const runResult = (key: string) => client().workflow.getHandle(payoutWorkflowId(key)).result() as Promise<PayoutWorkflowResult>;
  const batchRunResult = (batchId: string) => client().workflow.getHandle(payoutBatchWorkflowId(batchId)).result() as Promise<PayoutWorkflowResult>;
  const batchIdOf = (r: PayoutWorkflowResult) => (r.kind === 'batched' ? r.batchId : `not batched: ${JSON.stringify(r)}`);
  const membersOf = async (batchId: string) => (await db.query<{ order_id: string; status: string }>(
    'SELECT m.order_id, p.status FROM payout_batch_orders m JOIN payouts p ON p.order_id = m.order_id WHERE m.batch_id = $1 ORDER BY m.order_id', [batchId])).rows;
  const batchPayout = async (batchId: string) => (await db.query<{ status: string; amount_paise: number; provider_transfer_id: string | null; last_code: string | null }>(
    'SELECT status, amount_paise::int AS amount_paise, provider_transfer_id, last_code FROM payouts WHERE batch_id = $1', [batchId])).rows[0];
  const sweepPayouts = () => client().workflow.execute(payoutSweepWorkflow, {
    workflowId: `payout-sweep-test-${randomBytes(4).toString('hex')}`, taskQueue: taskQueue(), args: [{}],
  });

  test('when a daily batch closed and paid inside the lost window, then after the restore the orders its close saw come back to it, later ones go to the next window, and its one transfer is recorded as paying exactly them', async () => {
    const account = await control().createLinkedAccount();
    const first = await seedPaidOrder(db, { linkedAccountId: account });
    const orders: SeededOrder[] = [first];
    for (let i = 0; i < 3; i += 1) orders.push(await seedPaidOrder(db, { linkedAccountId: account, pair: first }));
    const [beforeSnap, inLostWindow, fresh1, fresh2] = orders as [SeededOrder, SeededOrder, SeededOrder, SeededOrder];
    // A daily pair whose cutoff is 8 s away: every order here was paid in the window it closes.
    await db.query(`UPDATE employer_vendor SET payout_schedule = 'daily', payout_cutoff_ist = $3 WHERE employer_id = $1 AND vendor_id = $2`,
      [first.employerId, first.vendorId, istTimeIn(8_000)]);

    await startPayoutWorkflow(client(), taskQueue(), beforeSnap.orderId);
    const batch = batchIdOf(await runResult(beforeSnap.orderId));
    const url = stack.config.DATABASE_URL!;
    const snap = await snapshotDatabase(url, 'batch_closed_in_lost_window');

    // The lost window: a second order joins, the cutoff passes, the batch closes with both and its
    // transfer settles; the run completes.
    await startPayoutWorkflow(client(), taskQueue(), inLostWindow.orderId);
    expect(batchIdOf(await runResult(inLostWindow.orderId))).toBe(batch);
    expect(await batchRunResult(batch)).toMatchObject({ kind: 'finished', status: 'settled' });
    const [paid, ...others] = await control().transfers({ recipient: account });
    expect(others).toEqual([]);
    expect(paid).toMatchObject({ amount: 2 * NET, status: 'processed', notes: expect.objectContaining({ batch_id: batch }) });

    // The restore forgets the second join, the close and the transfer; the batch is open again.
    await restoreDatabase(url, snap, { exclusive: true });
    expect((await db.query('SELECT status FROM payout_batches WHERE id = $1', [batch])).rows[0]).toEqual({ status: 'open' });
    expect((await membersOf(batch)).map((m) => m.order_id)).toEqual([beforeSnap.orderId]);

    // Two orders of the same window join for the first time after the restore (its cutoff has
    // passed): they belong to the next window, not to the sum the provider already paid.
    for (const o of [fresh1, fresh2]) await startPayoutWorkflow(client(), taskQueue(), o.orderId);
    const later = new Set([batchIdOf(await runResult(fresh1.orderId)), batchIdOf(await runResult(fresh2.orderId))]);
    expect(later.size).toBe(1);
    const next = [...later][0]!;
    expect(next).not.toBe(batch);

    // The sweep finds the batch's completed run over its open row, and the second order's completed
    // run over its pending row: the batch closes again and asks the provider first; the order comes
    // back to the batch its run joined.
    await sweepPayouts();
    expect(batchIdOf(await runResult(inLostWindow.orderId))).toBe(batch);
    const settled = await eventually(() => batchPayout(batch), (p) => p?.status === 'settled' || p?.status === 'review' || p?.status === 'parked', 45_000);
    expect(settled).toMatchObject({ status: 'settled', amount_paise: 2 * NET, provider_transfer_id: paid!.id });
    expect(await membersOf(batch)).toEqual([beforeSnap.orderId, inLostWindow.orderId].sort().map((order_id) => ({ order_id, status: 'settled' })));

    // The next window's batch pays the two later orders with one transfer of its own.
    await client().workflow.getHandle(payoutBatchWorkflowId(next)).signal(closeBatchNowSignal, { actor: 'test' });
    expect(await batchRunResult(next)).toMatchObject({ kind: 'finished', status: 'settled' });
    expect(await membersOf(next)).toEqual([fresh1.orderId, fresh2.orderId].sort().map((order_id) => ({ order_id, status: 'settled' })));

    // The sandbox's ledger: each order's net reached the vendor exactly once, in two transfers.
    const live = (await control().transfers({ recipient: account })).filter((t) => t.status !== 'failed' && t.status !== 'reversed');
    expect(live.map((t) => ({ amount: t.amount, batch: t.notes && !Array.isArray(t.notes) ? t.notes.batch_id : null })).sort((a, b) => String(a.batch).localeCompare(String(b.batch))))
      .toEqual([{ amount: 2 * NET, batch }, { amount: 2 * NET, batch: next }].sort((a, b) => a.batch.localeCompare(b.batch)));
    await expectLedgerTies(db);
  });
});
