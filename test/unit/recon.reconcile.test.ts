import { reconcile, bankCreditDueDate } from '../../src/recon/reconcile';
import type { AppObligation, AppPayment, AppTransfer, GatewayRow, ReconInput } from '../../src/recon/model';
import { istDayBounds } from '../../src/domain/calendar';

// 2026-11-02 is a Monday; 2026-11-14 is the 2nd Saturday of November 2026.
const DAY = '2026-11-03';

function paymentRow(over: Partial<GatewayRow> = {}): GatewayRow {
  return {
    entityId: 'pay_A', settlementId: 'setl_1', type: 'payment', amountPaise: 100_000, feePaise: 2_360, taxPaise: 360,
    creditPaise: 97_640, debitPaise: 0, onHold: false, settled: true, reconDay: DAY, paymentId: null,
    gatewayOrderId: 'order_A', orderReceipt: 'ord-A', noteTransactionId: null, ...over,
  };
}

function appPayment(over: Partial<AppPayment> = {}): AppPayment {
  return { id: 'pay_A', orderId: 'ord-A', gatewayOrderId: 'order_A', amountPaise: 100_000, feePaise: 2_360, taxPaise: 360, capturedAt: new Date('2026-10-30T06:00:00Z'), ...over };
}

function cleanInput(over: Partial<ReconInput> = {}): ReconInput {
  return {
    from: DAY, to: DAY, asOf: '2026-11-04', holidays: new Set(),
    rows: [paymentRow()],
    moneyIn: [{ kind: 'order', id: 'ord-A', gatewayOrderId: 'order_A', amountPaise: 100_000 }],
    payments: [appPayment()],
    refunds: [], transfers: [], owed: [],
    settlements: [{ id: 'setl_1', amountPaise: 97_640, utrNormalised: 'UTR1', settledDay: DAY }],
    bankLines: [{ id: 1, utrNormalised: 'UTR1', amountPaise: 97_640, valueDate: DAY }],
    settlementsForBankLines: [],
    captures: [], settledPaymentIds: new Set(['pay_A']), heldPaymentIds: new Set(),
    ...over,
  };
}

const reasons = (input: ReconInput) => reconcile(input).exceptions.map((e) => `${e.reason}/${e.class}`).sort();

