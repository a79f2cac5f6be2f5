/** POST /webhooks/razorpay: signature over the raw bytes first (401, nothing written), then JSON
 * (400) and the event id header (400); a signed, readable body is always answered 2xx from then on.
 * One our schema refuses (the envelope, or the payload its effect parses) or one outside the replay
 * window is set aside in quarantined_webhooks (quarantine.ts); any other goes to processed_events
 * and its effect in one transaction. An event the app does not act on is acknowledged the same way
 * (eventMap.ts). The event id is only a dedupe key, never a guard: it is an unsigned header, so a
 * replay under a fresh id reaches the effects, and each effect is idempotent on its entity
 * (test/integration/webhooks.replay.test.ts). */
import { ZodError } from 'zod';
import { AppError } from '../appError';
import { inTransaction } from '../db/pool';
import { validateWebhookSignature } from '../gateway';
import { logger } from '../logger';
import { runAfterCommitWithin, type AfterCommit } from '../moneyin/afterCommit';
import { eventIdSchema, webhookEnvelopeSchema } from './envelope';
import { eventAgeVerdict } from './eventAge';
import { handlingOf } from './eventMap';
import { quarantineWebhook, type SetAsideReason } from './quarantine';
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

/** `actedOn: false`: acknowledged (2xx, id recorded), nothing else done. `setAside`: answered 2xx,
 * kept in quarantined_webhooks for that reason, nothing applied (`duplicate`: already kept). */
export type WebhookReceipt = { eventId: string; event: string | null; duplicate: boolean; actedOn: boolean; setAside?: SetAsideReason };

export async function receiveRazorpayWebhook(ctx: WebhookContext, incoming: IncomingWebhook): Promise<WebhookReceipt> {
  // During a rotation Razorpay still signs retries of older events with the previous secret.
  const secrets = [ctx.config.RAZORPAY_WEBHOOK_SECRET, ...ctx.config.RAZORPAY_WEBHOOK_PREVIOUS_SECRETS];
  const signature = incoming.signature;
  if (!signature || !secrets.some((secret) => validateWebhookSignature(incoming.rawBody, signature, secret))) {
    throw new AppError(401, 'invalid_signature', 'X-Razorpay-Signature is missing or does not match the body');
  }
  const body = parseJson(incoming.rawBody);
  const eventId = eventIdSchema.safeParse(incoming.eventId);
  if (!eventId.success) throw new AppError(400, 'missing_event_id', 'x-razorpay-event-id is required');
  const signed = { ctx, incoming, signature, eventId: eventId.data, body };

  const envelope = webhookEnvelopeSchema.safeParse(body);
  if (!envelope.success) return setAside(signed, 'schema_refused', { issues: envelope.error.issues });
  const event = envelope.data.event;
  const window = { maxAgeSeconds: ctx.config.RAZORPAY_WEBHOOK_MAX_AGE_SECONDS, clockSkewSeconds: ctx.config.RAZORPAY_WEBHOOK_CLOCK_SKEW_SECONDS };
  const now = Date.now();
  const age = eventAgeVerdict(envelope.data.created_at, now, window);
  if (age !== 'fresh') return setAside(signed, age, { ageSeconds: Math.round(now / 1000 - envelope.data.created_at), ...window });

  const handling = handlingOf(event);
  let result: { duplicate: boolean; afterCommit: AfterCommit[] };
  try {
    result = await inTransaction(ctx.db, async (tx) => {
      const fresh = await tx.query('INSERT INTO processed_events (event_id, event_type) VALUES ($1, $2) ON CONFLICT DO NOTHING', [eventId.data, event]);
      if (fresh.rowCount === 0) return { duplicate: true, afterCommit: [] };
      return { duplicate: false, afterCommit: await handling.effect(tx, envelope.data, ctx) };
    });
  } catch (err) {
    // An effect parses its payload with zod; what it refuses rolled back with the event id.
    if (err instanceof ZodError) return setAside(signed, 'schema_refused', { issues: err.issues });
    throw err;
  }
  if (result.duplicate) logger.info({ eventId: eventId.data, event }, 'duplicate webhook: already processed');
  else if (!handling.actedOn) {
    const line = { eventId: eventId.data, event, contains: envelope.data.contains };
    if (handling.known) logger.info(line, 'webhook acknowledged: an event we do not act on');
    else logger.warn(line, 'webhook acknowledged: an event name we do not know');
  }
  await runAfterCommitWithin(result.afterCommit, AFTER_COMMIT_BUDGET_MS);
  return { eventId: eventId.data, event, duplicate: result.duplicate, actedOn: handling.actedOn };
}

interface SignedWebhook { ctx: WebhookContext; incoming: IncomingWebhook; signature: string; eventId: string; body: unknown }

/** Answered 2xx, not applied: Razorpay disables an endpoint that keeps failing, and a 4xx for an
 * authentic event would be retried for 24 h to no end. */
async function setAside(w: SignedWebhook, reason: SetAsideReason, problem: Record<string, unknown>): Promise<WebhookReceipt> {
  const kept = await quarantineWebhook(w.ctx.db, { eventId: w.eventId, reason, rawBody: w.incoming.rawBody, signature: w.signature, body: w.body, problem });
  const event = typeof (w.body as { event?: unknown } | null)?.event === 'string' ? (w.body as { event: string }).event : null;
  logger.warn({ eventId: w.eventId, event, reason, problem, duplicate: !kept }, 'signed webhook set aside, not applied (GET /ops/webhooks/quarantine)');
  return { eventId: w.eventId, event, duplicate: !kept, actedOn: false, setAside: reason };
}

function parseJson(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw new AppError(400, 'malformed_json', 'the webhook body is not JSON');
  }
}
