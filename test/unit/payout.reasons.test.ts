/** The human queue's reasons say who held the payout: Razorpay (its answer) or one of our own checks,
 * never Razorpay for a check of ours (issue 39: "Razorpay answered AMOUNT_MISMATCH"). */
import { explainPayoutCode } from '../../src/payouts/reasons';

describe('explainPayoutCode', () => {
  test('when our capture check held the payout (AMOUNT_MISMATCH, CAPTURE_CHECK_FAILED), then the reason is ours, in words, and does not blame Razorpay', () => {
    for (const code of ['AMOUNT_MISMATCH', 'CAPTURE_CHECK_FAILED', 'CAPTURE_NOT_CONFIRMED', 'BATCH_MEMBERS_MISSING', 'EARLIER_BATCH_NEEDS_OPS']) {
      const why = explainPayoutCode(code, 'review');
      expect([code, why.decidedBy]).toEqual([code, 'app']);
      expect(why.words).not.toMatch(/^Razorpay answered/);
    }
  });

  test('when Razorpay refused the transfer, then the reason is Razorpay\'s, for a known code and for one we have no words for', () => {
    expect(explainPayoutCode('BAD_REQUEST_TRANSFER_NOT_ALLOWED_TO_SUSPENDED_LINKED_ACCOUNT', 'parked')).toMatchObject({ decidedBy: 'razorpay', words: expect.stringContaining('suspended') });
    expect(explainPayoutCode('BAD_REQUEST_SOMETHING_NEW', 'parked')).toMatchObject({ decidedBy: 'razorpay', words: 'Razorpay answered BAD_REQUEST_SOMETHING_NEW' });
  });

  test('when a code is neither Razorpay\'s nor explained, then it is put on our checks, with the code', () => {
    expect(explainPayoutCode('SOME_CHECK_OF_OURS', 'review')).toMatchObject({ decidedBy: 'app', words: expect.stringContaining('SOME_CHECK_OF_OURS') });
  });
});
