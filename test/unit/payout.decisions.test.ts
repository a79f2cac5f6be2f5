import { PAYOUT_START_POLICIES, PAYOUT_STATUSES, payoutWorkflowId } from '../../src/contracts/payout';
import type { RzpTransfer } from '../../src/gateway/types';
import { classifyRejection, retryDelayMs } from '../../src/payouts/rejection';
import { judgeTransferEvidence, transferColumns } from '../../src/payouts/externalTransfer';
import { decideResolution } from '../../src/payouts/resolution';
import { isTerminal, nextStatus, statusesAllowing, type PayoutEvent } from '../../src/payouts/stateMachine';

describe('payout workflow id and start policies', () => {
  test('when an order id is given, then the workflow id is payout-<orderId>', () => {
    expect(payoutWorkflowId('ord_123')).toBe('payout-ord_123');
  });
  test('when a payout run is started, then one live run per id and no run after a completed one', () => {
    expect(PAYOUT_START_POLICIES).toEqual({ workflowIdConflictPolicy: 'USE_EXISTING', workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY' });
  });
});

describe('payout state machine', () => {
  const cases: Array<[string, PayoutEvent, string | null]> = [
    ['pending', { type: 'claim' }, 'processing'],
    ['failed', { type: 'claim' }, 'processing'],
    ['processing', { type: 'claim' }, null],
    ['accepted', { type: 'claim' }, null],
    ['settled', { type: 'claim' }, null],
    ['parked', { type: 'claim' }, null],
    ['processing', { type: 'transfer_accepted' }, 'accepted'],
    ['processing', { type: 'not_paid_retry', capReached: false }, 'failed'],
    ['processing', { type: 'not_paid_retry', capReached: true }, 'parked'],
    ['accepted', { type: 'not_paid_retry', capReached: false }, 'failed'],
    ['processing', { type: 'permanent_rejection' }, 'parked'],
    ['accepted', { type: 'settlement_confirmed' }, 'settled'],
    ['processing', { type: 'settlement_confirmed' }, null],
    ['pending', { type: 'settlement_confirmed' }, null],
    ['pending', { type: 'reroute' }, 'rerouted'],
    ['accepted', { type: 'reroute' }, null],
    ['parked', { type: 'ops_retry' }, 'pending'],
    ['review', { type: 'ops_mark_paid_externally' }, 'settled'],
    ['parked', { type: 'ops_cancel' }, 'cancelled'],
    ['accepted', { type: 'ops_cancel' }, null],
    ['processing', { type: 'ops_mark_paid_externally' }, null],
    ['review', { type: 'ops_mark_paid_externally', transferPending: true }, 'accepted'],
    ['parked', { type: 'ops_mark_paid_externally', transferPending: false }, 'settled'],
    ['accepted', { type: 'ops_mark_paid_externally', transferPending: true }, null],
  ];
  test.each(cases)('when a %s payout gets %o, then it becomes %s', (from, event, to) => {
    expect(nextStatus(from as never, event)).toBe(to);
  });

  test('when a payout is settled, cancelled, rerouted or paid offline, then no event moves it', () => {
    const events: PayoutEvent[] = [{ type: 'claim' }, { type: 'reroute' }, { type: 'transfer_accepted' }, { type: 'not_paid_retry', capReached: false },
      { type: 'permanent_rejection' }, { type: 'needs_review' }, { type: 'settlement_confirmed' }, { type: 'ops_retry' }, { type: 'ops_mark_paid_externally' }, { type: 'ops_cancel' },
      { type: 'ops_pay_offline' }, { type: 'claim_released' }];
    for (const status of PAYOUT_STATUSES.filter(isTerminal)) {
      for (const event of events) expect(nextStatus(status, event)).toBeNull();
    }
    expect(PAYOUT_STATUSES.filter(isTerminal).sort()).toEqual(['cancelled', 'offline', 'rerouted', 'settled']);
  });

  test('when a claim is released without a request, then only a processing payout goes back to pending; pay offline from wherever no transfer is in flight or paying', () => {
    expect(statusesAllowing({ type: 'claim_released' })).toEqual(['processing']);
    expect(nextStatus('processing', { type: 'claim_released' })).toBe('pending');
    expect(statusesAllowing({ type: 'ops_pay_offline' })).toEqual(['pending', 'failed', 'parked', 'review']);
    expect(nextStatus('parked', { type: 'ops_pay_offline' })).toBe('offline');
    expect(nextStatus('pending', { type: 'ops_pay_offline' })).toBe('offline');
    expect(nextStatus('processing', { type: 'ops_pay_offline' })).toBeNull();
    expect(nextStatus('accepted', { type: 'ops_pay_offline' })).toBeNull();
  });

  test('when the claim is compare-and-swapped, then only pending and failed rows match', () => {
    expect(statusesAllowing({ type: 'claim' })).toEqual(['pending', 'failed']);
    expect(statusesAllowing({ type: 'settlement_confirmed' })).toEqual(['accepted']);
  });
});

describe('classifyRejection', () => {
  test.each([
    ['BAD_REQUEST_TRANSFER_INSUFFICIENT_BALANCE', 'transient'],
    ['BAD_REQUEST_NEGATIVE_BALANCE_BREACHED', 'transient'],
    ['BAD_REQUEST_TRANSFER_NOT_ALLOWED_TO_SUSPENDED_LINKED_ACCOUNT', 'permanent'],
    ['BAD_REQUEST_TRANSFER_ACCOUNT_NOT_ACTIVATED', 'permanent'],
    ['BAD_REQUEST_TRANSFER_INVALID_ACCOUNT_ID', 'permanent'],
    ['BAD_REQUEST_PAYMENT_FEES_GREATER_THAN_AMOUNT', 'permanent'],
    ['SOMETHING_NEW_FROM_THE_PROVIDER', 'permanent'],
  ])('when the provider rejects with %s, then it is %s', (code, kind) => {
    expect(classifyRejection(code)).toBe(kind);
  });

  test('when transient failures repeat, then the backoff doubles up to its cap', () => {
    const policy = { retryBackoffMs: 100, retryBackoffMaxMs: 500 };
    expect([1, 2, 3, 4, 5].map((n) => retryDelayMs(n, policy))).toEqual([100, 200, 400, 500, 500]);
  });
});

const payoutId = '3f0d5e0c-1111-4b5e-9a1d-000000000001';
const transfer = (over: Partial<RzpTransfer>): RzpTransfer => ({
  id: 'trf_AAAAAAAAAAAAA1', entity: 'transfer', status: 'processed', source: 'acc_PlatformMeals01', recipient: 'acc_Vendor00000001',
  amount: 8100, currency: 'INR', amount_reversed: 0, fees: 0, tax: 0, notes: { transaction_id: payoutId, order_id: 'o1' }, on_hold: false,
  settlement_status: null, recipient_settlement_id: null, created_at: 1, processed_at: 1,
  error: { code: null, description: null, reason: null, field: null, step: null }, ...over,
});

describe('decideResolution', () => {
  const base = { payoutId, amountPaise: 8100, linkedAccountId: 'acc_Vendor00000001', claimAgeMs: 600_000, inFlightHorizonMs: 120_000, earlierTransferIds: [] as string[] };

  test('when a live transfer carries our note, then it is found and not paid again', () => {
    const t = transfer({});
    expect(decideResolution({ ...base, transfers: [transfer({ id: 'trf_other', notes: { transaction_id: 'x' } }), t] })).toEqual({ kind: 'found_alive', transfer: t });
  });
  test('when a pending transfer carries our note, then it is found alive', () => {
    expect(decideResolution({ ...base, transfers: [transfer({ status: 'pending' })] }).kind).toBe('found_alive');
  });
  test('when only a failed transfer carries our note, then the vendor is not paid', () => {
    expect(decideResolution({ ...base, transfers: [transfer({ status: 'failed' })] }).kind).toBe('found_failed');
  });
  test('when nothing carries our note and the claim is old, then nothing is found', () => {
    expect(decideResolution({ ...base, transfers: [transfer({ notes: [] })] }).kind).toBe('nothing_found');
  });
  test('when nothing carries our note but a request may be in flight, then ask again', () => {
    expect(decideResolution({ ...base, claimAgeMs: 1_000, transfers: [] }).kind).toBe('ask_again');
  });
  test('when an earlier attempt\'s recorded transfer failed and the current request may be in flight, then ask again', () => {
    const earlierFailed = transfer({ id: 'trf_EarlierFailed1', status: 'failed' });
    expect(decideResolution({ ...base, claimAgeMs: 3_000, earlierTransferIds: [earlierFailed.id], transfers: [earlierFailed] }).kind).toBe('ask_again');
  });
  test('when only an earlier attempt\'s recorded transfer failed and the claim is old, then nothing is found for this attempt', () => {
    const earlierFailed = transfer({ id: 'trf_EarlierFailed1', status: 'failed' });
    expect(decideResolution({ ...base, earlierTransferIds: [earlierFailed.id], transfers: [earlierFailed] }).kind).toBe('nothing_found');
  });
  test('when the current attempt\'s transfer failed but the claim is seconds old, then ask again rather than release', () => {
    expect(decideResolution({ ...base, claimAgeMs: 3_000, transfers: [transfer({ status: 'failed' })] }).kind).toBe('ask_again');
  });
  test('when several failed transfers carry our note (newest first), then the newest by created_at is the finding', () => {
    const newer = transfer({ id: 'trf_Newer00000001', status: 'failed', created_at: 200 });
    const older = transfer({ id: 'trf_Older00000001', status: 'reversed', created_at: 100 });
    expect(decideResolution({ ...base, transfers: [newer, older] })).toEqual({ kind: 'found_failed', transfer: newer });
  });
  test('when two live transfers carry our note, or the amount differs, then a human reviews', () => {
    expect(decideResolution({ ...base, transfers: [transfer({}), transfer({ id: 'trf_AAAAAAAAAAAAA2' })] }).kind).toBe('ambiguous');
    expect(decideResolution({ ...base, transfers: [transfer({ amount: 8000 })] }).kind).toBe('ambiguous');
  });

  test('when a batch closed again after a restore sums less than its live transfer, then it waits for its members while the wait lasts, and a human reviews after it, or for a smaller transfer or another account', () => {
    const more = transfer({ amount: 16_200 });
    expect(decideResolution({ ...base, membersMayReturn: true, transfers: [more] })).toEqual({ kind: 'members_missing', transfer: more });
    expect(decideResolution({ ...base, membersMayReturn: false, transfers: [more] }).kind).toBe('ambiguous');
    expect(decideResolution({ ...base, membersMayReturn: true, transfers: [transfer({ amount: 8000 })] }).kind).toBe('ambiguous');
    expect(decideResolution({ ...base, membersMayReturn: true, transfers: [transfer({ amount: 16_200, recipient: 'acc_Elsewhere000001' })] }).kind).toBe('ambiguous');
    expect(decideResolution({ ...base, membersMayReturn: true, transfers: [transfer({})] }).kind).toBe('found_alive');
  });
});

describe('judgeTransferEvidence (mark paid externally with a transfer)', () => {
  const payout = { id: payoutId, amountPaise: 8100, linkedAccountId: 'acc_Vendor00000001' };
  const codeFor = (over: Partial<RzpTransfer>) => judgeTransferEvidence(payout, transfer(over))?.code ?? null;

  test('when the transfer carries the payout\'s note, amount and account and is processed, pending or created, then it pays the payout', () => {
    expect([codeFor({}), codeFor({ status: 'pending' }), codeFor({ status: 'created' })]).toEqual([null, null, null]);
  });
  test('when one thing differs, then the refusal names it, the note first', () => {
    expect(codeFor({ notes: { transaction_id: 'another-payout' } })).toBe('transfer_note_mismatch');
    expect(codeFor({ notes: [] })).toBe('transfer_note_mismatch');
    expect(codeFor({ amount: 8000 })).toBe('transfer_amount_mismatch');
    expect(codeFor({ currency: 'USD' })).toBe('transfer_amount_mismatch');
    expect(codeFor({ recipient: 'acc_Elsewhere000001' })).toBe('transfer_recipient_mismatch');
    expect(codeFor({ amount: 8000, recipient: 'acc_Elsewhere000001', notes: [] })).toBe('transfer_note_mismatch');
  });
  test('when the transfer failed or was reversed, even in part, then it does not pay the vendor', () => {
    expect([codeFor({ status: 'failed' }), codeFor({ status: 'reversed', amount_reversed: 8100 }), codeFor({ status: 'partially_reversed', amount_reversed: 100 })])
      .toEqual(['transfer_not_paid', 'transfer_not_paid', 'transfer_not_paid']);
  });
  test('when the transfer is processed, then the payout settles at the provider\'s processing time; pending, then it waits accepted', () => {
    expect(transferColumns(transfer({ processed_at: 1_790_000_000 }))).toEqual({ awaitingSettlement: false, columns: { provider_transfer_id: 'trf_AAAAAAAAAAAAA1', settled_at: new Date(1_790_000_000_000) } });
    expect(transferColumns(transfer({ status: 'pending', processed_at: null }))).toEqual({ awaitingSettlement: true, columns: { provider_transfer_id: 'trf_AAAAAAAAAAAAA1', settled_at: null } });
  });
});