describe('reconcile: matching gateway rows, settlements and bank credits', () => {
  test('when every side agrees and the fee includes tax, then nothing is flagged and all is matched', () => {
    const outcome = reconcile(cleanInput());
    expect(outcome.exceptions).toEqual([]);
    expect(outcome.matched).toBe(2); // the payment row and the settlement↔bank pair
  });

  test('when the receipt is missing, then the gateway order id finds the order', () => {
    expect(reasons(cleanInput({ rows: [paymentRow({ orderReceipt: null })] }))).toEqual([]);
    const out = reconcile(cleanInput({ rows: [paymentRow({ orderReceipt: null })], payments: [appPayment({ orderId: null, amountPaise: 90_000 })] })).exceptions;
    expect(out).toMatchObject([{ reason: 'amount-mismatch', orderId: 'ord-A' }]);
  });

  test('when the gateway settled a payment for our order but we recorded no payment, then settled-not-in-app naming the order', () => {
    const out = reconcile(cleanInput({ payments: [] })).exceptions;
    expect(out).toMatchObject([{ reason: 'settled-not-in-app', class: 'unmatched', severity: 'high', entityId: 'pay_A', orderId: 'ord-A', details: { order: 'ord-A', note: 'no captured payment recorded' } }]);
    expect(reconcile(cleanInput({ payments: [] })).matched).toBe(1); // only the settlement↔bank pair
  });

  test('when a settled payment matches neither receipt, gateway order nor a known payment, then settled-not-in-app', () => {
    expect(reasons(cleanInput({ moneyIn: [], payments: [] }))).toEqual(['settled-not-in-app/unmatched']);
  });

  test('when the gateway amount differs from ours, then amount-mismatch with both amounts', () => {
    const out = reconcile(cleanInput({ payments: [appPayment({ amountPaise: 90_000 })] })).exceptions;
    expect(out).toMatchObject([{ reason: 'amount-mismatch', class: 'mismatched', expectedPaise: 90_000, actualPaise: 100_000, orderId: 'ord-A' }]);
  });

  test('when the fee or the tax differs from what the payment recorded, then fee-mismatch', () => {
    expect(reasons(cleanInput({ payments: [appPayment({ feePaise: 2_000 })] }))).toEqual(['fee-mismatch/mismatched']);
    expect(reasons(cleanInput({ payments: [appPayment({ taxPaise: 300 })] }))).toEqual(['fee-mismatch/mismatched']);
  });

  test('when the tax is subtracted a second time from the credit, then it is not the expected net', () => {
    const row = paymentRow({ creditPaise: 100_000 - 2_360 - 360 });
    const out = reconcile(cleanInput({ rows: [row], settlements: [{ id: 'setl_1', amountPaise: row.creditPaise, utrNormalised: 'UTR1', settledDay: DAY }], bankLines: [{ id: 1, utrNormalised: 'UTR1', amountPaise: row.creditPaise, valueDate: DAY }] })).exceptions;
    expect(out).toMatchObject([{ reason: 'partially-settled', expectedPaise: 97_640, actualPaise: 97_280 }]);
  });

  test('when only part of a payment has settled, then partially-settled; when the second part arrives, then clean', () => {
    const part1 = paymentRow({ creditPaise: 50_000 });
    const settlement1 = { id: 'setl_1', amountPaise: 50_000, utrNormalised: 'UTR1', settledDay: DAY };
    const bank1 = { id: 1, utrNormalised: 'UTR1', amountPaise: 50_000, valueDate: DAY };
    expect(reasons(cleanInput({ rows: [part1], settlements: [settlement1], bankLines: [bank1] }))).toEqual(['partially-settled/expected']);
    const part2 = paymentRow({ settlementId: 'setl_2', creditPaise: 47_640, reconDay: '2026-11-04' });
    expect(reasons(cleanInput({ rows: [part1, part2], settlements: [settlement1], bankLines: [bank1] }))).toEqual([]);
  });

  test('when more than amount − fee was credited, then amount-mismatch', () => {
    const row = paymentRow({ creditPaise: 99_000 });
    expect(reasons(cleanInput({ rows: [row], settlements: [{ id: 'setl_1', amountPaise: 99_000, utrNormalised: 'UTR1', settledDay: DAY }], bankLines: [{ id: 1, utrNormalised: 'UTR1', amountPaise: 99_000, valueDate: DAY }] }))).toEqual(['amount-mismatch/mismatched']);
  });

  test('when a refund row has no refund of ours, then refund-not-in-app; when it matches, then clean', () => {
    const refund: GatewayRow = paymentRow({ entityId: 'rfnd_1', type: 'refund', amountPaise: 10_000, feePaise: 0, taxPaise: 0, creditPaise: 0, debitPaise: 10_000, paymentId: 'pay_A' });
    const settlements = [{ id: 'setl_1', amountPaise: 87_640, utrNormalised: 'UTR1', settledDay: DAY }];
    const bankLines = [{ id: 1, utrNormalised: 'UTR1', amountPaise: 87_640, valueDate: DAY }];
    expect(reasons(cleanInput({ rows: [paymentRow(), refund], settlements, bankLines }))).toEqual(['refund-not-in-app/unmatched']);
    expect(reasons(cleanInput({ rows: [paymentRow(), refund], settlements, bankLines, refunds: [{ id: 'rf-1', gatewayRefundId: 'rfnd_1', amountPaise: 10_000 }] }))).toEqual([]);
    expect(reasons(cleanInput({ rows: [paymentRow(), refund], settlements, bankLines, refunds: [{ id: 'rf-1', gatewayRefundId: 'rfnd_1', amountPaise: 9_000 }] }))).toEqual(['amount-mismatch/mismatched']);
  });

  test('when we never learned the gateway refund id, then our refund id in the row notes matches it', () => {
    const refund: GatewayRow = paymentRow({ entityId: 'rfnd_1', type: 'refund', amountPaise: 10_000, feePaise: 0, taxPaise: 0, creditPaise: 0, debitPaise: 10_000, paymentId: 'pay_A', noteRefundRequestId: 'rf-1' });
    const settlements = [{ id: 'setl_1', amountPaise: 87_640, utrNormalised: 'UTR1', settledDay: DAY }];
    const bankLines = [{ id: 1, utrNormalised: 'UTR1', amountPaise: 87_640, valueDate: DAY }];
    const ours = { id: 'rf-1', gatewayRefundId: null, amountPaise: 10_000 };
    expect(reasons(cleanInput({ rows: [paymentRow(), refund], settlements, bankLines, refunds: [ours] }))).toEqual([]);
    expect(reasons(cleanInput({ rows: [paymentRow(), refund], settlements, bankLines, refunds: [{ ...ours, amountPaise: 9_000 }] }))).toEqual(['amount-mismatch/mismatched']);
    // our refund already tied to ANOTHER gateway refund: this one is not ours
    expect(reasons(cleanInput({ rows: [paymentRow(), refund], settlements, bankLines, refunds: [{ ...ours, gatewayRefundId: 'rfnd_0' }] }))).toEqual(['refund-not-in-app/unmatched']);
  });

  test('when a transfer row matches no payout or split, then transfer-not-in-app at critical severity', () => {
    const transfer = paymentRow({ entityId: 'trf_X', type: 'transfer', amountPaise: 5_000, feePaise: 10, taxPaise: 2, creditPaise: 0, debitPaise: 5_010, paymentId: null, orderReceipt: null, gatewayOrderId: null });
    const settlements = [{ id: 'setl_1', amountPaise: 97_640 - 5_010, utrNormalised: 'UTR1', settledDay: DAY }];
    const bankLines = [{ id: 1, utrNormalised: 'UTR1', amountPaise: 97_640 - 5_010, valueDate: DAY }];
    const out = reconcile(cleanInput({ rows: [paymentRow(), transfer], settlements, bankLines })).exceptions;
    expect(out).toMatchObject([{ reason: 'transfer-not-in-app', class: 'unmatched', severity: 'critical', entityId: 'trf_X' }]);
    const payout: AppTransfer = { kind: 'payout', id: 'po-1', orderId: 'ord-A', providerTransferId: 'trf_X', amountPaise: 5_000, status: 'accepted', ledger: { state: 'in_flight', transferId: 'trf_X' } };
    expect(reasons(cleanInput({ rows: [paymentRow(), transfer], settlements, bankLines, transfers: [payout] }))).toEqual([]);
    // found through the payout id in the notes when we never recorded the transfer id
    const unnamed = { ...payout, providerTransferId: null, ledger: { state: 'in_flight' as const, transferId: null } };
    expect(reasons(cleanInput({ rows: [paymentRow(), { ...transfer, noteTransactionId: 'po-1' }], settlements, bankLines, transfers: [unnamed] }))).toEqual([]);
    // a note pointing at a payout that already has ANOTHER transfer is a second payment
    const other = { ...payout, providerTransferId: 'trf_Other', ledger: { state: 'in_flight' as const, transferId: 'trf_Other' } };
    expect(reasons(cleanInput({ rows: [paymentRow(), { ...transfer, noteTransactionId: 'po-1' }], settlements, bankLines, transfers: [other] }))).toEqual(['transfer-not-in-app/unmatched']);
  });

  test('when a split transfer id was never recorded, then its source payment order finds it', () => {
    const transfer = paymentRow({ entityId: 'trf_S', type: 'transfer', amountPaise: 81_000, feePaise: 0, taxPaise: 0, creditPaise: 0, debitPaise: 81_000, paymentId: 'pay_A', orderReceipt: null, gatewayOrderId: null });
    const settlements = [{ id: 'setl_1', amountPaise: 16_640, utrNormalised: 'UTR1', settledDay: DAY }];
    const bankLines = [{ id: 1, utrNormalised: 'UTR1', amountPaise: 16_640, valueDate: DAY }];
    const split: AppTransfer = { kind: 'split', id: 'ord-A', orderId: 'ord-A', providerTransferId: null, amountPaise: 81_000, status: 'expected', ledger: { state: 'in_flight', transferId: null } };
    expect(reasons(cleanInput({ rows: [paymentRow(), transfer], settlements, bankLines, transfers: [split] }))).toEqual([]);
    const processed = { ...split, status: 'processed', providerTransferId: 'trf_S', ledger: { state: 'paid' as const, transferId: 'trf_S' } };
    expect(reasons(cleanInput({ rows: [paymentRow(), transfer], settlements, bankLines, transfers: [processed] }))).toEqual([]);
    // a split whose discharge the ledger no longer holds (it failed), yet money left: a possible double payment
    expect(reconcile(cleanInput({ rows: [paymentRow(), transfer], settlements, bankLines, transfers: [{ ...split, status: 'failed', providerTransferId: 'trf_S', ledger: null }] })).exceptions)
      .toMatchObject([{ reason: 'transfer-not-in-app', severity: 'critical', details: { split: 'ord-A', ourStatus: 'failed' } }]);
  });

  describe('when a transfer reaches a payout the ledger does not say it pays', () => {
    const transfer = paymentRow({ entityId: 'trf_X', type: 'transfer', amountPaise: 5_000, feePaise: 10, taxPaise: 2, creditPaise: 0, debitPaise: 5_010, paymentId: null, orderReceipt: null, gatewayOrderId: null, noteTransactionId: 'po-1' });
    const settlements = [{ id: 'setl_1', amountPaise: 97_640 - 5_010, utrNormalised: 'UTR1', settledDay: DAY }];
    const bankLines = [{ id: 1, utrNormalised: 'UTR1', amountPaise: 97_640 - 5_010, valueDate: DAY }];
    const payout: AppTransfer = { kind: 'payout', id: 'po-1', orderId: 'ord-A', providerTransferId: null, amountPaise: 5_000, status: 'accepted', ledger: { state: 'in_flight', transferId: null } };
    const judge = (over: Partial<AppTransfer>) =>
      reconcile(cleanInput({ rows: [paymentRow(), transfer], settlements, bankLines, transfers: [{ ...payout, ...over }] })).exceptions;

    test.each(['parked', 'cancelled', 'failed', 'pending', 'rerouted', 'review'])('when it is %s (no live discharge in the ledger), then transfer-not-in-app (critical) with our status', (status) => {
      expect(judge({ status, ledger: null })).toMatchObject([{ reason: 'transfer-not-in-app', class: 'unmatched', severity: 'critical', entityId: 'trf_X', details: { payout: 'po-1', ourStatus: status } }]);
    });

    test('when it was marked paid externally (settled without a transfer id: no transfer discharge), then transfer-not-in-app', () => {
      expect(judge({ status: 'settled', ledger: null })).toMatchObject([{ reason: 'transfer-not-in-app', details: { ourStatus: 'settled' } }]);
    });

    test('when its discharge is in flight naming no transfer yet, or names this very transfer, then clean; paid by another transfer, it is a second payment', () => {
      expect(judge({ status: 'processing' })).toEqual([]);
      expect(judge({ status: 'accepted', ledger: { state: 'in_flight', transferId: 'trf_X' } })).toEqual([]);
      expect(judge({ status: 'settled', providerTransferId: 'trf_X', ledger: { state: 'paid', transferId: 'trf_X' } })).toEqual([]);
      // The ledger, not the payout's status, decides: a settled row whose discharge the ledger does not hold.
      expect(judge({ status: 'settled', providerTransferId: 'trf_X', ledger: null })).toMatchObject([{ reason: 'transfer-not-in-app', details: { ourStatus: 'settled' } }]);
    });
  });

  test('when an adjustment is settled, then it always goes to review', () => {
    const adj = paymentRow({ entityId: 'adj_1', type: 'adjustment', amountPaise: 1_012, feePaise: 0, taxPaise: 0, creditPaise: 1_012, orderReceipt: null, gatewayOrderId: null });
    const settlements = [{ id: 'setl_1', amountPaise: 98_652, utrNormalised: 'UTR1', settledDay: DAY }];
    const bankLines = [{ id: 1, utrNormalised: 'UTR1', amountPaise: 98_652, valueDate: DAY }];
    expect(reconcile(cleanInput({ rows: [paymentRow(), adj], settlements, bankLines })).exceptions).toMatchObject([{ reason: 'adjustment', actualPaise: 1_012 }]);
  });

  test('when a payment is on hold, then on-hold (expected, medium) and no settled-not-in-app', () => {
    const held = paymentRow({ onHold: true, settled: false, settlementId: null, creditPaise: 0 });
    const out = reconcile(cleanInput({ rows: [held], settlements: [], bankLines: [] })).exceptions;
    expect(out).toMatchObject([{ reason: 'on-hold', class: 'expected', severity: 'medium' }]);
  });

  test('when a settlement amount differs from the sum of its rows, then settlement-sum-mismatch', () => {
    const settlements = [{ id: 'setl_1', amountPaise: 97_000, utrNormalised: 'UTR1', settledDay: DAY }];
    const bankLines = [{ id: 1, utrNormalised: 'UTR1', amountPaise: 97_000, valueDate: DAY }];
    expect(reconcile(cleanInput({ settlements, bankLines })).exceptions).toMatchObject([{ reason: 'settlement-sum-mismatch', expectedPaise: 97_640, actualPaise: 97_000 }]);
  });

  test('when no bank credit carries the settlement UTR, then expected until the next working day, then unmatched', () => {
    // settled Friday 2026-11-13; the next working day is Monday 11-16 (11-14 is the 2nd Saturday)
    const settlements = [{ id: 'setl_1', amountPaise: 97_640, utrNormalised: 'UTR1', settledDay: '2026-11-13' }];
    const rows = [paymentRow({ reconDay: '2026-11-13' })];
    const base = { from: '2026-11-13', to: '2026-11-13', rows, settlements, bankLines: [] };
    expect(bankCreditDueDate('2026-11-13', new Set())).toBe('2026-11-16');
    expect(reasons(cleanInput({ ...base, asOf: '2026-11-16' }))).toEqual(['settlement-without-bank-credit/expected']);
    expect(reasons(cleanInput({ ...base, asOf: '2026-11-17' }))).toEqual(['settlement-without-bank-credit/unmatched']);
  });

  test('when the bank credit has the UTR in another case and padded, then it still matches', () => {
    // normalisation happens at import and at settlement storage; the engine compares normalised keys
    expect(reasons(cleanInput())).toEqual([]);
  });

  test('when a bank credit matches no settlement, then unmatched-bank-credit', () => {
    const bankLines = [{ id: 1, utrNormalised: 'UTR1', amountPaise: 97_640, valueDate: DAY }, { id: 2, utrNormalised: 'STRAY', amountPaise: 5_00, valueDate: DAY }];
    expect(reconcile(cleanInput({ bankLines })).exceptions).toMatchObject([{ reason: 'unmatched-bank-credit', bankLineId: 2 }]);
  });

  test('when a bank credit has the UTR but another amount, then the settlement is mismatched and the credit unmatched', () => {
    const bankLines = [{ id: 1, utrNormalised: 'UTR1', amountPaise: 97_600, valueDate: DAY }];
    expect(reasons(cleanInput({ bankLines }))).toEqual(['settlement-without-bank-credit/mismatched', 'unmatched-bank-credit/unmatched']);
  });
});

