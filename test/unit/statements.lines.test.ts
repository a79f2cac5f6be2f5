/** The vendor statement's pure part: which rail each line is on (transfer, split, offline by batch
 * state, cash kept, employer direct, not owed, unknown), its words, the totals by rail (every order's
 * net is the sum of its rails) and the offline balance (carried forward when the open lines net to
 * zero or less). */
import { statementPeriodSchema, statementQuerySchema } from '../../src/statements/contract';
import { buildStatement, statementLineOf, totalRows, type StatementRow } from '../../src/statements/statementLines';

const AT = new Date('2026-09-02T06:30:00Z'); // noon IST
const order = (totalPaise = 10_000, subsidyPaise = 9_900, method = 'online', commissionPaise = 1_900) =>
  ({ paymentMethod: method, totalPaise, subsidyPaise, customerSharePaise: totalPaise - subsidyPaise, commissionPaise, vendorNetPaise: totalPaise - commissionPaise });

function row(overrides: Partial<StatementRow> = {}): StatementRow {
  return {
    kind: 'order', orderId: 'ord_1', at: AT, employerId: 'emp_1', order: order(), route: 'direct_transfer', refundId: null,
    owed: { rail: 'transfer', amountPaise: 8_100 }, discharge: null, cashKeptPaise: 0, payout: null, batchLine: null, gatewaySettlement: null, ...overrides,
  };
}
type Discharge = NonNullable<StatementRow['discharge']>;
const paidBy = (kind: Discharge['kind'], state: Discharge['state'] = 'paid', providerRef: string | null = null): Discharge => ({ kind, state, providerRef });
const transfer = (state: Discharge['state']) => paidBy('order_transfer', state, 'trf_AAAAAAAAAAAAAA');
const payout = (status: string, more: Partial<NonNullable<StatementRow['payout']>> = {}) => ({ status, externalReference: null, batchId: null, ...more });
const offlineOwed = (amountPaise: number) => ({ rail: 'settlement_run' as const, amountPaise });
const paidLine = { batchId: 'stb_AAAAAAAAAAAAAA', reference: 'STB0001V01', status: 'paid', utr: 'UTRBANK000123', paidOn: '2026-09-05' };
const openLine = { ...paidLine, reference: 'STB0002V01', status: 'open', utr: null, paidOn: null };
const byPaidLine = { discharge: paidBy('settlement_line', 'paid', 'UTRBANK000123'), batchLine: paidLine };
const byOpenLine = { discharge: paidBy('settlement_line', 'in_flight'), batchLine: openLine };

