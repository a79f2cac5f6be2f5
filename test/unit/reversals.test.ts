/** Reversals (issue 19 item 3) as pure rules: what a reversed transfer means for a payout (its code,
 * the state machine's transfer_reversed), what a reversal owes the vendor again, and how recon
 * judges reversal rows and the rows of reversed transfers. */
import type { RzpReversal, RzpTransfer } from '../../src/gateway/types';
import { nextStatus, statusesAllowing } from '../../src/payouts/stateMachine';
import { explainPayoutCode } from '../../src/payouts/reasons';
import { isReversed, owedAgainPaise, reversalCode, TRANSFER_PARTIALLY_REVERSED, TRANSFER_REVERSED } from '../../src/payouts/transferReversals';
import type { AppReversal, AppTransfer, GatewayRow, ReconInput } from '../../src/recon/model';
import { reconcile } from '../../src/recon/reconcile';

const transfer = (status: RzpTransfer['status'], amountReversed: number): Pick<RzpTransfer, 'status' | 'amount' | 'amount_reversed'> => ({ status, amount: 8_100, amount_reversed: amountReversed });
const reversal = (over: Partial<RzpReversal> = {}): RzpReversal => ({
  id: 'rvrsl_A', entity: 'reversal', transfer_id: 'trf_A', amount: 3_000, fee: 0, tax: 0, currency: 'INR', notes: [], initiator_id: null,
  customer_refund_id: null, utr: null, created_at: 1_900_000_000, ...over,
});

describe('a reversed transfer and the payout it paid', () => {
  test('when the provider shows the transfer reversed in full or in part, then it is reversed, with a code for each', () => {
    expect(isReversed(transfer('processed', 0))).toBe(false);
    expect(isReversed(transfer('failed', 0))).toBe(false);
    expect(isReversed(transfer('partially_reversed', 3_000))).toBe(true);
    expect(isReversed(transfer('reversed', 8_100))).toBe(true);
    expect(reversalCode(transfer('reversed', 8_100))).toBe(TRANSFER_REVERSED);
    expect(reversalCode(transfer('partially_reversed', 3_000))).toBe(TRANSFER_PARTIALLY_REVERSED);
  });

  test('when a transfer is reversed, then a payout that sent or settled it is parked (never retried by itself), and no other status moves', () => {
    for (const from of ['processing', 'accepted', 'settled', 'parked'] as const) expect(nextStatus(from, { type: 'transfer_reversed' })).toBe('parked');
    for (const from of ['pending', 'failed', 'review', 'cancelled', 'rerouted', 'offline'] as const) expect(nextStatus(from, { type: 'transfer_reversed' })).toBeNull();
    expect(statusesAllowing({ type: 'transfer_reversed' })).toEqual(['processing', 'accepted', 'settled', 'parked']);
    // A parked payout owed again is a human's: retry, mark paid, pay offline or cancel.
    expect(nextStatus('parked', { type: 'ops_retry' })).toBe('pending');
    expect(nextStatus('parked', { type: 'ops_pay_offline' })).toBe('offline');
  });

  test('when ops read the queue, then each code says why and what to do', () => {
    expect(explainPayoutCode(TRANSFER_REVERSED, 'parked').nextStep).toMatch(/retry .*or pay offline/);
    expect(explainPayoutCode(TRANSFER_PARTIALLY_REVERSED, 'parked').nextStep).toMatch(/refused/);
  });

  test('when a reversal is made from outside or by a refund made outside the app, then the vendor is owed its amount again; by one of our refunds, nothing', () => {
    expect(owedAgainPaise({ reversal: reversal(), madeBy: 'outside' })).toBe(3_000);
    expect(owedAgainPaise({ reversal: reversal({ customer_refund_id: 'rfnd_X' }), madeBy: 'outside_refund' })).toBe(3_000);
    expect(owedAgainPaise({ reversal: reversal({ customer_refund_id: 'rfnd_Y' }), madeBy: 'our_refund' })).toBe(0);
  });
});

describe('recon: reversal rows', () => {
  const DAY = '2026-11-03';
  const row = (over: Partial<GatewayRow>): GatewayRow => ({
    entityId: 'rvrsl_A', settlementId: 'setl_1', type: 'reversal', amountPaise: 3_000, feePaise: 0, taxPaise: 0, creditPaise: 3_000, debitPaise: 0,
    onHold: false, settled: true, reconDay: DAY, paymentId: null, gatewayOrderId: null, orderReceipt: null, noteTransactionId: null, ...over,
  });
  const known: AppReversal = { id: 'rvrsl_A', transferId: 'trf_A', orderId: 'ord-A', amountPaise: 3_000, transferAmountPaise: 8_100 };
  const input = (rows: GatewayRow[], over: Partial<ReconInput> = {}): ReconInput => ({
    from: DAY, to: DAY, asOf: '2026-11-04', holidays: new Set(), rows, moneyIn: [], payments: [], refunds: [], transfers: [], owed: [],
    settlements: [], bankLines: [], settlementsForBankLines: [], captures: [], settledPaymentIds: new Set(), heldPaymentIds: new Set(), ...over,
  });
  const transferRow = row({ entityId: 'trf_A', type: 'transfer', amountPaise: 8_100, feePaise: 25, creditPaise: 0, debitPaise: 8_125 });

  test('when a reversal row is one our rows know, then it is matched; with another amount, a mismatch', () => {
    expect(reconcile(input([row({})], { reversals: [known] }))).toEqual({ exceptions: [], matched: 1 });
    expect(reconcile(input([row({ amountPaise: 2_000, creditPaise: 2_000 })], { reversals: [known] })).exceptions).toEqual([
      expect.objectContaining({ reason: 'amount-mismatch', class: 'mismatched', entityId: 'rvrsl_A', orderId: 'ord-A', expectedPaise: 3_000, actualPaise: 2_000, details: { transferId: 'trf_A' } }),
    ]);
  });

  test('when a reversal row is one our rows do not know, then it is reversal-not-in-app (high): a vendor may be owed again that nobody knows of', () => {
    expect(reconcile(input([row({ paymentId: 'pay_S' })])).exceptions).toEqual([expect.objectContaining({
      key: 'reversal-not-in-app|rvrsl_A', reason: 'reversal-not-in-app', class: 'unmatched', severity: 'high', entityId: 'rvrsl_A', actualPaise: 3_000, details: { sourcePaymentId: 'pay_S' },
    })]);
  });

  test('when the reversed transfer\'s own row comes, then it is matched on our reversal even though the payout now holds another transfer, or none', () => {
    const retried: AppTransfer = { kind: 'payout', id: 'p-1', orderId: 'ord-A', providerTransferId: 'trf_B', amountPaise: 8_100, status: 'settled', ledger: { state: 'paid', transferId: 'trf_B' } };
    expect(reconcile(input([transferRow], { transfers: [retried], reversals: [known] }))).toEqual({ exceptions: [], matched: 1 });
    // Without the reversal recorded, the same row is a possible double payment.
    expect(reconcile(input([{ ...transferRow, noteTransactionId: 'p-1' }], { transfers: [retried] })).exceptions.map((e) => e.reason)).toEqual(['transfer-not-in-app']);
  });

  test('when a reversed split\'s transfer row comes, then the split still counts as paid by it', () => {
    const split: AppTransfer = { kind: 'split', id: 'ord-S', orderId: 'ord-S', providerTransferId: 'trf_A', amountPaise: 8_100, status: 'reversed', ledger: { state: 'paid', transferId: 'trf_A' } };
    expect(reconcile(input([transferRow], { transfers: [split] }))).toEqual({ exceptions: [], matched: 1 });
  });
});
