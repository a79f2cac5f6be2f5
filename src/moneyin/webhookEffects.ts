/** Money in's webhook effects: payments and refunds. src/webhooks/eventMap.ts composes them with the
 * effects payouts and recon export; money in imports no other capability's effects. */
import type { WebhookEffect } from '../webhooks/types';
import { followOutsideRefundAfterCommit } from './outsideRefunds';
import { applyPaymentSnapshot } from './paymentSnapshots';
import { applyRefundSnapshot } from './refunds';
import { orderPaidPayloadSchema, paymentPayloadSchema, refundPayloadSchema } from './webhookEnvelope';

// The event's time is the gateway's evidence of when the snapshot happened: for payment.captured
// (and order.paid, the same fact) it is the capture time.
const paymentSnapshot: WebhookEffect = async (tx, envelope, ctx) => {
  const { payment } = paymentPayloadSchema.parse(envelope.payload);
  return applyPaymentSnapshot(tx, payment.entity, 'webhook', ctx, envelope.created_at);
};

// A refund that matches none of ours (e.g. made from the Razorpay Dashboard) on a payment that keeps
// an order paid is fetched after the commit and may hold or claw back the vendor's payout
// (outsideRefunds.ts).
const refundSnapshot: WebhookEffect = async (tx, envelope, ctx) => {
  const { refund } = refundPayloadSchema.parse(envelope.payload);
  if (await applyRefundSnapshot(tx, refund.entity)) return [];
  return followOutsideRefundAfterCommit(tx, refund.entity, { db: ctx.db, gateway: ctx.gateway, attemptCap: ctx.config.PAYOUT_ATTEMPT_CAP });
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
