/** The rule that confirms a capture before platform money moves (issue 19 item 5): what Razorpay's
 * payment must say for the transfer to go. */
import type { RzpPayment } from '../../src/gateway/types';
import { captureMismatches } from '../../src/payouts/captureConfirmation';

describe('captureMismatches (a capture confirmed before the transfer)', () => {
  const recorded = { orderId: 'ord_1', paymentId: 'pay_AAAAAAAAAAAAA1', amountPaise: 1_000, gatewayOrderId: 'order_AAAAAAAAAAAA1' };
  const payment = (over: Partial<RzpPayment>): RzpPayment => ({
    id: 'pay_AAAAAAAAAAAAA1', entity: 'payment', amount: 1_000, currency: 'INR', status: 'captured', order_id: 'order_AAAAAAAAAAAA1',
    method: 'card', captured: true, amount_refunded: 0, refund_status: null, fee: 20, tax: 0, notes: [], error_code: null,
    error_description: null, created_at: 1_790_000_000, ...over,
  });

  test('when Razorpay says captured, nothing refunded, our amount and our gateway order, then it is confirmed', () => {
    expect(captureMismatches(recorded, payment({}))).toEqual([]);
  });
  test('when the payment is only authorised, or refunded in full, then it is not confirmed', () => {
    expect(captureMismatches(recorded, payment({ status: 'authorized', captured: false }))).toEqual(['Razorpay says the payment is authorized, not captured']);
    expect(captureMismatches(recorded, payment({ status: 'refunded', amount_refunded: 1_000, refund_status: 'full' }))).toEqual(['Razorpay says the payment is refunded (in full), not captured']);
  });
  test('when part of it was refunded (Razorpay keeps it captured), then it is not confirmed either', () => {
    expect(captureMismatches(recorded, payment({ amount_refunded: 400, refund_status: 'partial' }))).toEqual(['Razorpay says 400 of its 1000 paise were refunded']);
  });
  test('when the amount or the gateway order differs, then each difference is named', () => {
    expect(captureMismatches(recorded, payment({ amount: 1_500, order_id: 'order_Elsewhere00001' }))).toEqual([
      'Razorpay captured 1500 paise, we recorded 1000',
      'the payment belongs to gateway order order_Elsewhere00001, not ours (order_AAAAAAAAAAAA1)',
    ]);
  });
});
