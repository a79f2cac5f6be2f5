/** Payout schedules (issue 22 item 4) against the real Temporal dev server, PostgreSQL and the Razorpay
 * sandbox: the orders of an hourly pair join one batch, whose run sends ONE transfer for the sum with
 * the batch id in its notes and as its idempotency key; the members take the batch's final status.
 * Every assertion about money reads the SANDBOX's ledger. */
import { randomBytes } from 'node:crypto';
import { payoutWorkflowId, type PayoutWorkflowResult } from '../../src/contracts/payout';
import { closeBatchNowSignal, payoutBatchWorkflowId } from '../../src/contracts/payoutBatch';
import { Client } from 'pg';
import type { Db } from '../../src/db/pool';
import { restoreDatabase, snapshotDatabase } from '../../src/devstack/dbRollback';
import { windowAt } from '../../src/domain/batchWindow';
import { istDateOf } from '../../src/domain/calendar';
import { closePayoutBatch, joinPayoutBatch } from '../../src/payouts/batches';
import { markProviderMayKnow } from '../../src/payouts/repository';
import { startPayoutWorkflow } from '../../src/payouts/temporalStarter';
import type { SandboxControl } from '../../src/sandbox/control';
import { payoutSweepWorkflow } from '../../src/workflows/payoutSweep';
import { attemptOutcomes, eventually, payoutRow, recordHistory, seedPaidOrder, type SeededOrder } from './payoutSeed';
import { opsApi, startBatchPayoutStack, type PayoutStack } from './payoutStack';

const NET = 8_100;

