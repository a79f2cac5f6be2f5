/** Issue 36, step 1: the ledger built from today's rail tables. Orders are paid down every rail the
 * real way (transfers settled and in flight, batches, a batch and an order reversed from the
 * Dashboard, one retried, ops' cancel, an offline payout, cash and corporate_direct through markPaid);
 * the rebuild places every row, the database accepts it (one active discharge per obligation, a
 * discharge's amount = what it pays), every vendor's balance ties to its statement to the paisa, and
 * the constraints refuse a second instrument for money already paid. Real API, worker, PostgreSQL
 * and sandbox. */
import { randomBytes } from 'node:crypto';
import { payoutWorkflowId, type PayoutWorkflowResult } from '../../src/contracts/payout';
import { inTransaction, type Db } from '../../src/db/pool';
import { rebuildLedger } from '../../src/ledger/backfill';
import { rebuildLedgerUntilDone } from '../../src/ledger/upgrade';
import { readVendorTies, tieDifferences } from '../../src/statements/ledgerTie';
import { markPaid } from '../../src/moneyin/markPaid';
import { startPayoutWorkflow } from '../../src/payouts/temporalStarter';
import { startAppProcess } from '../support/processes';
import { eventually, payoutRow, seedPaidOrder, type SeededOrder } from './payoutSeed';
import { opsApi, startBatchPayoutStack, type PayoutStack } from './payoutStack';

const NET = 8_100;

