/** What a set-aside webhook was about, read from its body as far as it can be read: the Razorpay
 * object whose state the event would have changed, and the state it announced. The quarantine page
 * uses it to say whether that effect has been recovered since (the sweeps and fetches that recover
 * it never read this row). Pure: a body our schema refused is read leniently here, field by field. */
import { z } from 'zod';

export type SetAsideTarget =
  | { kind: 'payment'; id: string; announced: 'authorized' | 'captured' | 'failed' }
  | { kind: 'refund'; id: string; announced: 'created' | 'processed' | 'failed' }
  | { kind: 'transfer'; id: string; announced: 'processed' | 'failed' | 'reversed' }
  | { kind: 'settlement'; id: string }
  | { kind: 'dispute'; id: string };

const entity = (key: string, prefix: string) => z.object({
  payload: z.object({ [key]: z.object({ entity: z.object({ id: z.string().regex(new RegExp(`^${prefix}_[A-Za-z0-9]{1,40}$`)) }) }) }),
});
const idOf = (body: unknown, key: string, prefix: string): string | null => {
  const parsed = entity(key, prefix).safeParse(body);
  return parsed.success ? (parsed.data.payload[key] as { entity: { id: string } }).entity.id : null;
};

const PAYMENT_EVENTS = { 'payment.authorized': 'authorized', 'payment.captured': 'captured', 'order.paid': 'captured', 'payment.failed': 'failed' } as const;
const REFUND_EVENTS = { 'refund.created': 'created', 'refund.processed': 'processed', 'refund.failed': 'failed' } as const;
const TRANSFER_EVENTS = { 'transfer.processed': 'processed', 'transfer.failed': 'failed', 'transfer.reversed': 'reversed' } as const;

/** The object and announced state, or null when the event is not one the app acts on or its body
 * names no object we can read. */
export function setAsideTarget(event: string | null, body: unknown): SetAsideTarget | null {
  if (event === null) return null;
  if (Object.hasOwn(PAYMENT_EVENTS, event)) {
    const id = idOf(body, 'payment', 'pay');
    return id ? { kind: 'payment', id, announced: PAYMENT_EVENTS[event as keyof typeof PAYMENT_EVENTS] } : null;
  }
  if (Object.hasOwn(REFUND_EVENTS, event)) {
    const id = idOf(body, 'refund', 'rfnd');
    return id ? { kind: 'refund', id, announced: REFUND_EVENTS[event as keyof typeof REFUND_EVENTS] } : null;
  }
  if (Object.hasOwn(TRANSFER_EVENTS, event)) {
    const id = idOf(body, 'transfer', 'trf');
    return id ? { kind: 'transfer', id, announced: TRANSFER_EVENTS[event as keyof typeof TRANSFER_EVENTS] } : null;
  }
  if (event === 'settlement.processed') {
    const id = idOf(body, 'settlement', 'setl');
    return id ? { kind: 'settlement', id } : null;
  }
  if (event.startsWith('payment.dispute.')) {
    const id = idOf(body, 'dispute', 'disp');
    return id ? { kind: 'dispute', id } : null;
  }
  return null;
}
