/** POST /webhooks/razorpay: signature over the raw bytes first (401, nothing written), then the
 * envelope (400, nothing written), then the event id and its effect in one transaction. An event
 * the app does not act on is acknowledged the same way (eventMap.ts). */
import { AppError } from '../appError';
import { inTransaction } from '../db/pool';
import { validateWebhookSignature } from '../gateway';
import { logger } from '../logger';
import { runAfterCommitWithin } from '../moneyin/afterCommit';
import { eventIdSchema, webhookEnvelopeSchema } from './envelope';
import { handlingOf } from './eventMap';
import type { WebhookContext } from './types';

/** Razorpay waits 5 s for our answer; after-commit steps (a refund request to the gateway, a
 * transfer fetched) get this long, then carry on unawaited. A payout's start is not one of them:
 * its payouts_outbox row, committed with the event, wakes the drainer in the worker, so the reply
 * never waits for Temporal and the API spends no CPU on it. */
const AFTER_COMMIT_BUDGET_MS = 2_500;

export interface IncomingWebhook {
  rawBody: Buffer;
  signature: string | undefined;
  eventId: string | undefined;
}

/** `actedOn: false`: acknowledged (2xx, id recorded), nothing else done. */
export type WebhookReceipt = { eventId: string; event: string; duplicate: boolean; actedOn: boolean };

export async function receiveRazorpayWebhook(ctx: WebhookContext, incoming: IncomingWebhook): Promise<WebhookReceipt> {
  // During a rotation Razorpay still signs retries of older events with the previous secret.
  const secrets = [ctx.config.RAZORPAY_WEBHOOK_SECRET, ...ctx.config.RAZORPAY_WEBHOOK_PREVIOUS_SECRETS];
  const signature = incoming.signature;
  if (!signature || !secrets.some((secret) => validateWebhookSignature(incoming.rawBody, signature, secret))) {
    throw new AppError(401, 'invalid_signature', 'X-Razorpay-Signature is missing or does not match the body');
  }
  const envelope = webhookEnvelopeSchema.safeParse(parseJson(incoming.rawBody));
  if (!envelope.success) throw new AppError(400, 'invalid_envelope', 'the webhook body is not a Razorpay event envelope', envelope.error.issues);
  const eventId = eventIdSchema.safeParse(incoming.eventId);
  if (!eventId.success) throw new AppError(400, 'missing_event_id', 'x-razorpay-event-id is required');
  const event = envelope.data.event;
  const handling = handlingOf(event);

  const result = await inTransaction(ctx.db, async (tx) => {
    const fresh = await tx.query('INSERT INTO processed_events (event_id, event_type) VALUES ($1, $2) ON CONFLICT DO NOTHING', [eventId.data, event]);
    if (fresh.rowCount === 0) return { duplicate: true, afterCommit: [] };
    return { duplicate: false, afterCommit: await handling.effect(tx, envelope.data, ctx) };
  });
  if (result.duplicate) logger.info({ eventId: eventId.data, event }, 'duplicate webhook: already processed');
  else if (!handling.actedOn) {
    const line = { eventId: eventId.data, event, contains: envelope.data.contains };
    if (handling.known) logger.info(line, 'webhook acknowledged: an event we do not act on');
    else logger.warn(line, 'webhook acknowledged: an event name we do not know');
  }
  await runAfterCommitWithin(result.afterCommit, AFTER_COMMIT_BUDGET_MS);
  return { eventId: eventId.data, event, duplicate: result.duplicate, actedOn: handling.actedOn };
}

function parseJson(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw new AppError(400, 'malformed_json', 'the webhook body is not JSON');
  }
}
