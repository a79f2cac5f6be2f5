/** Reconciliation end to end: the Razorpay sandbox (over HTTP, official SDK, real adapter) captures
 * and settles, a real Temporal worker runs reconWorkflow, PostgreSQL holds both sides. Our side is
 * seeded in SQL with the columns of migrations 004/005. Each scenario uses its own month and a
 * reset sandbox, so windows never see each other's rows. */
import { randomUUID } from 'node:crypto';
import type { Config } from '../../src/config/config';
import { reconProgressQuery, reconWorkflowId, type ReconSummary, type ReconWindow } from '../../src/contracts/recon';
import { istDayBounds } from '../../src/domain/calendar';
import { inTransaction, type Db } from '../../src/db/pool';
import type { Gateway, RzpPayment, RzpReconRow } from '../../src/gateway/types';
import { oweOrders } from '../../src/ledger/orderObligations';
import { recordPayoutInLedger } from '../../src/ledger/payoutDischarges';
import { importBankStatement } from '../../src/recon/bankStatementImport';
import { resolveException } from '../../src/recon/exceptions';
import { reconWorkflow } from '../../src/workflows/recon';
import { isolatedPool } from '../support/db';
import { startTestSandbox, type TestSandbox } from '../support/sandbox';
import { startTestWorker, type TestTemporal } from '../support/temporal';

/** The sandbox cannot produce a partial settlement; this cuts a payment row's credit in the report,
 * as Razorpay's report does when only part of a payment is settled in a slot. */
const creditCuts = new Map<string, number>();
function reportTampering(inner: Gateway): Gateway {
  const cut = (r: RzpReconRow): RzpReconRow => (creditCuts.has(r.entity_id) ? { ...r, credit: r.credit - creditCuts.get(r.entity_id)! } : r);
  return {
    ...inner,
    settlementReconPages: async function* (day) {
      for await (const page of inner.settlementReconPages(day)) yield page.map(cut);
    },
    settlementReconRows: async (day) => (await inner.settlementReconRows(day)).map(cut),
  };
}

const istAt = (day: string, hhmm: string): number => istDayBounds(day).start.getTime() + (Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3))) * 60_000;

