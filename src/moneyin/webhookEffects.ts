/** Money in's webhook effects: payments and refunds. src/webhooks/eventMap.ts composes them with the
 * effects payouts and recon export; money in imports no other capability's effects. */
import type { WebhookEffect } from '../webhooks/types';
import { applyPaymentSnapshot } from './paymentSnapshots';
import { applyRefundSnapshot } from './refunds';
import { orderPaidPayloadSchema, paymentPayloadSchema, refundPayloadSchema } from './webhookEnvelope';

// The event's time is the gateway's evidence of when the snapshot happened: for payment.captured
// (and order.paid, the same fact) it is the capture time.
const paymentSnapshot: WebhookEffect = async (tx, envelope, ctx) => {
  const { payment } = paymentPayloadSchema.parse(envelope.payload);
  return applyPaymentSnapshot(tx, payment.entity, 'webhook', ctx, envelope.created_at);
};

const refundSnapshot: WebhookEffect = async (tx, envelope) => {
  const { refund } = refundPayloadSchema.parse(envelope.payload);
  await applyRefundSnapshot(tx, refund.entity); // a refund that is not ours (e.g. from the dashboard) matches nothing
  return [];
};

export const moneyInWebhookEffects = {
  'payment.authorized': paymentSnapshot,
  // payment.captured and order.paid are one business fact: both carry the captured payment.
  'payment.captured': paymentSnapshot,
  'order.paid': async (tx, envelope, ctx) => {
    const { payment } = orderPaidPayloadSchema.parse(envelope.payload);
    return applyPaymentSnapshot(tx, payment.entity, 'webhook', ctx, envelope.created_at);
  },
  'payment.failed': paymentSnapshot,
  'refund.created': refundSnapshot,
  'refund.processed': refundSnapshot,
  'refund.failed': refundSnapshot,
} satisfies Record<string, WebhookEffect>;
