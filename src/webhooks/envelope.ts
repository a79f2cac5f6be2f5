/** The Razorpay webhook envelope (reference §4.2), parsed with zod before anything is written. It
 * says nothing about the payload beyond its shape (entity name → `{ entity: {...} }`): each effect
 * parses the snapshots it reads. Unknown extra fields are kept but not trusted. */
import { z } from 'zod';

/** Razorpay event names are dot-separated lower-case words (`payment.captured`,
 * `payment.dispute.action_required`, `product.route.under_review`); anything else is not an event. */
export const eventNameSchema = z.string().regex(/^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$/, 'not a Razorpay event name').max(100);

export const webhookEnvelopeSchema = z.object({
  entity: z.literal('event'),
  account_id: z.string().min(1),
  event: eventNameSchema,
  contains: z.array(z.string()),
  payload: z.record(z.string(), z.object({ entity: z.record(z.string(), z.unknown()) })),
  created_at: z.number().int().nonnegative(),
});
export type WebhookEnvelope = z.infer<typeof webhookEnvelopeSchema>;

/** `x-razorpay-event-id`: unique per event, the dedupe key (there is no id inside the body). */
export const eventIdSchema = z.string().min(1).max(100);