describe('reconcile: captured but not settled, against the T+2 working-day calendar', () => {
  // Captured Thursday 2026-11-12 → T+1 Fri 13 → Sat 14 (2nd Saturday) and Sun 15 skipped → due Monday 16.
  const capture = appPayment({ id: 'pay_C', capturedAt: new Date('2026-11-12T06:30:00Z') });
  const input = (asOf: string, from: string, to: string) => cleanInput({ from, to, asOf, rows: [], settlements: [], bankLines: [], captures: [capture], settledPaymentIds: new Set() });

  test('when the Monday due date is after a 2nd Saturday and a Sunday, then expected on Saturday and an exception on Tuesday', () => {
    expect(reconcile(input('2026-11-14', '2026-11-11', '2026-11-13')).exceptions).toMatchObject([{ reason: 'captured-not-settled', class: 'expected', severity: 'low', details: { dueDay: '2026-11-16' } }]);
    expect(reconcile(input('2026-11-16', '2026-11-14', '2026-11-16')).exceptions).toMatchObject([{ class: 'expected' }]);
    expect(reconcile(input('2026-11-17', '2026-11-14', '2026-11-16')).exceptions).toMatchObject([{ reason: 'captured-not-settled', class: 'unmatched', severity: 'high' }]);
  });

  test('when a bank holiday falls on the due Monday, then the due date moves to Tuesday', () => {
    const out = reconcile({ ...input('2026-11-17', '2026-11-14', '2026-11-17'), holidays: new Set(['2026-11-16']) }).exceptions;
    expect(out).toMatchObject([{ class: 'expected', details: { dueDay: '2026-11-17' } }]);
  });

  test('when a capture is at 00:10 IST, then it belongs to that IST day although UTC says the day before', () => {
    // 2026-11-13 00:10 IST = 2026-11-12 18:40 UTC: capture day Friday, due Tuesday 17 (not Monday 16)
    const late = appPayment({ id: 'pay_M', capturedAt: new Date(istDayBounds('2026-11-13').start.getTime() + 10 * 60_000) });
    const out = reconcile(cleanInput({ from: '2026-11-13', to: '2026-11-13', asOf: '2026-11-17', rows: [], settlements: [], bankLines: [], captures: [late], settledPaymentIds: new Set() })).exceptions;
    expect(out).toMatchObject([{ class: 'expected', day: '2026-11-13', details: { captureDay: '2026-11-13', dueDay: '2026-11-17' } }]);
  });

  test('when the capture has settled or is on hold, then nothing is flagged for it', () => {
    expect(reconcile({ ...input('2026-11-20', '2026-11-14', '2026-11-16'), settledPaymentIds: new Set(['pay_C']) }).exceptions).toEqual([]);
    expect(reconcile({ ...input('2026-11-20', '2026-11-14', '2026-11-16'), heldPaymentIds: new Set(['pay_C']) }).exceptions).toEqual([]);
  });

  test('when neither the capture day nor the due day is in the window, then the capture is not judged', () => {
    expect(reconcile(input('2026-11-30', '2026-11-20', '2026-11-22')).exceptions).toEqual([]);
  });

  test('when the same difference is found twice, then it has one stable key', () => {
    const a = reconcile(input('2026-11-17', '2026-11-14', '2026-11-16')).exceptions;
    const b = reconcile(input('2026-11-18', '2026-11-12', '2026-11-16')).exceptions;
    expect(a.map((e) => e.key)).toEqual(['captured-not-settled|pay_C']);
    expect(b.map((e) => e.key)).toEqual(a.map((e) => e.key));
  });
});