describe('reconciliation with the sandbox: settlements with seeded discrepancies', () => {
  let db: Db;
  let sb: TestSandbox;
  let temporal: TestTemporal;
  let config: Config;
  let account: string;

  beforeAll(async () => {
    ({ db } = await isolatedPool());
    sb = await startTestSandbox();
    config = { ...sb.config, BANK_HOLIDAYS: [] };
    temporal = await startTestWorker({ db, gateway: reportTampering(sb.gateway), config });
    await db.query(`INSERT INTO employers (id, name) VALUES ('emp-1', 'Acme') ON CONFLICT DO NOTHING`);
    await db.query(`INSERT INTO vendors (id, name, linked_account_id) VALUES ('ven-1', 'Dosa Point', 'acc_VendorDosa0001') ON CONFLICT DO NOTHING`);
  });
  afterAll(async () => {
    await temporal?.close();
    await sb?.sandbox.close();
    await db?.end();
  });
  beforeEach(async () => {
    await sb.sandbox.control.reset();
    creditCuts.clear();
    account = await sb.sandbox.control.createLinkedAccount({ id: 'acc_VendorDosa0001' });
  });

  interface Paid { orderId: string; gatewayOrderId: string; payment: RzpPayment }

  /** Checkout at the sandbox at an IST instant; nothing is written on our side yet. */
  async function payAt(day: string, hhmm: string, amounts: number[]): Promise<Paid[]> {
    await sb.sandbox.control.setClock(istAt(day, hhmm));
    const paid: Paid[] = [];
    for (let i = 0; i < amounts.length; i += 50) {
      paid.push(...(await Promise.all(amounts.slice(i, i + 50).map(async (amountPaise) => {
        const orderId = `ord-${randomUUID()}`;
        const order = await sb.gateway.createOrder({ amountPaise, receipt: orderId, notes: { order_id: orderId } });
        return { orderId, gatewayOrderId: order.id, payment: await sb.sandbox.control.payOrder(order.id) };
      }))));
    }
    return paid;
  }

  /** Money in's rows for captured payments (orders + payments), in two bulk statements. */
  async function recordInApp(paid: Paid[], override: (p: Paid) => { amountPaise?: number; feePaise?: number } = () => ({})) {
    const rows = paid.map((p) => {
      const o = override(p);
      const amount = o.amountPaise ?? p.payment.amount;
      const commission = Math.floor((amount * 1900 + 5000) / 10000);
      const capturedAt = new Date(p.payment.created_at * 1000).toISOString();
      return { id: p.orderId, client_reference: p.orderId, amount, commission, net: amount - commission, gateway_order_id: p.gatewayOrderId, paid_at: capturedAt,
        payment_id: p.payment.id, fee: o.feePaise ?? p.payment.fee, tax: p.payment.tax, method: p.payment.method, raw: p.payment };
    });
    await db.query(
      `INSERT INTO orders (id, client_reference, employer_id, vendor_id, employee_id, total_paise, subsidy_paise, customer_share_paise, commission_bps,
         commission_paise, vendor_net_paise, payment_method, status, gateway_order_id, paid_at)
       SELECT id, client_reference, 'emp-1', 'ven-1', 'e-1', amount, 0, amount, 1900, commission, net, 'online', 'paid', gateway_order_id, paid_at
       FROM jsonb_to_recordset($1::jsonb) AS x(id text, client_reference text, amount bigint, commission bigint, net bigint, gateway_order_id text, paid_at timestamptz)`,
      [JSON.stringify(rows)],
    );
    await db.query(
      `INSERT INTO payments (id, gateway_order_id, order_id, amount_paise, status, method, fee_paise, tax_paise, captured_at, raw)
       SELECT payment_id, gateway_order_id, id, amount, 'captured', method, fee, tax, paid_at, raw
       FROM jsonb_to_recordset($1::jsonb) AS x(payment_id text, gateway_order_id text, id text, amount bigint, method text, fee bigint, tax bigint, paid_at timestamptz, raw jsonb)`,
      [JSON.stringify(rows)],
    );
  }

  /** A direct transfer at the sandbox; `record`: our payout row and the ledger's in-flight discharge
   * of the order's net, as the payout rail writes them, or (`row-only`) a rail that forgot the ledger. */
  async function directTransfer(orderId: string, amountPaise: number, record: boolean | 'row-only'): Promise<string> {
    const payoutId = randomUUID();
    const outcome = await sb.gateway.createDirectTransfer({ account, amountPaise, idempotencyKey: payoutId.slice(0, 36), notes: { transaction_id: payoutId, order_id: orderId } });
    if (outcome.type !== 'accepted') throw new Error(`transfer not accepted: ${JSON.stringify(outcome)}`);
    if (record) {
      await db.query(
        `INSERT INTO payouts (id, order_id, vendor_id, linked_account_id, amount_paise, status, attempts, idempotency_key, provider_transfer_id)
         VALUES ($1, $2, 'ven-1', $3, $4, 'accepted', 1, $5, $6)`,
        [payoutId, orderId, account, amountPaise, payoutId.slice(0, 36), outcome.entity.id],
      );
    }
    if (record === true) {
      // The order's line and the ledger, by the rails' own writes (the net paid is the transfer's).
      await db.query(`INSERT INTO offline_ledger (order_id, employer_id, vendor_id, amount_paise, route) VALUES ($1, 'emp-1', 'ven-1', $2, 'direct_transfer')`, [orderId, amountPaise]);
      await inTransaction(db, async (tx) => {
        await oweOrders(tx, [orderId]);
        await recordPayoutInLedger(tx, payoutId);
      });
    }
    return outcome.entity.id;
  }

  async function refund(p: Paid, amountPaise: number, record: boolean): Promise<string> {
    const refundId = `rf-${randomUUID()}`;
    const outcome = await sb.gateway.createRefund({ paymentId: p.payment.id, amountPaise, receipt: refundId.slice(0, 40) });
    if (outcome.type !== 'accepted') throw new Error(`refund not accepted: ${JSON.stringify(outcome)}`);
    if (record) {
      await db.query(`INSERT INTO refunds (id, payment_id, order_id, amount_paise, reason, gateway_refund_id, status) VALUES ($1, $2, $3, $4, 'customer_cancelled', $5, 'processed')`,
        [refundId, p.payment.id, p.orderId, amountPaise, outcome.entity.id]);
    }
    return outcome.entity.id;
  }

  async function settle(date: string, opts: { importBank?: boolean; extraBankLines?: string[] } = {}) {
    const settlements = await sb.sandbox.control.runSettlements({ date, holidays: [] });
    if (opts.importBank !== false) {
      const csv = (await sb.sandbox.control.bankStatementCsv({ from: date, to: date })) + (opts.extraBankLines ?? []).map((l) => `${l}\n`).join('');
      const imported = await importBankStatement(db, { text: csv, fileName: `stmt-${date}.csv`, actor: 'test' });
      if (!imported.ok) throw new Error(JSON.stringify(imported.problems));
    }
    return settlements;
  }

  const runRecon = (window: ReconWindow): Promise<ReconSummary> =>
    temporal.client.workflow.execute(reconWorkflow, { workflowId: `${reconWorkflowId(window)}-${temporal.taskQueue}`, taskQueue: temporal.taskQueue, args: [window] });

  async function exceptionsBetween(from: string, to: string) {
    const { rows } = await db.query(
      `SELECT id, reason, class, severity, status, entity_id, settlement_id, bank_line_id, to_char(day, 'YYYY-MM-DD') AS day, details, updated_at
       FROM recon_exceptions WHERE day BETWEEN $1 AND $2 ORDER BY id`, [from, to]);
    return rows;
  }

  test('when a day of 1,000 orders settles cleanly, then nothing is flagged; a rerun changes nothing', async () => {
    // Tue 2026-09-01 captures are due Thu 09-03 (T+2 working days).
    const paid = await payAt('2026-09-01', '11:00', Array.from({ length: 1000 }, (_, i) => 10_000 + i * 7));
    await recordInApp(paid);
    await refund(paid[0]!, 2_500, true);
    await directTransfer(paid[1]!.orderId, 8_100, true);
    const [settlement] = await settle('2026-09-03');
    expect(settlement).toBeDefined();

    const window = { from: '2026-09-01', to: '2026-09-03', asOf: '2026-09-04' };
    const first = await runRecon(window);
    expect(await exceptionsBetween('2026-08-01', '2026-09-30')).toEqual([]);
    expect(first).toMatchObject({ phase: 'completed', rowsFetched: 1002, settlementsFetched: 1, exceptions: 0, matched: 1003, daysPulled: 3 });

    const rowsBefore = (await db.query(`SELECT count(*)::int AS n, max(last_seen_at) AS seen FROM recon_rows`)).rows[0];
    const second = await runRecon(window);
    expect(second).toMatchObject({ rowsFetched: 1002, settlementsFetched: 0, exceptions: 0, matched: 1003, opened: 0, changed: 0, cleared: 0 });
    expect((await db.query(`SELECT count(*)::int AS n FROM recon_rows`)).rows[0].n).toBe(rowsBefore.n);
    expect(await exceptionsBetween('2026-08-01', '2026-09-30')).toEqual([]);
    const runs = await db.query(`SELECT status, rows_fetched FROM recon_runs WHERE workflow_id = $1 ORDER BY started_at`, [`${reconWorkflowId(window)}-${temporal.taskQueue}`]);
    expect(runs.rows).toEqual([{ status: 'completed', rows_fetched: 1002 }, { status: 'completed', rows_fetched: 1002 }]);
  });

  test('when our payout row says its transfer is in flight but the ledger holds no discharge of it (a rail that forgot its write), then its settled transfer is transfer-not-in-app: recon judges a transfer by the ledger', async () => {
    // Tue 09-15 captures settle Thu 09-17.
    const [order] = await payAt('2026-09-15', '11:00', [10_000]);
    await recordInApp([order!]);
    const forgotten = await directTransfer(order!.orderId, 8_100, 'row-only');
    await settle('2026-09-17');

    const window = { from: '2026-09-15', to: '2026-09-17', asOf: '2026-09-18' };
    await runRecon(window);
    expect(await exceptionsBetween('2026-09-14', '2026-09-20')).toMatchObject([
      { reason: 'transfer-not-in-app', class: 'unmatched', severity: 'critical', entity_id: forgotten, details: { payout: expect.any(String), ourStatus: 'accepted' } },
    ]);
  });

  test('when each discrepancy is seeded, then each reason code appears exactly once for it; a rerun adds nothing and a resolved exception stays resolved', async () => {
    // Tue 10-06 captures settle Thu 10-08 (S); Wed 10-07 captures settle Fri 10-09 (S2). Sat 10-10 is the 2nd Saturday.
    const [clean, amountOff, feeOff, held, partial] = await payAt('2026-10-06', '10:00', [50_000, 40_000, 30_000, 20_000, 60_000]);
    await recordInApp([clean!, amountOff!, feeOff!, held!, partial!], (p) =>
      p === amountOff ? { amountPaise: p.payment.amount + 500 } : p === feeOff ? { feePaise: p.payment.fee! - 100 } : {});
    const orphan = await sb.sandbox.control.capturedPaymentWithoutOrder(15_000);
    await sb.sandbox.control.putOnHold(held!.payment.id);
    const unknownRefund = await refund(clean!, 1_000, false);
    const unknownTransfer = await directTransfer(clean!.orderId, 5_000, false);
    await sb.sandbox.control.injectAdjustment({ amountPaise: 1_012, description: 'chargeback reversal', date: '2026-10-08' });
    creditCuts.set(partial!.payment.id, 20_000);
    // Our books say this capture happened; Razorpay never settles it.
    await db.query(`INSERT INTO payments (id, gateway_order_id, order_id, amount_paise, status, fee_paise, tax_paise, captured_at, raw)
                    VALUES ('pay_NeverSettled01', 'order_NeverSettled01', NULL, 12000, 'captured', 240, 37, $1, '{}')`, [new Date(istAt('2026-10-06', '12:00'))]);
    const [s] = await settle('2026-10-08', { extraBankLines: ['AXISCNSTRAYCREDIT,250.00,2026-10-08,NEFT CR-UNKNOWN'] });

    const late = await payAt('2026-10-07', '09:00', [25_000]);
    await recordInApp(late);
    const [s2] = await settle('2026-10-09', { importBank: false });

    const window = { from: '2026-10-06', to: '2026-10-09', asOf: '2026-10-14' };
    await runRecon(window);
    const found = await exceptionsBetween(window.from, window.to);
    const by = (reason: string) => found.filter((e) => e.reason === reason);
    expect(found.map((e) => e.reason).sort()).toEqual([
      'adjustment', 'amount-mismatch', 'captured-not-settled', 'fee-mismatch', 'on-hold', 'partially-settled', 'refund-not-in-app',
      'settled-not-in-app', 'settlement-sum-mismatch', 'settlement-without-bank-credit', 'transfer-not-in-app', 'unmatched-bank-credit',
    ]);
    expect(by('amount-mismatch')[0]).toMatchObject({ entity_id: amountOff!.payment.id, class: 'mismatched' });
    expect(by('fee-mismatch')[0]).toMatchObject({ entity_id: feeOff!.payment.id, class: 'mismatched' });
    expect(by('settled-not-in-app')[0]).toMatchObject({ entity_id: orphan.id, class: 'unmatched' });
    expect(by('refund-not-in-app')[0]).toMatchObject({ entity_id: unknownRefund });
    expect(by('transfer-not-in-app')[0]).toMatchObject({ entity_id: unknownTransfer, severity: 'critical' });
    expect(by('on-hold')[0]).toMatchObject({ entity_id: held!.payment.id });
    expect(by('partially-settled')[0]).toMatchObject({ entity_id: partial!.payment.id });
    expect(by('settlement-sum-mismatch')[0]).toMatchObject({ settlement_id: s!.id });
    expect(by('captured-not-settled')[0]).toMatchObject({ entity_id: 'pay_NeverSettled01', class: 'unmatched' });
    expect(by('settlement-without-bank-credit')[0]).toMatchObject({ settlement_id: s2!.id, class: 'unmatched' });
    expect(by('unmatched-bank-credit')[0]!.details).toEqual({ utr: 'AXISCNSTRAYCREDIT' });
    expect(by('adjustment')[0]).toMatchObject({ class: 'unmatched' });

    const adjustment = by('adjustment')[0]!;
    expect(await resolveException(db, adjustment.id, 'finance:test', 'booked as chargeback reversal')).toMatchObject({ type: 'resolved' });
    const before = await exceptionsBetween(window.from, window.to);
    const rerun = await runRecon(window);
    expect(rerun).toMatchObject({ exceptions: 12, opened: 0, changed: 0, cleared: 0 });
    const after = await exceptionsBetween(window.from, window.to);
    expect(after).toEqual(before);
    expect(after.find((e) => e.id === adjustment.id)).toMatchObject({ status: 'resolved' });
  });

  test('when the settlement is due on a Monday after a 2nd Saturday and a Sunday, then it is expected on Saturday, an open exception on Tuesday even if the expected one was resolved, and cleared once it settles', async () => {
    // Thu 2026-11-12 → T+1 Fri 13 → Sat 14 (2nd Saturday) and Sun 15 skipped → due Mon 16.
    const [p] = await payAt('2026-11-12', '15:00', [30_000]);
    await recordInApp([p!]);

    await runRecon({ from: '2026-11-11', to: '2026-11-13', asOf: '2026-11-14' });
    const saturday = await exceptionsBetween('2026-11-01', '2026-11-30');
    expect(saturday).toMatchObject([{ reason: 'captured-not-settled', class: 'expected', severity: 'low', entity_id: p!.payment.id, details: { dueDay: '2026-11-16' } }]);
    // Finance resolves the expected one ("will settle"); that must not silence it once overdue.
    expect(await resolveException(db, saturday[0]!.id, 'finance:test', 'due Monday, will settle')).toMatchObject({ type: 'resolved' });

    // Monday passes without a settlement (Razorpay missed the slot).
    await runRecon({ from: '2026-11-14', to: '2026-11-16', asOf: '2026-11-17' });
    const tuesday = await exceptionsBetween('2026-11-01', '2026-11-30');
    expect(tuesday).toMatchObject([{ id: saturday[0]!.id, reason: 'captured-not-settled', class: 'unmatched', severity: 'high', status: 'open' }]);

    await settle('2026-11-17');
    await runRecon({ from: '2026-11-15', to: '2026-11-17', asOf: '2026-11-18' });
    expect(await exceptionsBetween('2026-11-01', '2026-11-30')).toMatchObject([{ id: saturday[0]!.id, status: 'cleared' }]);
  });

  test('when captures straddle IST midnight, then each lands on its IST day and due date', async () => {
    // 23:50 IST Wed 12-02 and 00:10 IST Thu 12-03 are both 2026-12-02 in UTC.
    const [before] = await payAt('2026-12-02', '23:50', [11_000]);
    const [after] = await payAt('2026-12-03', '00:10', [12_000]);
    expect(new Date(after!.payment.created_at * 1000).toISOString().slice(0, 10)).toBe('2026-12-02');
    await recordInApp([before!, after!]);
    await settle('2026-12-04'); // due date of Wednesday's capture; Thursday's is due Sat 12-05 (1st Saturday, working)

    const window = { from: '2026-12-02', to: '2026-12-04', asOf: '2026-12-05' };
    const handle = await temporal.client.workflow.start(reconWorkflow, { workflowId: `${reconWorkflowId(window)}-${temporal.taskQueue}`, taskQueue: temporal.taskQueue, args: [window] });
    await handle.result();
    expect(await handle.query(reconProgressQuery)).toMatchObject({ phase: 'completed', rowsFetched: 1, daysPulled: 3 });

    const rows = await db.query(`SELECT entity_id, to_char(recon_day, 'YYYY-MM-DD') AS day FROM recon_rows WHERE entity_id = ANY($1)`, [[before!.payment.id, after!.payment.id]]);
    expect(rows.rows).toEqual([{ entity_id: before!.payment.id, day: '2026-12-04' }]);
    // Judged by UTC, the 00:10 capture would be due 12-04 and overdue on 12-05.
    expect(await exceptionsBetween('2026-12-01', '2026-12-31')).toMatchObject([
      { reason: 'captured-not-settled', class: 'expected', entity_id: after!.payment.id, day: '2026-12-03', details: { captureDay: '2026-12-03', dueDay: '2026-12-05' } },
    ]);
  });
});
