/** What each Razorpay webhook event does, as a map from event name to an effect. An effect runs
 * inside the transaction that records the event id (so a duplicate delivery changes nothing),
 * parses its payload with zod (a bad payload throws, the transaction rolls back, the sender gets
 * a 400), and returns the steps to run after the commit.
 *
 * To handle another event, add an entry: `'transfer.processed': async (tx, envelope, ctx) => {…}`.
 * An event with no entry is refused with 400 unsupported_event and nothing is written. */
import type { Client } from '@temporalio/client';
import type { Tx } from '../db/pool';
import type { AfterCommit } from './afterCommit';
import type { MoneyInDeps } from './deps';
import { applyPaymentSnapshot } from './paymentSnapshots';
import { applyRefundSnapshot } from './refunds';
import { alsoSettlingSplits } from './splitTransfers';
import { transferWebhookEffects } from '../payouts/transferWebhooks';
import { orderPaidPayloadSchema, paymentPayloadSchema, refundPayloadSchema, type WebhookEnvelope } from './webhookEnvelope';

export interface WebhookContext extends MoneyInDeps {
  /** For effects that signal workflows after the commit (absent where no Temporal client is wired). */
  temporal?: Client;
}

export type WebhookEffect = (tx: Tx, envelope: WebhookEnvelope, ctx: WebhookContext) => Promise<AfterCommit[]>;

const paymentSnapshot: WebhookEffect = async (tx, envelope, ctx) => {
  const { payment } = paymentPayloadSchema.parse(envelope.payload);
  return applyPaymentSnapshot(tx, payment.entity, 'webhook', ctx, envelope.created_at);
};

const refundSnapshot: WebhookEffect = async (tx, envelope) => {
  const { refund } = refundPayloadSchema.parse(envelope.payload);
  await applyRefundSnapshot(tx, refund.entity); // a refund that is not ours (e.g. from the dashboard) matches nothing
  return [];
};

export const webhookEffects: Record<string, WebhookEffect> = {
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
  // Payouts: transfer.processed / transfer.failed settle or release a payout (src/payouts/transferWebhooks.ts).
  ...transferWebhookEffects,
};

// Money in: the same transfer events also settle the Route split an unsubsidised order carried.
webhookEffects['transfer.processed'] = alsoSettlingSplits('transfer.processed', webhookEffects['transfer.processed']);
webhookEffects['transfer.failed'] = alsoSettlingSplits('transfer.failed', webhookEffects['transfer.failed']);
