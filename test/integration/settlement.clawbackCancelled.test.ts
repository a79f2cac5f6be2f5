/** Issue 36 item 4 (c): a clawback (the vendor's share of a refund made outside the app after its
 * payout's transfer left, a negative offline-ledger line) netted into a vendor's settlement line,
 * and ops then cancel that payout (its transfer was reversed from the dashboard: the vendor kept
 * nothing of the order). The vendor must not be charged back money it never received, and a line
 * stays paid once, for what its bank debit says:
 * - while the clawback is frozen in an open settlement line, the cancel is refused naming the line
 *   (the bank may be paying it), and nothing changes;
 * - once the bank paid that line (history, unchanged), the cancel returns the clawback to the vendor
 *   as a new open line, which the next run pays;
 * - once the line failed, the cancel takes the clawback back: it never reaches a line again.
 * Real API (signed webhooks from the sandbox), Temporal worker, PostgreSQL and the sandbox. */
import { randomUUID } from 'node:crypto';
import { istDateOf } from '../../src/domain/calendar';
import type { Db } from '../../src/db/pool';
import { http, seedPair, uniqueRef, type MoneyInHarness } from './moneyinHarness';
import { expectLedgerTies } from './ledgerTie';
import { eventually, payoutRow } from './payoutSeed';
import { call, cashOrder } from './offlineOrders';
import { opsApi, PAIR_ORDER, PAIR_ORDER_NET_PAISE, startPayoutStackWithPair, type PayoutStack } from './payoutStack';

const EMPLOYER = 'emp_clawback_cancel';
/** The customer's whole share refunded: the vendor owes back its whole net. */
const CLAWBACK = PAIR_ORDER_NET_PAISE;
/** A cash order of ₹1,000 with ₹800 subsidy at 19% commission: the vendor is owed ₹610 offline. */
const CASH = { totalPaise: 100_000, subsidyPaise: 80_000 };
const CASH_OWED = 61_000;