describe('reconcile: what we owe that did not happen', () => {
  const owed = (over: Partial<AppObligation>): AppObligation => ({ kind: 'refund', id: 'rfr_1', orderId: 'ord-A', paymentId: 'pay_A', amountPaise: 10_000, status: 'rejected', day: DAY, code: 'BAD_REQUEST_ERROR', processedAfterFinal: false, ...over });
  const reasons = (o: AppObligation[], asOf = '2026-11-04') => reconcile(cleanInput({ owed: o, asOf })).exceptions.map((e) => [e.reason, e.class, e.severity]);

  test('when a refund was refused for good or failed after acceptance, then it is an exception with the refund and its code', () => {
    expect(reasons([owed({})])).toEqual([['refund-rejected', 'unmatched', 'high']]);
    expect(reasons([owed({ status: 'failed' })])).toEqual([['refund-failed', 'unmatched', 'high']]);
    const [e] = reconcile(cleanInput({ owed: [owed({})] })).exceptions;
    expect(e).toMatchObject({ key: 'refund-rejected|rfr_1', orderId: 'ord-A', expectedPaise: 10_000, details: { refund: 'rfr_1', code: 'BAD_REQUEST_ERROR' } });
  });

  test('when a split is still expected, then it is an exception only past its T+2 due date', () => {
    const split = owed({ kind: 'split', id: 'ord-A', status: 'expected', code: null });
    expect(reasons([split], DAY)).toEqual([]);
    expect(reasons([split], '2026-11-05')).toEqual([]); // due today (T+2 working days)
    expect(reasons([split], '2026-11-06')).toEqual([['split-not-processed', 'unmatched', 'high']]);
  });

  test('when a split processed after it was owed offline, then it is a critical mismatch', () => {
    expect(reasons([owed({ kind: 'split', id: 'ord-A', status: 'processed', processedAfterFinal: true })])).toEqual([['split-paid-after-owed-offline', 'mismatched', 'critical']]);
  });
});