describe('payouts: hourly and daily batches per employer–vendor pair', () => {
  let stack: PayoutStack;
  let db: Db;
  let control: SandboxControl;
  const policy = { attemptCap: 5, retryBackoffMs: 200, retryBackoffMaxMs: 800 };

  beforeAll(async () => {
    stack = await startBatchPayoutStack('payout-batches');
    ({ db } = stack);
    control = stack.sandbox.control;
  });

  afterAll(async () => {
    await stack?.close();
  });

  const client = () => stack.temporal.client;
  const taskQueue = () => stack.config.TEMPORAL_TASK_QUEUE;
  const runResult = (key: string) => client().workflow.getHandle(payoutWorkflowId(key)).result() as Promise<PayoutWorkflowResult>;

  /** A pair on `schedule` with `n` paid orders (each 8,100 paise net, capture confirmed). */
  async function scheduledPair(n: number, opts: { schedule?: 'hourly' | 'daily'; accountStatus?: 'activated' | 'suspended' } = {}): Promise<{ account: string; orders: SeededOrder[] }> {
    const account = await control.createLinkedAccount(opts.accountStatus ? { status: opts.accountStatus } : undefined);
    const first = await seedPaidOrder(db, { linkedAccountId: account });
    await db.query('UPDATE employer_vendor SET payout_schedule = $3 WHERE employer_id = $1 AND vendor_id = $2', [first.employerId, first.vendorId, opts.schedule ?? 'hourly']);
    const orders = [first];
    for (let i = 1; i < n; i += 1) orders.push(await seedPaidOrder(db, { linkedAccountId: account, pair: first }));
    return { account, orders };
  }

  /** Starts each order's run and waits for it to hand the order to its batch. */
  async function joinAll(orders: SeededOrder[]): Promise<string> {
    for (const o of orders) await startPayoutWorkflow(client(), taskQueue(), o.orderId);
    const results = await Promise.all(orders.map((o) => runResult(o.orderId)));
    const batchIds = new Set(results.map((r) => (r.kind === 'batched' ? r.batchId : `not batched: ${JSON.stringify(r)}`)));
    expect(batchIds.size).toBe(1);
    return [...batchIds][0]!;
  }

  const closeNow = (batchId: string) => client().workflow.getHandle(payoutBatchWorkflowId(batchId)).signal(closeBatchNowSignal, { actor: 'test' });
  const batchPayout = async (batchId: string) => (await db.query('SELECT * FROM payouts WHERE batch_id = $1', [batchId])).rows[0];
  const memberStatuses = async (batchId: string) => (await db.query<{ status: string }>(
    'SELECT p.status FROM payout_batch_orders m JOIN payouts p ON p.order_id = m.order_id WHERE m.batch_id = $1 ORDER BY p.order_id', [batchId])).rows.map((r) => r.status);

  test('when three orders of an hourly pair are paid, then they join one batch and its close sends ONE transfer of the sum, with the batch id as key and note; a forged capture stays out', async () => {
    const { account, orders } = await scheduledPair(3);
    // A fourth order "paid" on a payment Razorpay never saw: its capture is not confirmed, so it never joins.
    const forged = await seedPaidOrder(db, { linkedAccountId: account, pair: orders[0], payment: { confirmed: false } });
    await startPayoutWorkflow(client(), taskQueue(), forged.orderId);
    // Its run waits for ops (review), as for any unconfirmed capture.
    await eventually(() => payoutRow(db, forged.orderId), (r) => r?.status === 'review');
    expect(await payoutRow(db, forged.orderId)).toMatchObject({ status: 'review', last_code: 'CAPTURE_NOT_CONFIRMED' });
    expect((await db.query('SELECT 1 FROM payout_batch_orders WHERE order_id = $1', [forged.orderId])).rowCount).toBe(0);

    const batchId = await joinAll(orders);
    expect(await memberStatuses(batchId)).toEqual(['batched', 'batched', 'batched']);
    const createsBefore = (await control.callCounts())['transfers.create'] ?? 0;
    // Nothing is sent before the window closes.
    await new Promise((r) => setTimeout(r, 500));
    expect((await control.callCounts())['transfers.create'] ?? 0).toBe(createsBefore);
    expect(await control.transfers({ recipient: account })).toHaveLength(0);

    // Ops see the open batch with the orders inside, and close it now instead of at the cutoff.
    const ops = opsApi(stack);
    const listed = await ops('GET', `/ops/batches?vendorId=${orders[0]!.vendorId}`);
    expect(listed.body.batches).toMatchObject([{ batchId, status: 'open', orderCount: 3, totalPaise: 3 * NET, schedule: 'hourly', payout: null }]);
    const detail = await ops('GET', `/ops/batches/${batchId}`);
    expect(detail.body.batch.orders.map((o: { orderId: string }) => o.orderId).sort()).toEqual(orders.map((o) => o.orderId).sort());
    expect((await ops('POST', `/ops/batches/${batchId}/close`, { reason: 'x' })).status).toBe(400);
    expect((await ops('POST', `/ops/batches/${batchId}/close`, { reason: 'vendor asked for an early payout' })).status).toBe(202);
    const result = await runResult(batchId);
    expect(result).toMatchObject({ kind: 'finished', orderId: batchId, status: 'settled', attempts: 1 });
    const carrier = await batchPayout(batchId);
    expect(carrier).toMatchObject({ order_id: null, status: 'settled', amount_paise: 3 * NET, attempts: 1 });
    const transfers = await control.transfers({ recipient: account });
    expect(transfers).toHaveLength(1);
    expect(transfers[0]).toMatchObject({ amount: 3 * NET, status: 'processed', notes: { transaction_id: carrier.id, batch_id: batchId } });
    expect((await control.callCounts())['transfers.create']).toBe(createsBefore + 1);
    expect(await memberStatuses(batchId)).toEqual(['settled', 'settled', 'settled']);
    expect(await attemptOutcomes(db, carrier.id)).toEqual(['accepted', 'settled']);
    expect((await ops('POST', `/ops/batches/${batchId}/close`, { reason: 'vendor asked again' })).body.error.code).toBe('batch_not_open');
    // The member order's payout names its batch; the batch's payout lists its orders.
    const member = await ops('GET', `/ops/payouts/${orders[0]!.orderId}`);
    expect(member.body).toMatchObject({ payout: { status: 'settled' }, batch: { batchId, status: 'closed', payout: { status: 'settled', providerTransferId: transfers[0]!.id } } });
    const own = await ops('GET', `/ops/payouts/${batchId}`);
    expect(own.body).toMatchObject({ payout: { id: carrier.id, batchId, amountPaise: 3 * NET }, order: null });
    expect(own.body.batch.orders).toHaveLength(3);
    // The vendor's statement: each order paid by the batch's one transfer, named with its batch.
    const day = istDateOf(new Date());
    const statement = await (await fetch(`${stack.apiUrl}/v1/vendors/${orders[0]!.vendorId}/statement?from=${day}&to=${day}`, { headers: stack.keys.finance })).json() as {
      lines: Array<{ orderId: string; paidBy: { rail: string; status: string; transferId: string | null; payoutBatchId?: string | null }; howPaid: string }>;
      totals: { transfer: { settledPaise: number }; vendorNetPaise: number };
    };
    const paidByBatch = statement.lines.filter((l) => orders.some((o) => o.orderId === l.orderId));
    expect(paidByBatch.map((l) => l.paidBy)).toEqual(orders.map(() => expect.objectContaining({ rail: 'transfer', status: 'settled', transferId: transfers[0]!.id, payoutBatchId: batchId })));
    expect(paidByBatch[0]!.howPaid).toContain(`transfer ${transfers[0]!.id} settled (batch ${batchId}`);
    expect(statement.totals.transfer.settledPaise).toBe(3 * NET);
    const batch = (await db.query('SELECT status, cutoff_at FROM payout_batches WHERE id = $1', [batchId])).rows[0];
    expect(batch.status).toBe('closed');
    expect(batch.cutoff_at.toISOString()).toBe(windowAt('hourly', new Date()).cutoff.toISOString());
    await recordHistory(client(), payoutWorkflowId(orders[0]!.orderId), 'payout-order-joins-batch');
    await recordHistory(client(), payoutBatchWorkflowId(batchId), 'payout-batch-settled');
    await recordHistory(client(), payoutWorkflowId(orders[0]!.orderId), 'payout-order-joins-batch-capture-listing');
    await recordHistory(client(), payoutBatchWorkflowId(batchId), 'payout-batch-settled-capture-listing');
    await recordHistory(client(), payoutBatchWorkflowId(batchId), 'payout-batch-settled-patches-up-front');
  });

  test('when orders join while the batch closes, then each order is in exactly one batch, the closed sum is exactly its members, and a late order goes to the next window', async () => {
    const { orders } = await scheduledPair(24);
    const opened = await joinPayoutBatch(db, orders[0]!.orderId, { kind: 'not_needed' }, policy);
    expect(opened.kind).toBe('joined');
    const first = opened.kind === 'joined' ? opened.batchId : '';
    // 22 joins race the close; the last order is paid exactly at the first window's cutoff.
    const atCutoff = orders[23]!;
    const cutoff = new Date(opened.kind === 'joined' ? opened.cutoffAt : 0);
    await db.query('UPDATE orders SET paid_at = $2 WHERE id = $1', [atCutoff.orderId, cutoff]);
    const [closed, ...joins] = await Promise.all([
      closePayoutBatch(db, first, policy.attemptCap),
      ...orders.slice(1).map((o) => joinPayoutBatch(db, o.orderId, { kind: 'not_needed' }, policy)),
    ]);
    expect(joins.every((j) => j.kind === 'joined')).toBe(true);
    const { rows } = await db.query<{ order_id: string; batch_id: string }>('SELECT order_id, batch_id FROM payout_batch_orders WHERE order_id = ANY($1)', [orders.map((o) => o.orderId)]);
    expect(rows).toHaveLength(24);
    const inFirst = rows.filter((r) => r.batch_id === first);
    // The closed batch's payout is the sum of exactly the orders that joined before it closed.
    expect(Number(closed!.amountPaise)).toBe(inFirst.length * NET);
    expect((await db.query('SELECT count(*)::int AS n FROM payout_batch_orders WHERE batch_id = $1', [first])).rows[0].n).toBe(inFirst.length);
    // Every order that missed it went to the next window, and the order paid at the cutoff is never in the first.
    const next = new Set(rows.filter((r) => r.batch_id !== first).map((r) => r.batch_id));
    expect(next.size).toBeLessThanOrEqual(1);
    expect(rows.find((r) => r.order_id === atCutoff.orderId)!.batch_id).not.toBe(first);
    const later = (await db.query('SELECT window_start FROM payout_batches WHERE id = $1', [rows.find((r) => r.order_id === atCutoff.orderId)!.batch_id])).rows[0];
    expect(later.window_start.toISOString()).toBe(cutoff.toISOString());
    // Joining again changes nothing (a retried activity).
    const again = await joinPayoutBatch(db, orders[1]!.orderId, { kind: 'not_needed' }, policy);
    expect(again).toMatchObject({ kind: 'joined', batchId: rows.find((r) => r.order_id === orders[1]!.orderId)!.batch_id });
    // The database itself refuses an order in two batches.
    await expect(db.query('INSERT INTO payout_batch_orders (order_id, batch_id, amount_paise) VALUES ($1, $2, 1)', [orders[1]!.orderId, first])).rejects.toThrow(/duplicate key/);
  });

  test('when a batch\'s transfer is rejected for good, then the batch is parked as one payout, and an ops retry through the API pays it once', async () => {
    const { account, orders } = await scheduledPair(2, { accountStatus: 'suspended' });
    const batchId = await joinAll(orders);
    await closeNow(batchId);
    await eventually(() => batchPayout(batchId), (p) => p?.status === 'parked');
    expect(await batchPayout(batchId)).toMatchObject({ last_code: 'BAD_REQUEST_TRANSFER_NOT_ALLOWED_TO_SUSPENDED_LINKED_ACCOUNT', attempts: 1 });
    expect(await memberStatuses(batchId)).toEqual(['batched', 'batched']);
    // The ops API takes the batch id where it takes an order id.
    const ops = opsApi(stack);
    const shown = await ops('GET', `/ops/payouts/${batchId}`);
    expect(shown.status).toBe(200);
    await control.setLinkedAccountStatus(account, 'activated');
    const reply = await ops('POST', `/ops/payouts/${batchId}/retry`, { reason: 'vendor reactivated' });
    expect(reply.status).toBe(200);
    expect(await runResult(batchId)).toMatchObject({ kind: 'finished', status: 'settled', attempts: 2 });
    const live = (await control.transfers({ recipient: account })).filter((t) => t.status === 'processed');
    expect(live).toHaveLength(1);
    expect(live[0]).toMatchObject({ amount: 2 * NET, notes: { batch_id: batchId } });
    expect(await memberStatuses(batchId)).toEqual(['settled', 'settled']);
    await recordHistory(client(), payoutBatchWorkflowId(batchId), 'payout-batch-parked-retried');
  });

  test('when a batch closes after its vendor lost its linked account, then it is rerouted: nothing is sent and every member\'s net is owed by a settlement run, in the open offline ledger', async () => {
    const { account, orders } = await scheduledPair(2);
    const batchId = await joinAll(orders);
    await db.query('UPDATE vendors SET linked_account_id = NULL WHERE id = $1', [orders[0]!.vendorId]);
    await closeNow(batchId);
    await eventually(() => batchPayout(batchId), (p) => p?.status === 'rerouted');
    expect(await memberStatuses(batchId)).toEqual(['rerouted', 'rerouted']);
    const ids = orders.map((o) => o.orderId).sort();
    const rails = await db.query('SELECT order_id, rail FROM ledger_obligations WHERE order_id = ANY($1) AND cause = \'order_net\' ORDER BY order_id', [ids]);
    expect(rails.rows).toEqual(ids.map((id) => ({ order_id: id, rail: 'settlement_run' })));
    const open = await db.query('SELECT order_id, amount_paise::int AS amount FROM offline_ledger_open WHERE order_id = ANY($1) ORDER BY order_id', [ids]);
    expect(open.rows).toEqual(ids.map((id) => ({ order_id: id, amount: NET })));
    expect(await control.transfers({ recipient: account })).toHaveLength(0);
  });

  test('when the database is restored to before an order joined its batch while its run is starting the batch\'s run, then the run follows the restored row, joins again, and the batch pays the vendor once', async () => {
    const { account, orders: [order] } = await scheduledPair(1);
    const url = stack.config.DATABASE_URL!;
    const snap = await snapshotDatabase(url, 'batch_join');
    // The run's read of its batch, right after its join, is made to wait. The join's trigger waits
    // (inside the join's transaction) on an advisory lock `gate` holds; once it waits, `holder` asks
    // for the batches table, queueing behind the join; then `gate` lets the join commit, `holder` is
    // granted the table first, and the run's next read queues behind it. No timing involved.
    const gate = new Client({ connectionString: url });
    const holder = new Client({ connectionString: url });
    for (const c of [gate, holder]) { c.on('error', () => {}); await c.connect(); } // ended by the restore
    const lockKey = 360_197;
    await gate.query('SELECT pg_advisory_lock($1)', [lockKey]);
    await db.query(`CREATE OR REPLACE FUNCTION test_batch_join_wait() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_advisory_xact_lock_shared(${lockKey}); RETURN NEW; END $$`);
    await db.query(`CREATE TRIGGER test_batch_join AFTER INSERT ON payout_batch_orders FOR EACH ROW WHEN (NEW.order_id = '${order!.orderId}') EXECUTE FUNCTION test_batch_join_wait()`);
    const waiting = (relation: string) => `SELECT count(*)::int AS n FROM pg_locks l WHERE NOT l.granted AND ${relation}`;
    await startPayoutWorkflow(client(), taskQueue(), order!.orderId);
    await eventually(() => db.query<{ n: number }>(waiting(`l.locktype = 'advisory' AND l.objid = ${lockKey}`)), (r) => r.rows[0]!.n > 0);
    await holder.query('BEGIN');
    const tableTaken = holder.query('LOCK TABLE payout_batches IN ACCESS EXCLUSIVE MODE');
    tableTaken.catch(() => {}); // ended by the restore
    const onBatches = `l.relation = 'payout_batches'::regclass`;
    await eventually(() => db.query<{ n: number }>(waiting(onBatches)), (r) => r.rows[0]!.n > 0);
    await gate.query('SELECT pg_advisory_unlock($1)', [lockKey]);
    await tableTaken;
    expect(await payoutRow(db, order!.orderId)).toMatchObject({ status: 'batched' });
    await eventually(() => db.query<{ n: number }>(waiting(onBatches)), (r) => r.rows[0]!.n > 0);

    // The restore forgets the join (and the batch); Temporal remembers the run's.
    await restoreDatabase(url, snap, { exclusive: true });
    await Promise.all([holder.end().catch(() => {}), gate.end().catch(() => {})]);
    expect(await payoutRow(db, order!.orderId)).toMatchObject({ status: 'pending' });

    const result = await runResult(order!.orderId);
    expect(result).toMatchObject({ kind: 'batched' });
    const batchId = (result as { batchId: string }).batchId;
    expect((await db.query('SELECT batch_id FROM payout_batch_orders WHERE order_id = $1', [order!.orderId])).rows).toEqual([{ batch_id: batchId }]);
    await closeNow(batchId);
    expect(await runResult(batchId)).toMatchObject({ kind: 'finished', status: 'settled' });
    const transfers = await control.transfers({ recipient: account });
    expect(transfers).toHaveLength(1);
    expect(transfers[0]).toMatchObject({ amount: NET, notes: { batch_id: batchId } });
    expect(await memberStatuses(batchId)).toEqual(['settled']);
    await db.query('DROP TRIGGER test_batch_join ON payout_batch_orders');
    await recordHistory(client(), payoutWorkflowId(order!.orderId), 'payout-order-join-forgotten-by-restore');
  });

  // Issue 36 item 3: a row that may be older than the provider's ledger is not joined into a batch
  // until the provider, asked by the payout's note, has answered.
  const moveToHourly = (o: SeededOrder) =>
    db.query(`UPDATE employer_vendor SET payout_schedule = 'hourly' WHERE employer_id = $1 AND vendor_id = $2`, [o.employerId, o.vendorId]);
  /** The scheduled payout sweep, once: a completed run over an open row marks it and starts a new run. */
  const sweepPayouts = () => client().workflow.execute(payoutSweepWorkflow, {
    workflowId: `payout-sweep-test-${randomBytes(4).toString('hex')}`, taskQueue: taskQueue(), args: [{}],
  });
  /** The order's latest run to its end; a run that handed the order to a batch waits for that batch to pay. */
  async function payoutAfterSweep(orderId: string): Promise<PayoutWorkflowResult> {
    await sweepPayouts();
    const result = await runResult(orderId);
    if (result.kind === 'batched') {
      await closeNow(result.batchId);
      await runResult(result.batchId);
    }
    return result;
  }
  const liveTransfersTo = async (account: string) => (await control.transfers({ recipient: account })).filter((t) => t.status !== 'failed' && t.status !== 'reversed');

  test('when a per-order transfer paid the order inside the window a restore forgot and the pair pays hourly after the restore, then the order asks the provider by its note, is settled by that transfer and joins no batch: the vendor is paid once', async () => {
    const account = await control.createLinkedAccount();
    const order = await seedPaidOrder(db, { linkedAccountId: account });
    const url = stack.config.DATABASE_URL!;
    const snap = await snapshotDatabase(url, 'per_order_paid');

    // The lost window: the pair still pays per order, the order's own transfer pays the vendor, and
    // its run completes; then the pair moves to hourly.
    await startPayoutWorkflow(client(), taskQueue(), order.orderId);
    expect(await runResult(order.orderId)).toMatchObject({ kind: 'finished', status: 'settled' });
    const [paid] = await liveTransfersTo(account);
    expect(paid).toMatchObject({ amount: NET, notes: { transaction_id: order.payoutId, order_id: order.orderId } });
    await moveToHourly(order);

    // The restore forgets the send and the schedule change; ops make the change again.
    await restoreDatabase(url, snap, { exclusive: true });
    expect(await payoutRow(db, order.orderId)).toMatchObject({ status: 'pending', attempts: 0 });
    await moveToHourly(order);

    const result = await payoutAfterSweep(order.orderId);

    // The sandbox's ledger: the order's net reached the vendor once, by the transfer the restore forgot.
    const live = await liveTransfersTo(account);
    expect(live.map((t) => ({ id: t.id, amount: t.amount }))).toEqual([{ id: paid!.id, amount: NET }]);
    expect(result).toMatchObject({ kind: 'finished', status: 'settled' });
    expect(await payoutRow(db, order.orderId)).toMatchObject({ status: 'settled', provider_transfer_id: paid!.id });
    expect(await attemptOutcomes(db, order.payoutId!)).toEqual(['unknown', 'recovered', 'settled']);
    expect((await db.query('SELECT 1 FROM payout_batch_orders WHERE order_id = $1', [order.orderId])).rowCount).toBe(0);
  });

  test('when a restore makes an hourly pair\'s order a row the provider may know and the provider has no transfer for it, then it joins its batch only after the lookup, and the batch pays the vendor once', async () => {
    const account = await control.createLinkedAccount();
    const order = await seedPaidOrder(db, { linkedAccountId: account });
    const url = stack.config.DATABASE_URL!;
    await moveToHourly(order);
    const snap = await snapshotDatabase(url, 'hourly_unsent');

    // The lost window: the pair is paid offline for a while, so the order's run reroutes it and
    // completes without a transfer.
    await db.query(`UPDATE employer_vendor SET settlement_mode = 'corporate_direct' WHERE employer_id = $1 AND vendor_id = $2`, [order.employerId, order.vendorId]);
    await startPayoutWorkflow(client(), taskQueue(), order.orderId);
    expect(await runResult(order.orderId)).toMatchObject({ kind: 'no_transfer' });

    // After the restore the row is open again under a completed run: the sweep marks it (as here
    // first), and a join of the marked row is refused whoever asks for it.
    await restoreDatabase(url, snap, { exclusive: true });
    expect(await payoutRow(db, order.orderId)).toMatchObject({ status: 'pending', attempts: 0 });
    expect(await markProviderMayKnow(db, order.orderId)).toBe(true);
    expect(await joinPayoutBatch(db, order.orderId, { kind: 'not_needed' }, policy)).toMatchObject({ kind: 'not_joined', why: expect.stringContaining('provider may already hold') });
    const result = await payoutAfterSweep(order.orderId);

    expect(result).toMatchObject({ kind: 'batched' });
    const batchId = (result as { batchId: string }).batchId;
    const live = await liveTransfersTo(account);
    expect(live.map((t) => ({ amount: t.amount, notes: t.notes }))).toEqual([{ amount: NET, notes: expect.objectContaining({ batch_id: batchId }) }]);
    expect(await memberStatuses(batchId)).toEqual(['settled']);
    // The join came after the provider's answer: the lookup's claim found nothing, then the order joined.
    expect(await attemptOutcomes(db, order.payoutId!)).toEqual(['unknown', 'not_found']);
  });
});
