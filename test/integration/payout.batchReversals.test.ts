/** Issue 36 item 1: a batch's ONE transfer reversed from the Razorpay Dashboard after it settled. The
 * reversal is recorded against the batch (it pays no single order), the batch's payout is owed again
 * (parked TRANSFER_REVERSED in ops' queue, nothing sent by itself) and its member orders go back to
 * `batched`: none of them reads paid while Razorpay holds the money back. Ops then retry the batch
 * (one new transfer for the sum) or pay it offline (each member's net in the open offline ledger, for
 * the next settlement run). Real API (signed webhooks from the sandbox), worker, PostgreSQL and
 * sandbox; every assertion about money reads the SANDBOX's ledger. */
import { payoutWorkflowId, type PayoutWorkflowResult } from '../../src/contracts/payout';
import { closeBatchNowSignal, payoutBatchWorkflowId } from '../../src/contracts/payoutBatch';
import type { Db } from '../../src/db/pool';
import { reconWorkflowId } from '../../src/contracts/recon';
import { addDays, istDateOf } from '../../src/domain/calendar';
import { reconWorkflow } from '../../src/workflows/recon';
import { startPayoutWorkflow } from '../../src/payouts/temporalStarter';
import { expectLedgerTies } from './ledgerTie';
import { eventually, seedPaidOrder, type SeededOrder } from './payoutSeed';
import { opsApi, startBatchPayoutStack, type PayoutStack } from './payoutStack';

const NET = 8_100;

