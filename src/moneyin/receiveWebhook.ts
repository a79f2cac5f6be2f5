/** POST /webhooks/razorpay: signature over the raw bytes first (401, nothing written), then the
 * envelope (400, nothing written), then the event id and its effect in one transaction. */
import { AppError } from '../appError';
import { inTransaction } from '../db/pool';
import { validateWebhookSignature } from '../gateway';
import { logger } from '../logger';
import { runAfterCommitWithin } from './afterCommit';
import { eventIdSchema, webhookEnvelopeSchema } from './webhookEnvelope';
import { webhookEffects, type WebhookContext } from './webhookEffects';

/** Razorpay waits 5 s for our answer; after-commit steps get this long, then carry on unawaited. */
const AFTER_COMMIT_BUDGET_MS = 2_500;

export interface IncomingWebhook {
  rawBody: Buffer;
  signature: string | undefined;
  eventId: string | undefined;
}

export type WebhookReceipt = { eventId: string; event: string; duplicate: boolean };

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
  const effect = Object.hasOwn(webhookEffects, event) ? webhookEffects[event] : undefined;
  if (!effect) throw new AppError(400, 'unsupported_event', `event ${event} is not handled`);

  const result = await inTransaction(ctx.db, async (tx) => {
    const fresh = await tx.query('INSERT INTO processed_events (event_id, event_type) VALUES ($1, $2) ON CONFLICT DO NOTHING', [eventId.data, event]);
    if (fresh.rowCount === 0) return { duplicate: true, afterCommit: [] };
    return { duplicate: false, afterCommit: await effect(tx, envelope.data, ctx) };
  });
  if (result.duplicate) logger.info({ eventId: eventId.data, event }, 'duplicate webhook: already processed');
  await runAfterCommitWithin(result.afterCommit, AFTER_COMMIT_BUDGET_MS);
  return { eventId: eventId.data, event, duplicate: result.duplicate };
}

function parseJson(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw new AppError(400, 'malformed_json', 'the webhook body is not JSON');
  }
}
