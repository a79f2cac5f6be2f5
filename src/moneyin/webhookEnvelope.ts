/** The entity snapshots money in reads from Razorpay webhooks (and from payments it fetches),
 * parsed with zod before anything is written. The envelope itself is src/webhooks/envelope.ts.
 * Unknown extra fields are kept but not trusted. */
import { z } from 'zod';

export type { WebhookEnvelope } from '../webhooks/envelope';

const positivePaise = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);
const paiseOrNull = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).nullable().optional();
const notes = z.union([z.record(z.string(), z.unknown()), z.array(z.unknown())]).optional();

export const paymentEntitySchema = z.looseObject({
  id: z.string().regex(/^pay_[A-Za-z0-9]{14}$/),
  entity: z.literal('payment'),
  amount: positivePaise,
  currency: z.string().length(3),
  status: z.enum(['created', 'authorized', 'captured', 'refunded', 'failed']),
  /** Whether it was ever captured: a `refunded` payment that was not is a refunded authorisation. */
  captured: z.boolean().optional(),
  order_id: z.string().min(1).nullable(),
  method: z.string().nullable().optional(),
  fee: paiseOrNull,
  tax: paiseOrNull,
  notes,
  created_at: z.number().int().nonnegative(),
});
export type PaymentEntity = z.infer<typeof paymentEntitySchema>;

export const orderEntitySchema = z.looseObject({
  id: z.string().min(1),
  entity: z.literal('order'),
  amount: positivePaise,
  receipt: z.string().nullable().optional(),
  status: z.string(),
});

export const refundEntitySchema = z.looseObject({
  id: z.string().regex(/^rfnd_[A-Za-z0-9]{14}$/),
  entity: z.literal('refund'),
  amount: positivePaise,
  payment_id: z.string().min(1),
  receipt: z.string().nullable().optional(),
  status: z.enum(['pending', 'processed', 'failed']),
  notes,
});
export type RefundEntity = z.infer<typeof refundEntitySchema>;

/** Payloads of the events money in handles, keyed the way Razorpay's `contains` names them. */
export const paymentPayloadSchema = z.object({ payment: z.object({ entity: paymentEntitySchema }) });
export const orderPaidPayloadSchema = z.object({
  payment: z.object({ entity: paymentEntitySchema }),
  order: z.object({ entity: orderEntitySchema }),
});
export const refundPayloadSchema = z.object({ refund: z.object({ entity: refundEntitySchema }) });
