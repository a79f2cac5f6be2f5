/** The Razorpay event map: which effect each event name has. It composes the effects the
 * capabilities export (money in: payments and refunds; payouts and money in's Route splits: the
 * transfer events; recon: settlements and disputes); no capability imports another's effects.
 *
 * Every other signed, well-formed event — documented ones we do not act on (reference §4.3,
 * refund.speed_changed, product.route.*) and names we do not know yet — is
 * acknowledged: 2xx, its id in processed_events, a log line with its name. Razorpay retries any
 * non-2xx for 24 h and then disables the endpoint, which would also stop payment.captured. */
import { moneyInWebhookEffects } from '../moneyin/webhookEffects';
import { alsoSettlingSplits } from '../moneyin/splitTransfers';
import { transferWebhookEffects } from '../payouts/transferWebhooks';
import { disputeWebhookEffects } from '../recon/disputes';
import { settlementWebhookEffects } from '../recon/settlementEvidence';
import type { WebhookEffect } from './types';

const transferEffects: Record<string, WebhookEffect> = { ...transferWebhookEffects };
// Money in: the same transfer events also settle the Route split an unsubsidised order carried.
transferEffects['transfer.processed'] = alsoSettlingSplits('transfer.processed', transferEffects['transfer.processed']);
transferEffects['transfer.failed'] = alsoSettlingSplits('transfer.failed', transferEffects['transfer.failed']);
transferEffects['transfer.reversed'] = alsoSettlingSplits('transfer.reversed', transferEffects['transfer.reversed']);

/** Events the app acts on. */
export const webhookEffects: Readonly<Record<string, WebhookEffect>> = Object.freeze({
  ...moneyInWebhookEffects,
  ...transferEffects,
  ...settlementWebhookEffects,
  ...disputeWebhookEffects,
});

/** Documented events we receive and deliberately do not act on (logged at info; any other name is
 * logged at warn, so an event Razorpay starts sending is noticed). */
export const ACKNOWLEDGED_EVENTS: ReadonlySet<string> = new Set([
  'refund.speed_changed',
  'product.route.activated', 'product.route.needs_clarification', 'product.route.under_review',
]);

/** Nothing beyond the event id, which the receiver records in the same transaction. */
const acknowledgeOnly: WebhookEffect = async () => [];

export type EventHandling = { effect: WebhookEffect; actedOn: true } | { effect: WebhookEffect; actedOn: false; known: boolean };

/** The effect for an event name (own keys only: `toString` is not an event). An event we do not act
 * on gets an effect that does nothing; `known` says whether the name is one we expect. */
export function handlingOf(event: string): EventHandling {
  const effect = Object.hasOwn(webhookEffects, event) ? webhookEffects[event] : undefined;
  return effect ? { effect, actedOn: true } : { effect: acknowledgeOnly, actedOn: false, known: ACKNOWLEDGED_EVENTS.has(event) };
}
