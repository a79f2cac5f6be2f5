import { outsideRefundAction, vendorShareOfRefund } from '../../src/moneyin/outsideRefunds';

describe('refunds made outside the app (issue 19 item 4)', () => {
  test('when the payout has not sent (a claim whose request has not left included), then it is held; when it sent, settled or is owed offline, then the vendor owes back; otherwise it is reported', () => {
    for (const status of ['pending', 'failed', 'parked'] as const) expect(outsideRefundAction({ payoutStatus: status, requestSent: false, corporateDirect: false })).toBe('payout_held');
    expect(outsideRefundAction({ payoutStatus: 'processing', requestSent: false, corporateDirect: false })).toBe('payout_held');
    for (const status of ['processing', 'accepted', 'settled', 'offline', 'rerouted'] as const) expect(outsideRefundAction({ payoutStatus: status, requestSent: true, corporateDirect: false })).toBe('owed_back');
    for (const status of ['review', 'cancelled'] as const) expect(outsideRefundAction({ payoutStatus: status, requestSent: false, corporateDirect: false })).toBe('reported');
  });

  test('when the order is batched, then it is held while its batch is open and owes back once the batch has closed (its fixed sum pays the order)', () => {
    expect(outsideRefundAction({ payoutStatus: 'batched', requestSent: false, corporateDirect: false, batchOpen: true })).toBe('payout_held');
    expect(outsideRefundAction({ payoutStatus: 'batched', requestSent: false, corporateDirect: false, batchOpen: false })).toBe('owed_back');
    expect(outsideRefundAction({ payoutStatus: 'batched', requestSent: false, corporateDirect: false })).toBe('owed_back');
  });

  test('when the order has no payout, then a Route split or offline-ledger route owes back and corporate_direct is reported', () => {
    expect(outsideRefundAction({ payoutStatus: null, requestSent: false, corporateDirect: false })).toBe('owed_back');
    expect(outsideRefundAction({ payoutStatus: null, requestSent: false, corporateDirect: true })).toBe('reported');
  });

  test('when part of the payment is refunded, then the vendor owes its net in that proportion, rounded down in its favour, never more than its net', () => {
    expect(vendorShareOfRefund(8_100, 333, 1_000)).toBe(2_697);
    expect(vendorShareOfRefund(8_100, 1_000, 1_000)).toBe(8_100);
    expect(vendorShareOfRefund(8_100, 5_000, 1_000)).toBe(8_100);
    expect(vendorShareOfRefund(1, 1, 3)).toBe(0);
    expect(vendorShareOfRefund(8_100, 100, 0)).toBe(0);
  });
});