describe('vendor statement lines', () => {
  test('when the ledger says a direct transfer paid the order and recon has its settlement, then the line is a settled transfer with the transfer id and the UTR', () => {
    const line = statementLineOf(row({ payout: payout('settled'), discharge: transfer('paid'), gatewaySettlement: { settlementId: 'setl_AAAAAAAAAAAAAA', utr: 'UTRSETL0001' } }));
    expect(line).toMatchObject({
      kind: 'order', day: '2026-09-02', route: 'direct_transfer', vendorNetPaise: 8_100, cashKeptPaise: 0,
      paidBy: { rail: 'transfer', status: 'settled', amountPaise: 8_100, transferId: 'trf_AAAAAAAAAAAAAA', settlementId: 'setl_AAAAAAAAAAAAAA', utr: 'UTRSETL0001' },
      howPaid: 'transfer trf_AAAAAAAAAAAAAA settled; Razorpay settlement setl_AAAAAAAAAAAAAA, UTR UTRSETL0001',
    });
    expect(statementLineOf(row({ payout: payout('settled'), discharge: transfer('paid') })).howPaid).toBe('transfer trf_AAAAAAAAAAAAAA settled; not in a Razorpay settlement recon has seen yet');
    const external = row({ payout: payout('settled', { externalReference: 'NEFT-42' }), discharge: paidBy('external_transfer', 'paid', 'NEFT-42') });
    expect(statementLineOf(external).howPaid).toBe('paid outside the app (reference NEFT-42)');
  });

  test('when the transfer rail owes the net, then it is in flight while its discharge is, awaiting while none is (whatever the payout waits on); an ops adjustment is not owed', () => {
    for (const s of ['processing', 'accepted']) expect(statementLineOf(row({ payout: payout(s), discharge: transfer('in_flight') })).paidBy).toMatchObject({ rail: 'transfer', status: 'in_flight', payoutStatus: s });
    for (const s of ['pending', 'failed', 'parked', 'review']) expect(statementLineOf(row({ payout: payout(s) })).paidBy).toMatchObject({ rail: 'transfer', status: 'awaiting', transferId: null });
    expect(statementLineOf(row({ payout: payout('parked') })).howPaid).toBe('transfer not sent yet (payout parked)');
    const cancelled = row({ payout: payout('cancelled'), discharge: paidBy('adjustment', 'paid', null) });
    expect(statementLineOf(cancelled)).toMatchObject({ paidBy: { rail: 'not_owed', amountPaise: 8_100 }, howPaid: 'payout cancelled by ops: not owed' });
  });

  test('when a payout batch pays the order, then the line is its batch\'s transfer, named with the batch; waiting in the batch is awaiting', () => {
    const batchId = 'batch_0123456789abcdef0123456789';
    const owed = { rail: 'batch_transfer' as const, amountPaise: 8_100 };
    const settled = statementLineOf(row({ owed, payout: payout('settled', { batchId }), discharge: paidBy('batch_transfer', 'paid', 'trf_AAAAAAAAAAAAAA') }));
    expect(settled.paidBy).toMatchObject({ rail: 'transfer', status: 'settled', transferId: 'trf_AAAAAAAAAAAAAA', payoutBatchId: batchId });
    expect(settled.howPaid).toBe(`transfer trf_AAAAAAAAAAAAAA settled (batch ${batchId}: one transfer for the window's orders); not in a Razorpay settlement recon has seen yet`);
    const waiting = statementLineOf(row({ owed, payout: payout('batched', { batchId }) }));
    expect(waiting).toMatchObject({ paidBy: { rail: 'transfer', status: 'awaiting', payoutStatus: 'batched' }, howPaid: `transfer not sent yet (payout batched) (batch ${batchId}: one transfer for the window's orders)` });
    // An order's own payout carries no batch id.
    expect(statementLineOf(row({ payout: payout('settled'), discharge: transfer('paid') })).paidBy).not.toHaveProperty('payoutBatchId');
  });

  test('when the ledger owes the net on a settlement run, then it is owed offline: in an open batch line while that line may pay it, or not yet in one', () => {
    const offlinePayout = { payout: payout('offline'), owed: offlineOwed(8_100) };
    expect(statementLineOf(row(offlinePayout))).toMatchObject({ paidBy: { rail: 'offline', status: 'owed', amountPaise: 8_100, batchId: null }, howPaid: 'still owed ₹81.00 offline' });
    expect(statementLineOf(row({ ...offlinePayout, ...byOpenLine }))).toMatchObject({
      paidBy: { rail: 'offline', status: 'in_batch', batchId: 'stb_AAAAAAAAAAAAAA', reference: 'STB0002V01', utr: null },
      howPaid: 'owed ₹81.00, in open settlement batch stb_AAAAAAAAAAAAAA (line STB0002V01)',
    });
  });

  test('when a bank line the bank paid discharges it, then it is paid offline with the line reference and the bank UTR, whatever rail the order came from', () => {
    expect(statementLineOf(row({ route: 'manual_offline', owed: offlineOwed(9_000), ...byPaidLine }))).toMatchObject({
      paidBy: { rail: 'offline', status: 'paid', amountPaise: 9_000, reference: 'STB0001V01', utr: 'UTRBANK000123', paidOn: '2026-09-05' },
      howPaid: '₹90.00 paid by bank settlement STB0001V01 (UTR UTRBANK000123, 2026-09-05)',
    });
    // A failed split moved its net to a settlement run.
    expect(statementLineOf(row({ route: 'split', owed: offlineOwed(8_100), ...byPaidLine })).paidBy).toMatchObject({ rail: 'offline', status: 'paid' });
  });

  test('when a cash order is paid, then the vendor kept the customer share at the counter and the ledger line (subsidy less commission) may be owed back', () => {
    const cash = row({ order: order(12_000, 2_000, 'cash', 2_280), route: 'cash', owed: offlineOwed(-280), cashKeptPaise: 10_000 });
    const line = statementLineOf(cash);
    expect(line).toMatchObject({
      cashKeptPaise: 10_000, paidBy: { rail: 'offline', status: 'owes_back', amountPaise: -280 },
      howPaid: 'cash ₹100.00 kept at the counter; still owes back ₹2.80: nets off the next settlement',
    });
    expect(line.cashKeptPaise + line.paidBy.amountPaise).toBe(line.vendorNetPaise);
    expect(statementLineOf({ ...cash, ...byPaidLine }).howPaid).toBe('cash ₹100.00 kept at the counter; owes back ₹2.80, netted off bank settlement STB0001V01 (UTR UTRBANK000123, 2026-09-05)');
  });

  test('when an order went by a Route split, then its split\'s discharge says processed (paid) or not confirmed yet (in flight)', () => {
    const split = (state: Discharge['state']) => ({ route: 'split', owed: { rail: 'split' as const, amountPaise: 20_250 }, discharge: paidBy('split', state, 'trf_CCCCCCCCCCCCCC') });
    expect(statementLineOf(row(split('paid')))).toMatchObject({ paidBy: { rail: 'split', status: 'processed', transferId: 'trf_CCCCCCCCCCCCCC' }, howPaid: 'Route split trf_CCCCCCCCCCCCCC processed; not in a Razorpay settlement recon has seen yet' });
    expect(statementLineOf(row(split('in_flight'))).paidBy).toMatchObject({ rail: 'split', status: 'in_flight' });
  });

  test('when the employer pays the vendor itself (corporate_direct, or a payout rerouted to it), then the line is an obligation, not a payment of ours', () => {
    const direct = { owed: { rail: 'employer_direct' as const, amountPaise: 12_150 }, discharge: paidBy('employer_direct') };
    const line = statementLineOf(row({ route: 'corporate_direct', ...direct, order: order(15_000, 15_000, 'online', 2_850) }));
    expect(line).toMatchObject({ paidBy: { rail: 'employer_direct', amountPaise: 12_150 }, howPaid: 'the employer pays the vendor directly (corporate_direct): ₹121.50 obligation' });
    expect(statementLineOf(row({ payout: payout('rerouted'), owed: { rail: 'employer_direct', amountPaise: 8_100 } })).paidBy.rail).toBe('employer_direct');
  });

  test('when a refund made outside the app claws money back, then the line is a negative offline line with the refund, and no order money', () => {
    const clawback = row({ kind: 'refund_clawback', order: null, refundId: 'rfnd_AAAAAAAAAAAAAA', route: 'refund_clawback', owed: offlineOwed(-4_050) });
    expect(statementLineOf(clawback)).toMatchObject({
      kind: 'refund_clawback', totalPaise: null, vendorNetPaise: null, refundId: 'rfnd_AAAAAAAAAAAAAA', route: 'refund_clawback',
      paidBy: { rail: 'offline', status: 'owes_back', amountPaise: -4_050 },
      howPaid: 'refund rfnd_AAAAAAAAAAAAAA made outside the app, clawed back: still owes back ₹40.50: nets off the next settlement',
    });
  });

  test('when ops cancelled the payout of a clawback a paid settlement had netted, then the returned clawback is owed to the vendor again, in words that say so', () => {
    const returned = row({ kind: 'refund_clawback', order: null, refundId: 'rfnd_AAAAAAAAAAAAAA', route: 'clawback_returned', owed: offlineOwed(4_050) });
    expect(statementLineOf(returned)).toMatchObject({
      paidBy: { rail: 'offline', status: 'owed', amountPaise: 4_050 },
      howPaid: 'the clawback of refund rfnd_AAAAAAAAAAAAAA returned (ops cancelled its payout after a settlement netted it): still owed ₹40.50 offline',
    });
  });

  test('when the ledger has no obligation for a paid order, or an instrument of another rail pays it, then it is shown as unknown and its net counted as unexplained', () => {
    const s = buildStatement({ vendor: { id: 'v', name: 'V' }, period: { from: '2026-09-01', to: '2026-09-30' }, rows: [row({ owed: null })], generatedAt: AT });
    expect(s.lines[0]).toMatchObject({ paidBy: { rail: 'unknown', detail: 'no obligation in the ledger for this paid order', amountPaise: 0 }, howPaid: 'not accounted for: no obligation in the ledger for this paid order' });
    expect(s.totals.unexplainedPaise).toBe(8_100);
    expect(statementLineOf(row({ payout: payout('settled'), ...byPaidLine })).paidBy).toMatchObject({ rail: 'unknown', detail: 'owed by transfer, paid by settlement line' });
    expect(statementLineOf(row({ owed: offlineOwed(8_100), discharge: transfer('paid') })).paidBy).toMatchObject({ rail: 'unknown', detail: 'owed by a settlement run, paid by order transfer' });
    expect(statementLineOf(row({ kind: 'refund_clawback', order: null, owed: null })).paidBy).toMatchObject({ rail: 'unknown', detail: 'a clawback without its obligation in the ledger' });
  });

  const split = { route: 'split', owed: { rail: 'split' as const, amountPaise: 20_250 }, order: order(25_000, 0, 'online', 4_750) };
  const everyRail: StatementRow[] = [
    row({ orderId: 'ord_t', payout: payout('settled'), discharge: transfer('paid') }),
    row({ orderId: 'ord_f', payout: payout('processing'), discharge: transfer('in_flight') }),
    row({ orderId: 'ord_w', payout: payout('parked') }),
    row({ orderId: 'ord_x', payout: payout('cancelled'), discharge: paidBy('adjustment') }),
    row({ orderId: 'ord_s', ...split, discharge: paidBy('split', 'paid', 'trf_CCCCCCCCCCCCCC') }),
    row({ orderId: 'ord_e', ...split, discharge: paidBy('split', 'in_flight') }),
    row({ orderId: 'ord_m', route: 'manual_offline', owed: offlineOwed(9_000), order: order(10_000, 10_000, 'online', 1_000), ...byPaidLine }),
    row({ orderId: 'ord_b', route: 'below_transfer_minimum', owed: offlineOwed(81), order: order(100, 100, 'wallet', 19), ...byOpenLine }),
    row({ orderId: 'ord_c', route: 'cash', owed: offlineOwed(-280), order: order(12_000, 2_000, 'cash', 2_280), cashKeptPaise: 10_000 }),
    row({ orderId: 'ord_d', route: 'cash', owed: offlineOwed(11_200), order: order(20_000, 15_000, 'cash', 3_800), cashKeptPaise: 5_000 }),
    row({ orderId: 'ord_o', route: 'corporate_direct', owed: { rail: 'employer_direct', amountPaise: 12_150 }, discharge: paidBy('employer_direct'), order: order(15_000, 15_000, 'online', 2_850) }),
    row({ orderId: 'ord_t', kind: 'refund_clawback', order: null, refundId: 'rfnd_AAAAAAAAAAAAAA', route: 'refund_clawback', owed: offlineOwed(-4_050), at: new Date(AT.getTime() + 60_000) }),
  ];

  test('when a statement has a line on every rail, then each total is the sum of its lines and every order\'s net is the sum of its rails', () => {
    const s = buildStatement({ vendor: { id: 'v', name: 'V' }, period: { from: '2026-09-01', to: '2026-09-30' }, rows: everyRail, generatedAt: AT });
    const t = s.totals;
    expect(t).toEqual({
      orders: 11, totalPaise: 147_100, subsidyPaise: 81_700, customerSharePaise: 65_400, commissionPaise: 27_049, vendorNetPaise: 120_051,
      transfer: { settledPaise: 8_100, inFlightPaise: 8_100, awaitingPaise: 8_100 },
      split: { processedPaise: 20_250, inFlightPaise: 20_250 },
      offline: { paidPaise: 9_000, inBatchPaise: 81, openPaise: -280 + 11_200 - 4_050 },
      refundClawbackPaise: -4_050, cashKeptAtCounterPaise: 10_000 + 5_000, employerDirectPaise: 12_150, notOwedPaise: 8_100, unexplainedPaise: 0,
    });
    const railsOfOrders = t.transfer.settledPaise + t.transfer.inFlightPaise + t.transfer.awaitingPaise + t.split.processedPaise + t.split.inFlightPaise
      + t.offline.paidPaise + t.offline.inBatchPaise + t.offline.openPaise - t.refundClawbackPaise + t.cashKeptAtCounterPaise + t.employerDirectPaise + t.notOwedPaise;
    expect(railsOfOrders).toBe(t.vendorNetPaise);
    expect(s.balance).toEqual({ stillOwedPaise: 81 + 6_870, openPaise: 6_870, carriedForward: false, words: '₹69.51 still owed offline; ₹68.70 not in a batch yet; ₹0.81 in open settlement batches' });
    expect(totalRows(s).find(([rail, what]) => rail === 'offline' && what === 'of which refunds clawed back')).toEqual(['offline', 'of which refunds clawed back', -4_050]);
    // Ordered by time, an order before the clawback of it.
    expect(s.lines.map((l) => `${l.orderId}:${l.kind}`).slice(-2)).toEqual(['ord_x:order', 'ord_t:refund_clawback']);
  });

  test('when the open lines not in a batch net to zero or less, then the balance is carried forward and each line still says owed or owes back', () => {
    const rows = [
      row({ orderId: 'ord_c', route: 'cash', owed: offlineOwed(-280), order: order(12_000, 2_000, 'cash', 2_280), cashKeptPaise: 10_000 }),
      row({ orderId: 'ord_b', route: 'below_transfer_minimum', owed: offlineOwed(81), order: order(100, 100, 'wallet', 19) }),
    ];
    const s = buildStatement({ vendor: { id: 'v', name: 'V' }, period: { from: '2026-09-01', to: '2026-09-30' }, rows, generatedAt: AT });
    expect(s.lines.map((l) => l.paidBy.rail === 'offline' && l.paidBy.status)).toEqual(['owed', 'owes_back']);
    expect(s.balance).toEqual({
      stillOwedPaise: -199, openPaise: -199, carriedForward: true,
      words: 'carried forward: the open lines not in a batch net to -₹1.99 (the vendor owes back ₹1.99); no payment for them, they stay open and net off the next settlement',
    });
    const none = buildStatement({ vendor: { id: 'v', name: 'V' }, period: { from: '2026-09-01', to: '2026-09-30' }, rows: [row({ payout: payout('settled'), discharge: transfer('paid') })], generatedAt: AT });
    expect(none.balance).toEqual({ stillOwedPaise: 0, openPaise: 0, carriedForward: false, words: 'nothing owed offline for this period' });
  });

  test('when a period is asked for, then it is IST days that exist, from not after to, at most 366 days; the format is json unless csv', () => {
    expect(statementPeriodSchema.parse({ from: '2026-09-01', to: '2026-09-01' })).toEqual({ from: '2026-09-01', to: '2026-09-01' });
    expect(statementPeriodSchema.safeParse({ from: '2026-02-30', to: '2026-03-01' }).success).toBe(false);
    expect(statementPeriodSchema.safeParse({ from: '2026-09-02', to: '2026-09-01' }).error?.issues[0]?.message).toBe('from must not be after to');
    expect(statementPeriodSchema.safeParse({ from: '2025-01-01', to: '2025-12-31' }).success).toBe(true);
    expect(statementPeriodSchema.safeParse({ from: '2024-01-01', to: '2025-01-01' }).error?.issues[0]?.message).toBe('a statement covers at most 366 days');
    expect(statementQuerySchema.parse({ from: '2026-09-01', to: '2026-09-02' }).format).toBe('json');
    expect(statementQuerySchema.safeParse({ from: '2026-09-01', to: '2026-09-02', format: 'xlsx' }).success).toBe(false);
  });
});