describe('payout batches: the batch transfer reversed after it paid', () => {
  let stack: PayoutStack;
  let db: Db;

  beforeAll(async () => {
    stack = await startBatchPayoutStack('batch-reversals');
    ({ db } = stack);
  });

  afterEach(async () => {
    await expectLedgerTies(db);
  });

  afterAll(async () => {
    await stack?.close();
  });

  const client = () => stack.temporal.client;
  const control = () => stack.sandbox.control;
  const ops = () => opsApi(stack);
  const runResult = (key: string) => client().workflow.getHandle(payoutWorkflowId(key)).result() as Promise<PayoutWorkflowResult>;
  const batchPayout = async (batchId: string) => (await db.query('SELECT * FROM payouts WHERE batch_id = $1', [batchId])).rows[0];
  const memberStatuses = async (batchId: string) => (await db.query<{ status: string }>(
    'SELECT p.status FROM payout_batch_orders m JOIN payouts p ON p.order_id = m.order_id WHERE m.batch_id = $1 ORDER BY p.order_id', [batchId])).rows.map((r) => r.status);
  const createCalls = async () => (await control().callCounts())['transfers.create'] ?? 0;

  /** Two orders of an hourly pair paid by their batch's one settled transfer. */
  async function settledBatch(): Promise<{ account: string; orders: SeededOrder[]; batchId: string; transferId: string }> {
    const account = await control().createLinkedAccount();
    const first = await seedPaidOrder(db, { linkedAccountId: account });
    await db.query(`UPDATE employer_vendor SET payout_schedule = 'hourly' WHERE employer_id = $1 AND vendor_id = $2`, [first.employerId, first.vendorId]);
    const orders = [first, await seedPaidOrder(db, { linkedAccountId: account, pair: first })];
    for (const o of orders) await startPayoutWorkflow(client(), stack.config.TEMPORAL_TASK_QUEUE, o.orderId);
    const joined = await Promise.all(orders.map((o) => runResult(o.orderId)));
    const batchId = joined[0]!.kind === 'batched' ? joined[0]!.batchId : '';
    expect(joined.map((r) => r.kind === 'batched' && r.batchId)).toEqual([batchId, batchId]);
    await client().workflow.getHandle(payoutBatchWorkflowId(batchId)).signal(closeBatchNowSignal, { actor: 'test' });
    expect(await runResult(batchId)).toMatchObject({ kind: 'finished', status: 'settled' });
    const [transfer] = await control().transfers({ recipient: account });
    expect(transfer).toMatchObject({ amount: 2 * NET, notes: { batch_id: batchId } });
    await eventually(() => control().transfers({ recipient: account }), (ts) => ts[0]?.status === 'processed');
    expect(await memberStatuses(batchId)).toEqual(['settled', 'settled']);
    return { account, orders, batchId, transferId: transfer!.id };
  }

  async function reverseFromDashboard(transferId: string) {
    const reversal = await control().reverseTransferFromDashboard(transferId, {});
    await control().drainWebhooks();
    return reversal;
  }

  const statementOf = async (vendorId: string) => {
    const day = istDateOf(new Date());
    const res = await fetch(`${stack.apiUrl}/v1/vendors/${vendorId}/statement?from=${day}&to=${day}`, { headers: stack.keys.finance });
    return await res.json() as { lines: Array<{ orderId: string; paidBy: { rail: string; status: string } }>; totals: { transfer: { settledPaise: number } } };
  };

  test('when a settled batch transfer is reversed from the Dashboard, then the reversal is recorded against the batch, the batch is parked for ops, its members read unpaid, and ops retry pays the sum once more by one transfer', async () => {
    const { account, orders, batchId, transferId } = await settledBatch();
    const carrier = await batchPayout(batchId);
    const reversal = await reverseFromDashboard(transferId);
    expect(await control().linkedAccountBalance(account)).toBe(0);

    const parked = await eventually(() => batchPayout(batchId), (p) => p?.status === 'parked');
    expect(parked).toMatchObject({ last_code: 'TRANSFER_REVERSED', provider_transfer_id: transferId });
    const recorded = await db.query('SELECT id, payout_id, order_id, batch_id, amount_paise::int AS amount, owed_paise::int AS owed, made_by FROM transfer_reversals WHERE transfer_id = $1', [transferId]);
    expect(recorded.rows).toEqual([{ id: reversal.id, payout_id: carrier.id, order_id: null, batch_id: batchId, amount: 2 * NET, owed: 2 * NET, made_by: 'outside' }]);
    // The members wait on the batch again: not paid, and not each a payout ops could pay on its own.
    expect(await memberStatuses(batchId)).toEqual(['batched', 'batched']);
    const statement = await statementOf(orders[0]!.vendorId);
    expect(statement.lines.filter((l) => orders.some((o) => o.orderId === l.orderId)).map((l) => l.paidBy.status)).toEqual(['awaiting', 'awaiting']);
    expect(statement.totals.transfer.settledPaise).toBe(0);
    const queue = await ops()('GET', '/ops/payouts?reason=TRANSFER_REVERSED');
    expect(queue.body.items.map((i: { orderId: string }) => i.orderId)).toContain(batchId);
    expect(queue.body.items.map((i: { orderId: string }) => i.orderId)).not.toContain(orders[0]!.orderId);

    // Ops retry the batch: one new transfer for the sum; the members are paid by it.
    const callsBefore = await createCalls();
    expect((await ops()('POST', `/ops/payouts/${batchId}/retry`, { reason: 'the vendor confirmed the reversal was a mistake' })).status).toBe(200);
    const settledAgain = await eventually(() => batchPayout(batchId), (p) => p?.status === 'settled');
    expect(settledAgain.provider_transfer_id).not.toBe(transferId);
    expect(await createCalls()).toBe(callsBefore + 1);
    const live = await eventually(() => control().transfers({ recipient: account }), (ts) => ts.some((t) => t.status === 'processed'));
    expect(live.map((t) => [t.status, t.amount]).sort()).toEqual([['processed', 2 * NET], ['reversed', 2 * NET]]);
    expect(await control().linkedAccountBalance(account)).toBe(2 * NET);
    expect(await memberStatuses(batchId)).toEqual(['settled', 'settled']);
  });

  test('when ops pay a reversed batch offline, then every member is offline with its net in the open offline ledger and nothing is sent', async () => {
    const { orders, batchId, transferId } = await settledBatch();
    await reverseFromDashboard(transferId);
    await eventually(() => batchPayout(batchId), (p) => p?.status === 'parked');
    const callsBefore = await createCalls();

    const decided = await ops()('POST', `/ops/payouts/${batchId}/pay-offline`, { reason: 'the vendor asked for NEFT after the reversal' });
    expect(decided.status).toBe(200);
    expect(decided.body.payout).toMatchObject({ status: 'offline', providerTransferId: null });
    expect(await memberStatuses(batchId)).toEqual(['offline', 'offline']);
    const open = await db.query('SELECT order_id, amount_paise::int AS amount_paise FROM offline_ledger_open WHERE order_id = ANY($1) ORDER BY order_id', [orders.map((o) => o.orderId)]);
    expect(open.rows).toEqual(orders.map((o) => ({ order_id: o.orderId, amount_paise: NET })).sort((a, b) => a.order_id.localeCompare(b.order_id)));
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await createCalls()).toBe(callsBefore);
  });

  test('when the settlement report carries the batch transfer and its reversal, then recon matches both to our rows and raises nothing', async () => {
    const today = istDateOf(new Date(await control().now()));
    const settleOn = async (day: string) => {
      await control().injectAdjustment({ amountPaise: 1_000_000, description: 'keeps the settlement positive', date: day });
      expect(await control().runSettlements({ date: day, holidays: [] })).toHaveLength(1);
    };
    const { batchId, transferId } = await settledBatch();
    await settleOn(addDays(today, 7));
    const reversal = await reverseFromDashboard(transferId);
    await eventually(() => batchPayout(batchId), (p) => p?.status === 'parked');
    await settleOn(addDays(today, 8));
    const window = { from: addDays(today, 7), to: addDays(today, 8), asOf: addDays(today, 9) };
    // The test servers share one namespace: another file may reconcile the same window at once.
    await client().workflow.execute(reconWorkflow, { workflowId: `${reconWorkflowId(window)}-${stack.temporal.taskQueue}`, taskQueue: stack.temporal.taskQueue, args: [window] });

    const rows = await db.query('SELECT entity_id, type FROM recon_rows WHERE entity_id = ANY($1) ORDER BY type', [[transferId, reversal.id]]);
    expect(rows.rows).toEqual([{ entity_id: reversal.id, type: 'reversal' }, { entity_id: transferId, type: 'transfer' }]);
    expect((await db.query('SELECT reason FROM recon_exceptions WHERE entity_id = ANY($1)', [[transferId, reversal.id]])).rows).toEqual([]);
  });
});
