/** Issue 36, step 2: the transfer rails write the ledger as they move, and the ledger's constraint
 * is the claim's: an order paid through money in has its obligation in the transaction that marks it
 * paid, its payout's transfer is a discharge from the claim on (paid once settled, named by the
 * transfer), with no rebuild; a payout whose net another instrument already pays sends nothing; and
 * recon says, every run, when the ledger as written drifts from what the rails' rows say.
 * Real worker, PostgreSQL, Temporal and sandbox. */
import { randomBytes } from 'node:crypto';
import { payoutWorkflowId, type PayoutWorkflowResult } from '../../src/contracts/payout';
import { inTransaction, type Db } from '../../src/db/pool';
import { istDateOf } from '../../src/domain/calendar';
import { rebuildLedger } from '../../src/ledger/backfill';
import { markPaid } from '../../src/moneyin/markPaid';
import { startPayoutWorkflow } from '../../src/payouts/temporalStarter';
import { call } from './offlineOrders';
import { eventually, payoutRow } from './payoutSeed';
import { startBatchPayoutStack, type PayoutStack } from './payoutStack';

describe('the transfer rails write the ledger', () => {
  let stack: PayoutStack;
  let db: Db;

  beforeAll(async () => {
    stack = await startBatchPayoutStack('ledger-rails');
    ({ db } = stack);
  });

  afterAll(async () => {
    await stack?.close();
  });

  /** A wallet order of a new platform_transfer pair whose vendor has a linked account, paid through
   * markPaid as money in pays it (a direct transfer of ₹81 is owed). */
  async function paidOrder(): Promise<{ orderId: string; vendorId: string; account: string }> {
    const tag = randomBytes(5).toString('hex');
    const account = await stack.sandbox.control.createLinkedAccount();
    await db.query('INSERT INTO employers (id, name) VALUES ($1, $2)', [`emp_${tag}`, `Employer ${tag}`]);
    await db.query('INSERT INTO vendors (id, name, linked_account_id) VALUES ($1, $2, $3)', [`ven_${tag}`, `Vendor ${tag}`, account]);
    await db.query(`INSERT INTO employer_vendor (employer_id, vendor_id, settlement_mode, commission_bps) VALUES ($1, $2, 'platform_transfer', 1900)`, [`emp_${tag}`, `ven_${tag}`]);
    await db.query(
      `INSERT INTO orders (id, client_reference, employer_id, vendor_id, employee_id, total_paise, subsidy_paise, customer_share_paise,
         commission_bps, commission_paise, vendor_net_paise, payment_method, status)
       VALUES ($1, $2, $3, $4, 'emp-1', 10000, 7000, 3000, 1900, 1900, 8100, 'wallet', 'pending')`,
      [`ord_${tag}`, `ref_${tag}`, `emp_${tag}`, `ven_${tag}`]);
    await inTransaction(db, (tx) => markPaid(tx, `ord_${tag}`, { via: 'wallet' }));
    return { orderId: `ord_${tag}`, vendorId: `ven_${tag}`, account };
  }

  const payOut = async (orderId: string): Promise<PayoutWorkflowResult> => {
    await startPayoutWorkflow(stack.temporal.client, stack.config.TEMPORAL_TASK_QUEUE, orderId);
    return stack.temporal.client.workflow.getHandle(payoutWorkflowId(orderId)).result() as Promise<PayoutWorkflowResult>;
  };

  const ledgerOf = async (orderId: string) => (await db.query(
    `SELECT o.source, o.amount_paise::int AS owed, o.rail, d.kind, d.instrument, d.provider_ref, d.state, d.payout_id::text, d.amount_paise::int AS paid
       FROM ledger_obligations o
       LEFT JOIN ledger_discharge_items i ON i.obligation_id = o.id AND i.active LEFT JOIN ledger_discharges d ON d.id = i.discharge_id
      WHERE o.order_id = $1 ORDER BY o.id`, [orderId])).rows;

  test('when an order is paid through money in and its payout settles, then its obligation and its transfer are in the ledger as the rails wrote them, without a rebuild', async () => {
    const order = await paidOrder();
    // Written with the order marked paid: owed ₹81 by transfer, nothing paying it yet.
    expect(await ledgerOf(order.orderId)).toEqual([
      expect.objectContaining({ source: `order:${order.orderId}`, owed: 8100, rail: 'transfer', kind: null }),
    ]);
    expect(await payOut(order.orderId)).toMatchObject({ kind: 'finished', status: 'settled' });
    const payout = (await payoutRow(db, order.orderId))!;
    expect(await ledgerOf(order.orderId)).toEqual([expect.objectContaining({
      source: `order:${order.orderId}`, owed: 8100, kind: 'order_transfer', instrument: payout.provider_transfer_id,
      provider_ref: payout.provider_transfer_id, state: 'paid', payout_id: payout.id, paid: 8100,
    })]);
    const { rows: [balance] } = await db.query('SELECT owed_paise::int, paid_paise::int, open_paise::int FROM ledger_vendor_balances WHERE vendor_id = $1', [order.vendorId]);
    expect(balance).toEqual({ owed_paise: 8100, paid_paise: 8100, open_paise: 0 });
  });

  test('when another instrument already pays an order\'s net, then its payout sends no transfer and says which instrument pays it', async () => {
    const order = await paidOrder();
    // Ops' NEFT recorded against the order's net before its payout ran (planted: no rail of ours
    // pays one order twice on purpose).
    await inTransaction(db, async (tx) => {
      await tx.query(
        `INSERT INTO ledger_obligations (source, vendor_id, order_id, cause, amount_paise, rail)
         VALUES ($1, $2, $3, 'order_net', 8100, 'transfer') ON CONFLICT (source) DO NOTHING`, [`order:${order.orderId}`, order.vendorId, order.orderId]);
      await tx.query(
        `WITH d AS (INSERT INTO ledger_discharges (vendor_id, kind, instrument, provider_ref, amount_paise, state)
                    VALUES ($1, 'external_transfer', 'neft-planted-1', 'NEFT0001', 8100, 'paid') RETURNING id)
         INSERT INTO ledger_discharge_items (discharge_id, obligation_id, amount_paise)
         SELECT d.id, o.id, 8100 FROM d, ledger_obligations o WHERE o.source = $2`, [order.vendorId, `order:${order.orderId}`]);
    });
    const result = await payOut(order.orderId);
    expect(result).toMatchObject({ kind: 'no_transfer' });
    expect((result as { reason: string }).reason).toContain('neft-planted-1');
    expect(await stack.sandbox.control.transfers({ recipient: order.account })).toHaveLength(0);
    expect(await ledgerOf(order.orderId)).toEqual([expect.objectContaining({ kind: 'external_transfer', instrument: 'neft-planted-1', state: 'paid' })]);
  });

  test('when the ledger as written drifts from what the rails\' rows say, then the next recon run raises a critical ledger-drift exception naming the vendor and the amount, and a run after the ledger ties again resolves it', async () => {
    const order = await paidOrder();
    expect(await payOut(order.orderId)).toMatchObject({ kind: 'finished', status: 'settled' });
    const today = istDateOf(new Date());
    const recon = async () => {
      const started = await call(stack, stack.keys.finance, 'POST', '/finance/recon/runs', { from: today, to: today, asOf: today });
      expect(started.status).toBe(202);
      const { workflowId } = started.body as { workflowId: string };
      await eventually(async () => (await call(stack, stack.keys.finance, 'GET', `/finance/recon/runs/${workflowId}`)).body?.live?.status, (s) => s !== undefined && s !== 'RUNNING', 60_000);
    };
    const drift = async () => (await db.query(
      `SELECT status, severity, class, expected_paise::int, actual_paise::int, details->>'vendorId' AS vendor FROM recon_exceptions WHERE key = $1`, [`ledger-drift|${order.vendorId}`])).rows[0];
    await recon();
    expect(await drift()).toBeUndefined();
    // A rail that forgot its write: the transfer's discharge no longer pays the order's net.
    await inTransaction(db, async (tx) => {
      await tx.query(
        `UPDATE ledger_discharge_items i SET active = false FROM ledger_discharges d
          WHERE d.id = i.discharge_id AND d.kind = 'order_transfer' AND d.vendor_id = $1`, [order.vendorId]);
      await tx.query(`UPDATE ledger_discharges SET state = 'void' WHERE kind = 'order_transfer' AND vendor_id = $1`, [order.vendorId]);
    });
    await recon();
    expect(await drift()).toEqual({ status: 'open', severity: 'critical', class: 'mismatched', expected_paise: 0, actual_paise: 8100, vendor: order.vendorId });
    const transferId = (await payoutRow(db, order.orderId))!.provider_transfer_id!;
    expect((await rebuildLedger(db)).disagreements).toEqual(expect.arrayContaining([expect.stringContaining(`discharge order_transfer ${transferId} follows from the rails' rows, but no rail wrote it`)]));
    await recon();
    expect(await drift()).toMatchObject({ status: 'resolved' });
  });
});
