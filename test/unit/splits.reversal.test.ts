/** Which refunds of split payments take the vendor's share back (issue 19 items 1 and 2). */
import type { RzpTransfer } from '../../src/gateway/types';
import { splitReversal, type SplitReversalInput } from '../../src/moneyin/splitReversal';

const transfer = (status: RzpTransfer['status']): RzpTransfer => ({ id: 'trf_AAAAAAAAAAAAAA', status } as RzpTransfer);
const base: SplitReversalInput = { splitStatus: 'processed', keptPaymentTransfers: null, refundedPaymentTransfers: [], retryWindowPassed: false };

describe('splitReversal', () => {
  test('when a cancelled order\'s payment carries a live split, then the refund reverses it', () => {
    expect(splitReversal({ ...base, splitStatus: null, refundedPaymentTransfers: [transfer('processed')] })).toEqual({ kind: 'reverse' });
  });

  test('when a duplicate capture carries the only live split, then the refund comes from the balance and the vendor keeps it', () => {
    expect(splitReversal({ ...base, keptPaymentTransfers: [], refundedPaymentTransfers: [transfer('processed')] })).toEqual({ kind: 'keep' });
    expect(splitReversal({ ...base, keptPaymentTransfers: [transfer('failed')], refundedPaymentTransfers: [transfer('pending')] })).toEqual({ kind: 'keep' });
  });

  test('when both payments carry a live split, then the duplicate\'s is reversed', () => {
    expect(splitReversal({ ...base, keptPaymentTransfers: [transfer('processed')], refundedPaymentTransfers: [transfer('processed')] })).toEqual({ kind: 'reverse' });
  });

  test('when the refunded payment shows no live transfer while the split is not final, then the refund asks again later', () => {
    expect(splitReversal({ ...base, splitStatus: 'expected', refundedPaymentTransfers: [transfer('failed')] }).kind).toBe('ask_later');
    expect(splitReversal({ ...base, splitStatus: 'expected', refundedPaymentTransfers: [] }).kind).toBe('ask_later');
    expect(splitReversal({ ...base, splitStatus: null, refundedPaymentTransfers: [transfer('failed')], retryWindowPassed: false }).kind).toBe('ask_later');
  });

  test('when the split is final and nothing live is on the refunded payment, then nothing is reversed', () => {
    expect(splitReversal({ ...base, splitStatus: 'processed', keptPaymentTransfers: [transfer('processed')], refundedPaymentTransfers: [] })).toEqual({ kind: 'keep' });
    expect(splitReversal({ ...base, splitStatus: 'failed', refundedPaymentTransfers: [transfer('failed')] })).toEqual({ kind: 'keep' });
    expect(splitReversal({ ...base, splitStatus: null, refundedPaymentTransfers: [transfer('failed')], retryWindowPassed: true })).toEqual({ kind: 'keep' });
  });

  test('when the refunded payment\'s split was already reversed, then it is decided as a live one whatever our row says (it ran, and Razorpay does not run it again): the same reverse_all as the first refund', () => {
    expect(splitReversal({ ...base, splitStatus: null, refundedPaymentTransfers: [transfer('reversed')], retryWindowPassed: false })).toEqual({ kind: 'reverse' });
    expect(splitReversal({ ...base, splitStatus: 'expected', refundedPaymentTransfers: [transfer('failed'), transfer('reversed')] })).toEqual({ kind: 'reverse' });
    expect(splitReversal({ ...base, keptPaymentTransfers: [], refundedPaymentTransfers: [transfer('reversed')] })).toEqual({ kind: 'keep' });
  });
});