describe('the ledger under every rail, built from today\'s tables', () => {
  let stack: PayoutStack;
  let db: Db;

  beforeAll(async () => {
    stack = await startBatchPayoutStack('ledger-backfill');
    ({ db } = stack);
  });

  afterAll(async () => {
    await stack?.close();
  });

  const client = () => stack.temporal.client;
  const control = () => stack.sandbox.control;
  const ops = () => opsApi(stack);
  const runResult = (key: string) => client().workflow.getHandle(payoutWorkflowId(key)).result() as Promise<PayoutWorkflowResult>;
  const settle = async (o: SeededOrder) => {
    await startPayoutWorkflow(client(), stack.config.TEMPORAL_TASK_QUEUE, o.orderId);
    return runResult(o.orderId);
  };
  const reverse = async (transferId: string) => {
    await control().reverseTransferFromDashboard(transferId, {});
    await control().drainWebhooks();
  };

  /** An order of a new pair with `mode`, paid through markPaid as money in pays it. */
  async function paidThroughMoneyIn(mode: 'corporate_direct' | 'platform_transfer', method: 'cash' | 'wallet'): Promise<string> {
    const tag = randomBytes(5).toString('hex');
    await db.query('INSERT INTO employers (id, name) VALUES ($1, $2)', [`emp_${tag}`, `Employer ${tag}`]);
    await db.query('INSERT INTO vendors (id, name) VALUES ($1, $2)', [`ven_${tag}`, `Vendor ${tag}`]);
    await db.query('INSERT INTO employer_vendor (employer_id, vendor_id, settlement_mode, commission_bps) VALUES ($1, $2, $3, 1900)', [`emp_${tag}`, `ven_${tag}`, mode]);
    await db.query(
      `INSERT INTO orders (id, client_reference, employer_id, vendor_id, employee_id, total_paise, subsidy_paise, customer_share_paise,
         commission_bps, commission_paise, vendor_net_paise, payment_method, status)
       VALUES ($1, $2, $3, $4, 'emp-1', 10000, 7000, 3000, 1900, 1900, 8100, $5, 'pending')`,
      [`ord_${tag}`, `ref_${tag}`, `emp_${tag}`, `ven_${tag}`, method]);
    await inTransaction(db, (tx) => markPaid(tx, `ord_${tag}`, { via: method === 'cash' ? 'cash' : 'wallet' }));
    return `ven_${tag}`;
  }

  test('when orders are paid down every rail, then the rebuild places every row, the database accepts it, and every vendor ties to its statement', async () => {
    // Per order: one settled, one never started (owed, awaiting its transfer).
    const account = await control().createLinkedAccount();
    const settled = await seedPaidOrder(db, { linkedAccountId: account });
    expect(await settle(settled)).toMatchObject({ status: 'settled' });
    await seedPaidOrder(db, { linkedAccountId: account, pair: settled });
    // Reversed from the Dashboard, then retried by ops: paid by its second transfer.
    const retried = await seedPaidOrder(db, { linkedAccountId: account, pair: settled });
    await settle(retried);
    await reverse((await payoutRow(db, retried.orderId))!.provider_transfer_id!);
    await eventually(() => payoutRow(db, retried.orderId), (p) => p?.status === 'parked');
    expect((await ops()('POST', `/ops/payouts/${retried.orderId}/retry`, { reason: 'the reversal was a mistake' })).status).toBe(200);
    await eventually(() => payoutRow(db, retried.orderId), (p) => p?.status === 'settled');
    // Reversed and paid offline instead: owed again, by settlement run.
    const offline = await seedPaidOrder(db, { linkedAccountId: account, pair: settled });
    await settle(offline);
    await reverse((await payoutRow(db, offline.orderId))!.provider_transfer_id!);
    await eventually(() => payoutRow(db, offline.orderId), (p) => p?.status === 'parked');
    expect((await ops()('POST', `/ops/payouts/${offline.orderId}/pay-offline`, { reason: 'NEFT after the reversal' })).status).toBe(200);
    // A capture Razorpay does not confirm, cancelled by ops: not owed.
    const cancelled = await seedPaidOrder(db, { linkedAccountId: account, pair: settled, payment: { confirmed: false } });
    await startPayoutWorkflow(client(), stack.config.TEMPORAL_TASK_QUEUE, cancelled.orderId);
    await eventually(() => payoutRow(db, cancelled.orderId), (p) => p?.status === 'review');
    expect((await ops()('POST', `/ops/payouts/${cancelled.orderId}/cancel`, { reason: 'the customer never paid' })).status).toBe(200);

    // An hourly pair: a batch settled; the next window's batch reversed from the Dashboard (parked).
    const batchAccount = await control().createLinkedAccount();
    const first = await seedPaidOrder(db, { linkedAccountId: batchAccount });
    await db.query(`UPDATE employer_vendor SET payout_schedule = 'hourly' WHERE employer_id = $1 AND vendor_id = $2`, [first.employerId, first.vendorId]);
    const batchOf = async (orders: SeededOrder[]) => {
      const joined = await Promise.all(orders.map(async (o) => settle(o)));
      const batchId = joined[0]!.kind === 'batched' ? joined[0]!.batchId : '';
      expect((await ops()('POST', `/ops/batches/${batchId}/close`, { reason: 'the test closes the window now' })).status).toBe(202);
      expect(await runResult(batchId)).toMatchObject({ status: 'settled' });
      return batchId;
    };
    await batchOf([first, await seedPaidOrder(db, { linkedAccountId: batchAccount, pair: first })]);
    const reversedBatch = await batchOf([await seedPaidOrder(db, { linkedAccountId: batchAccount, pair: first }), await seedPaidOrder(db, { linkedAccountId: batchAccount, pair: first })]);
    await reverse((await db.query('SELECT provider_transfer_id FROM payouts WHERE batch_id = $1', [reversedBatch])).rows[0].provider_transfer_id);
    await eventually(async () => (await db.query('SELECT status FROM payouts WHERE batch_id = $1', [reversedBatch])).rows[0], (p) => p?.status === 'parked');

    // Cash at the counter, and an employer paying its vendor directly.
    const cashVendor = await paidThroughMoneyIn('platform_transfer', 'cash');
    const directVendor = await paidThroughMoneyIn('corporate_direct', 'wallet');

    const built = await rebuildLedger(db);
    expect(built.disagreements).toEqual([]);
    expect(built.unplaced).toEqual([]);
    const ties = await readVendorTies(db);
    expect(ties.flatMap(tieDifferences)).toEqual([]);

    const balance = async (vendorId: string) => (await db.query(
      'SELECT owed_paise::int AS owed, paid_paise::int AS paid, in_flight_paise::int AS in_flight, open_paise::int AS open FROM ledger_vendor_balances WHERE vendor_id = $1', [vendorId])).rows[0];
    // Six nets and two reversals owed; paid: the settled one, the retried one's two transfers, the
    // offline one's reversed transfer, and the cancel's netting (0); open: the never-started net and
    // the offline one's reversal.
    expect(await balance(settled.vendorId)).toEqual({ owed: 5 * NET + 2 * NET - NET, paid: 4 * NET, in_flight: 0, open: 2 * NET });
    // The reversed batch: its members' nets paid by its transfer, owed again by its reversal.
    expect(await balance(first.vendorId)).toEqual({ owed: 6 * NET, paid: 4 * NET, in_flight: 0, open: 2 * NET });
    expect(await balance(cashVendor)).toMatchObject({ owed: NET, paid: 3_000, open: NET - 3_000 });
    expect(await balance(directVendor)).toEqual({ owed: NET, paid: NET, in_flight: 0, open: 0 });
    // A rebuild is the same ledger again, not a second one.
    expect(await rebuildLedger(db)).toMatchObject({ obligations: built.obligations, discharges: built.discharges, items: built.items });

    // Finance's command says the same, as its own process against the same database.
    const cli = startAppProcess('src/cli/ledger.ts', { DATABASE_URL: stack.config.DATABASE_URL!, LOG_LEVEL: 'warn' }, []);
    expect(await cli.exited).toBe(0);
    expect(cli.output()).toContain(`${built.obligations} obligations, ${built.discharges} discharges (${built.items} items)`);
    expect(cli.output()).toMatch(/\d+ vendors checked against their statements: every one ties to the paisa/);
  });

  test('when the rails show an order paid twice (its transfer settled and a Route split processed for it), then the rebuild names the second instrument, writes only the first, and the command exits 1', async () => {
    const account = await control().createLinkedAccount();
    const order = await seedPaidOrder(db, { linkedAccountId: account });
    expect(await settle(order)).toMatchObject({ status: 'settled' });
    await db.query(`INSERT INTO split_transfers (order_id, vendor_id, linked_account_id, amount_paise, gateway_order_id, provider_transfer_id, status)
                    VALUES ($1, $2, $3, $4, 'order_twice', 'trf_PaidTwice0001', 'processed')`, [order.orderId, order.vendorId, account, NET]);
    const built = await rebuildLedger(db);
    expect(built.unplaced).toEqual([`split trf_PaidTwice0001 would pay order:${order.orderId}, which another instrument already pays`]);
    const cli = startAppProcess('src/cli/ledger.ts', { DATABASE_URL: stack.config.DATABASE_URL!, LOG_LEVEL: 'warn' }, []);
    expect(await cli.exited).toBe(1);
    expect(cli.output()).toContain('not placed: split trf_PaidTwice0001');
    await db.query('DELETE FROM split_transfers WHERE order_id = $1', [order.orderId]);
  });

  test('when two rebuilds run at once, then the second waits for the first and builds the same ledger from a snapshot taken after it', async () => {
    const [first, second] = await Promise.all([rebuildLedger(db), rebuildLedger(db)]);
    expect(second).toMatchObject({ obligations: first.obligations, discharges: first.discharges, items: first.items });
  });

  test('when the upgrade\'s rebuild is not recorded as done (it failed or was stopped after the migrations committed), then the next migrate or start rebuilds and records it; once recorded, it does not rebuild again', async () => {
    await db.query('DELETE FROM ledger_rebuilds');
    const rebuilt = await rebuildLedgerUntilDone(db);
    expect(rebuilt).toMatchObject({ unplaced: [] });
    expect((await db.query('SELECT reason FROM ledger_rebuilds')).rows).toEqual([{ reason: 'rails write the ledger (migration 127)' }]);
    expect(await rebuildLedgerUntilDone(db)).toBeNull();
  });

  test('when a second instrument would pay an obligation an instrument already pays, or a discharge does not sum to what it pays, then the database refuses it', async () => {
    await rebuildLedger(db);
    const { rows } = await db.query<{ id: string; vendor_id: string; amount_paise: string }>(
      `SELECT o.id, o.vendor_id, o.amount_paise FROM ledger_obligations o JOIN ledger_discharge_items i ON i.obligation_id = o.id AND i.active
        JOIN ledger_discharges d ON d.id = i.discharge_id WHERE d.kind = 'order_transfer' AND d.state = 'paid' LIMIT 1`);
    const paid = rows[0]!;
    const secondInstrument = inTransaction(db, async (tx) => {
      const d = await tx.query<{ id: string }>(`INSERT INTO ledger_discharges (vendor_id, kind, instrument, amount_paise, state) VALUES ($1, 'batch_transfer', 'batch_test', $2, 'in_flight') RETURNING id`, [paid.vendor_id, paid.amount_paise]);
      await tx.query('INSERT INTO ledger_discharge_items (discharge_id, obligation_id, amount_paise) VALUES ($1, $2, $3)', [d.rows[0]!.id, paid.id, paid.amount_paise]);
    });
    await expect(secondInstrument).rejects.toThrow(/ledger_one_active_discharge/);
    // An item changed on its own, in a later statement: its discharge is checked again at commit.
    await expect(db.query('UPDATE ledger_discharge_items SET active = false WHERE obligation_id = $1 AND active', [paid.id])).rejects.toThrow(/its obligations sum to/);
    const { rows: open } = await db.query<{ id: string; vendor_id: string; amount_paise: string }>(
      `SELECT o.id, o.vendor_id, o.amount_paise FROM ledger_obligations o WHERE NOT EXISTS (SELECT 1 FROM ledger_discharge_items i WHERE i.obligation_id = o.id AND i.active) AND o.amount_paise > 0 LIMIT 1`);
    const short = inTransaction(db, async (tx) => {
      const d = await tx.query<{ id: string }>(`INSERT INTO ledger_discharges (vendor_id, kind, instrument, amount_paise, state) VALUES ($1, 'order_transfer', 'trf_short', $2, 'paid') RETURNING id`, [open[0]!.vendor_id, BigInt(open[0]!.amount_paise) + 1n]);
      await tx.query('INSERT INTO ledger_discharge_items (discharge_id, obligation_id, amount_paise) VALUES ($1, $2, $3)', [d.rows[0]!.id, open[0]!.id, open[0]!.amount_paise]);
    });
    await expect(short).rejects.toThrow(/its obligations sum to/);
    await expect(db.query('INSERT INTO ledger_discharge_items (discharge_id, obligation_id, amount_paise) SELECT id, $1, 1 FROM ledger_discharges LIMIT 1', [open[0]!.id]))
      .rejects.toThrow(/discharged as 1/);
  });
});
