import { orderPaidPayloadSchema, paymentPayloadSchema, refundPayloadSchema } from '../../src/moneyin/webhookEnvelope';
import { moneyInWebhookEffects } from '../../src/moneyin/webhookEffects';
import { webhookEnvelopeSchema } from '../../src/webhooks/envelope';

// Trimmed from Razorpay's documented samples (webhook.order.paid.card.json, webhook.refund.processed.json).
const payment = {
  id: 'pay_DESp9bgForNoUd', entity: 'payment', amount: 100, currency: 'INR', status: 'captured', order_id: 'order_DESoU0U4ikYA19',
  invoice_id: null, international: false, method: 'card', amount_refunded: 0, refund_status: null, captured: true, notes: [],
  fee: 2, tax: 0, error_code: null, error_description: null, created_at: 1567674797,
};
const orderPaid = {
  entity: 'event', account_id: 'acc_BFQ7uQEaa7j2z7', event: 'order.paid', contains: ['payment', 'order'],
  payload: {
    payment: { entity: payment },
    order: { entity: { id: 'order_DESoU0U4ikYA19', entity: 'order', amount: 100, amount_paid: 100, amount_due: 0, currency: 'INR', receipt: 'rcptid #1', status: 'paid', attempts: 1, notes: [], created_at: 1567674759 } },
  },
  created_at: 1567674804,
};
const refundProcessed = {
  entity: 'event', account_id: 'acc_E7OQJcEANmBHTC', event: 'refund.processed', contains: ['refund', 'payment'],
  payload: {
    refund: { entity: { id: 'rfnd_FS8TWyPrCsa0OB', entity: 'refund', amount: 50000, currency: 'INR', payment_id: 'pay_FPoJKWQQ8lK13n', notes: { comment: 'x' }, receipt: null, created_at: 1597734071, status: 'processed' } },
    payment: { entity: { ...payment, id: 'pay_FPoJKWQQ8lK13n', amount: 500000 } },
  },
  created_at: 1597734071,
};
const example = (name: 'order.paid' | 'payment.failed' | 'refund.processed'): unknown => {
  if (name === 'order.paid') return structuredClone(orderPaid);
  if (name === 'refund.processed') return structuredClone(refundProcessed);
  return { ...structuredClone(orderPaid), event: 'payment.failed', contains: ['payment'], payload: { payment: { entity: { ...payment, status: 'failed', fee: null, tax: null } } } };
};
describe('webhook envelope parsing', () => {
  test("when Razorpay's documented order.paid, payment.failed and refund.processed samples are parsed, then they pass", () => {
    const paid = webhookEnvelopeSchema.parse(example('order.paid'));
    expect(orderPaidPayloadSchema.parse(paid.payload).payment.entity).toMatchObject({ id: 'pay_DESp9bgForNoUd', amount: 100, status: 'captured' });
    const failed = webhookEnvelopeSchema.parse(example('payment.failed'));
    expect(paymentPayloadSchema.parse(failed.payload).payment.entity.status).toBe('failed');
    const refund = webhookEnvelopeSchema.parse(example('refund.processed'));
    expect(refundPayloadSchema.parse(refund.payload).refund.entity).toMatchObject({ status: 'processed', amount: 50_000 });
  });

  test('when a payment amount is negative or fractional, then the payload is refused', () => {
    const paid = webhookEnvelopeSchema.parse(example('order.paid'));
    for (const amount of [-100, 100.5, '100']) {
      const payload = structuredClone(paid.payload) as { payment: { entity: Record<string, unknown> } };
      payload.payment.entity.amount = amount;
      expect(orderPaidPayloadSchema.safeParse(payload).success).toBe(false);
    }
  });

  test('when an envelope lacks its event name or payload, then it is refused', () => {
    expect(webhookEnvelopeSchema.safeParse({ entity: 'event', account_id: 'acc_x', contains: [], created_at: 1 }).success).toBe(false);
    expect(webhookEnvelopeSchema.safeParse({ entity: 'event', account_id: 'acc_x', event: 'order.paid', contains: [], payload: 'x', created_at: 1 }).success).toBe(false);
  });

  test("when money in's effects are read, then they are the payment and refund events and nothing else", () => {
    expect(Object.keys(moneyInWebhookEffects).sort()).toEqual([
      'order.paid', 'payment.authorized', 'payment.captured', 'payment.failed', 'refund.created', 'refund.failed', 'refund.processed',
    ]);
  });
});