describe('a clawback netted into a settlement line, then its payout cancelled by ops', () => {
  let stack: PayoutStack;
  let db: Db;
  let h: MoneyInHarness;
  const today = istDateOf(new Date());
  let utrs = 0;

  beforeAll(async () => {
    ({ stack, h } = await startPayoutStackWithPair({
      name: 'clawback-cancel', employerId: EMPLOYER, vendorId: 'ven_clawback_paid',
      env: { PAYOUT_RETRY_BACKOFF_MS: '300', PAYOUT_RETRY_BACKOFF_MAX_MS: '600', PAYOUT_SETTLEMENT_POLL_MS: '1000', PAYOUT_HUMAN_RECHECK_MS: '60000', BANK_HOLIDAYS: '' },
    }));
    db = stack.db;
  });

  afterEach(async () => {
    await expectLedgerTies(db);
  });

  afterAll(async () => {
    await stack?.close();
  });

  const finance = (method: string, path: string, body?: unknown) => call(stack, stack.keys.finance, method, path, body);
  const ops = () => opsApi(stack);
  const control = () => stack.sandbox.control;
  const nextUtr = () => `HDFCN20261201${String(++utrs).padStart(5, '0')}`;

  /** A vendor with a linked account and bank details, owed ₹610 offline for a cash order, whose ₹81
   * online order was paid by a direct transfer; the customer was then refunded in full from the
   * dashboard, so the vendor owes its ₹81 back (the clawback line). */
  async function vendorWithClawback(vendorId: string): Promise<{ orderId: string; transferId: string; clawbackId: number }> {
    if (vendorId !== 'ven_clawback_paid') await seedPair(h, { employerId: EMPLOYER, vendorId, commissionBps: 1_900 });
    const bank = await call(stack, stack.keys.admin, 'PUT', `/v1/admin/vendors/${vendorId}/bank-details`, { accountNumber: `${50_100_000_000 + Math.floor(Math.random() * 1_000_000_000)}`, ifsc: 'HDFC0001234', beneficiaryName: 'Clawback Kitchen' });
    expect(bank.status).toBeLessThan(300);
    await cashOrder(stack, EMPLOYER, vendorId, CASH.totalPaise, CASH.subsidyPaise);

    const placed = await http(h, 'POST', '/v1/orders', { clientReference: uniqueRef('clawback'), employerId: EMPLOYER, vendorId, employeeId: 'e-clawback', ...PAIR_ORDER, paymentMethod: 'online' });
    expect(placed.status).toBe(201);
    const payment = await control().payOrder(placed.body.order.gatewayOrderId);
    const orderId = placed.body.order.orderId as string;
    const settled = await eventually(() => payoutRow(db, orderId), (p) => p?.status === 'settled', 20_000);
    expect(settled?.status).toBe('settled');

    const refund = await h.gateway.createRefund({ paymentId: payment.id, amountPaise: PAIR_ORDER.customerSharePaise, receipt: `dashboard-${randomUUID().slice(0, 12)}` });
    if (refund.type !== 'accepted') throw new Error(`the sandbox refused the refund: ${JSON.stringify(refund)}`);
    await control().drainWebhooks();
    const clawback = await eventually(() => db.query<{ id: string; amount_paise: string }>(`SELECT id, amount_paise FROM offline_ledger WHERE clawback_order_id = $1`, [orderId]), (r) => r.rows.length === 1);
    expect(clawback.rows.map((r) => Number(r.amount_paise))).toEqual([-CLAWBACK]);
    return { orderId, transferId: settled!.provider_transfer_id!, clawbackId: Number(clawback.rows[0]!.id) };
  }

  const runs = new Map<string, string>();
  async function runUntilBatch(vendorId: string): Promise<{ batchId: string; lines: Array<{ reference: string; amountPaise: number; members: number; status: string }> }> {
    // The same period and vendor is the same run id: a run still ending (its last line just decided)
    // would be joined rather than started again, so wait for it to end first.
    const previous = runs.get(vendorId);
    if (previous) await eventually(() => finance('GET', `/finance/settlement/runs/${previous}`), (r) => r.status === 200 && r.body.live?.status !== 'RUNNING', 20_000);
    const started = await finance('POST', '/finance/settlement/runs', { from: today, to: today, vendorIds: [vendorId] });
    runs.set(vendorId, started.body.workflowId as string);
    expect(started.status).toBe(202);
    const run = await eventually(() => finance('GET', `/finance/settlement/runs/${started.body.workflowId}`), (r) => r.status === 200 && !!r.body.live?.progress?.batchId, 20_000);
    const batchId = run.body.live.progress.batchId as string;
    return { batchId, lines: (await finance('GET', `/finance/settlement/batches/${batchId}`)).body.lines };
  }

  /** The transfer taken back in full from the dashboard: the payout is parked for ops, the vendor keeps nothing of the order. */
  async function reverseInFull(orderId: string, transferId: string): Promise<void> {
    await control().reverseTransferFromDashboard(transferId);
    await control().drainWebhooks();
    const parked = await eventually(() => payoutRow(db, orderId), (p) => p?.status === 'parked', 20_000);
    expect(parked).toMatchObject({ status: 'parked', last_code: 'TRANSFER_REVERSED' });
  }

  const openLedger = async (vendorId: string) => (await db.query<{ route: string; amount_paise: string; batch_line_id: string | null }>(
    'SELECT route, amount_paise, batch_line_id FROM offline_ledger_open WHERE vendor_id = $1 ORDER BY id', [vendorId])).rows.map((r) => [r.route, Number(r.amount_paise), r.batch_line_id === null ? 'unbatched' : 'frozen']);
  const snapshot = async (orderId: string) => ({
    payout: (await payoutRow(db, orderId))?.status,
    ledger: (await db.query('SELECT * FROM offline_ledger ORDER BY id')).rows,
    lines: (await db.query('SELECT id, status, amount_paise FROM settlement_lines ORDER BY id')).rows,
    members: (await db.query('SELECT line_id, ledger_id, active FROM settlement_line_members ORDER BY line_id, ledger_id')).rows,
    decisions: (await db.query('SELECT count(*)::int AS n FROM review_actions')).rows[0].n,
  });

  test('when ops cancel the payout while its clawback is frozen in an open settlement line, then the cancel is refused naming the line; once the bank paid that line, the cancel returns the clawback as a new line the next run pays, and the paid line is unchanged', async () => {
    const vendorId = 'ven_clawback_paid';
    const { orderId, transferId } = await vendorWithClawback(vendorId);
    const { batchId, lines: [line, ...more] } = await runUntilBatch(vendorId);
    expect(more).toEqual([]);
    // The clawback is netted into the vendor's line: ₹610 − ₹81.
    expect(line).toMatchObject({ amountPaise: CASH_OWED - CLAWBACK, members: 2, status: 'open' });
    expect((await finance('GET', `/finance/settlement/batches/${batchId}/bank-file`)).status).toBe(200);

    await reverseInFull(orderId, transferId);
    const before = await snapshot(orderId);
    const refused = await ops()('POST', `/ops/payouts/${orderId}/cancel`, { reason: 'the vendor was never paid for this order' });
    expect([refused.status, refused.body.error?.code]).toEqual([409, 'clawback_in_open_settlement_line']);
    expect(refused.body.error.details).toMatchObject({ orderId, lines: [expect.objectContaining({ reference: line!.reference, batchId, clawbackPaise: CLAWBACK })] });
    expect(refused.body.error.message).toContain(line!.reference);
    expect(await snapshot(orderId)).toEqual(before);

    // The bank pays the line as its file said: the line is paid once, for that amount.
    const paid = await finance('POST', `/finance/settlement/lines/${line!.reference}/paid`, { utr: nextUtr(), paidOn: today, amountPaise: CASH_OWED - CLAWBACK });
    expect(paid.status).toBe(200);

    const cancelled = await ops()('POST', `/ops/payouts/${orderId}/cancel`, { reason: 'the vendor was never paid for this order' });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.payout.status).toBe('cancelled');
    // The paid line is history: unchanged. The clawback comes back to the vendor as a new open line.
    expect((await finance('GET', `/finance/settlement/batches/${batchId}`)).body.lines).toEqual([expect.objectContaining({ reference: line!.reference, amountPaise: CASH_OWED - CLAWBACK, status: 'paid', members: 2 })]);
    expect(await openLedger(vendorId)).toEqual([['clawback_returned', CLAWBACK, 'unbatched']]);
    // Cancelling again changes nothing (no second return).
    expect((await ops()('POST', `/ops/payouts/${orderId}/cancel`, { reason: 'the vendor was never paid for this order' })).body.alreadyInEffect).toBe(true);
    expect(await openLedger(vendorId)).toEqual([['clawback_returned', CLAWBACK, 'unbatched']]);

    // The next run pays it: in all, the vendor is paid its ₹610 for the cash order, nothing clawed back.
    const next = await runUntilBatch(vendorId);
    expect(next.lines).toEqual([expect.objectContaining({ amountPaise: CLAWBACK, members: 1 })]);
    const paidInAll = (await db.query<{ sum: string }>(`SELECT sum(amount_paise) AS sum FROM settlement_lines WHERE vendor_id = $1 AND status IN ('open', 'paid')`, [vendorId])).rows[0]!.sum;
    expect(Number(paidInAll)).toBe(CASH_OWED);
  });

  test('when the settlement line holding the clawback failed at the bank and ops then cancel the payout, then the clawback is taken back and the next run pays the vendor its whole offline balance', async () => {
    const vendorId = 'ven_clawback_failed';
    const { orderId, transferId, clawbackId } = await vendorWithClawback(vendorId);
    const { lines: [line] } = await runUntilBatch(vendorId);
    expect(line).toMatchObject({ amountPaise: CASH_OWED - CLAWBACK, members: 2 });
    await reverseInFull(orderId, transferId);

    expect((await ops()('POST', `/ops/payouts/${orderId}/cancel`, { reason: 'the vendor was never paid for this order' })).status).toBe(409);
    expect((await finance('POST', `/finance/settlement/lines/${line!.reference}/failed`, { reason: 'account closed' })).status).toBe(200);
    // Back in the open ledger, both lines unbatched: a run now would still net the clawback off.
    expect(await openLedger(vendorId)).toEqual([['cash', CASH_OWED, 'unbatched'], ['refund_clawback', -CLAWBACK, 'unbatched']]);

    const cancelled = await ops()('POST', `/ops/payouts/${orderId}/cancel`, { reason: 'the vendor was never paid for this order' });
    expect(cancelled.status).toBe(200);
    expect(await openLedger(vendorId)).toEqual([['cash', CASH_OWED, 'unbatched']]);
    // Kept as history, with who took it back and why.
    expect((await db.query('SELECT amount_paise::int AS amount, taken_back_by, taken_back_reason FROM offline_ledger WHERE id = $1', [clawbackId])).rows)
      .toEqual([{ amount: -CLAWBACK, taken_back_by: 'key:test-ops (asha)', taken_back_reason: expect.stringContaining('the vendor was never paid for this order') }]);

    const next = await runUntilBatch(vendorId);
    expect(next.lines).toEqual([expect.objectContaining({ amountPaise: CASH_OWED, members: 1 })]);
  });
});
