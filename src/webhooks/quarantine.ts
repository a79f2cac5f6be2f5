/** Signed webhooks set aside instead of applied (migration 111): a body our schema refuses, or an
 * event outside the replay window. Each is answered 2xx (Razorpay retries a non-2xx for 24 h and
 * then disables the endpoint, which would also stop every payment.captured), kept with its exact
 * bytes and signature, counted (`payouts_webhook_set_aside_total`) and listed for ops
 * (GET /ops/webhooks/quarantine). Nothing is ever applied from here: the missed-webhook sweep finds
 * the captures, and transfers and settlements are fetched from Razorpay, whatever the webhook said. */
import type { Db } from '../db/pool';

/** Why a signed event was not applied: our schema refused it, or it is outside the replay window. */
export type SetAsideReason = 'schema_refused' | 'too_old' | 'from_future';
export const SET_ASIDE_REASONS: readonly [SetAsideReason, ...SetAsideReason[]] = ['schema_refused', 'too_old', 'from_future'];

export interface SetAsideWebhook {
  eventId: string;
  reason: SetAsideReason;
  rawBody: Buffer;
  signature: string;
  /** The parsed body, when it was JSON: its `event` and `created_at` are kept when readable. */
  body: unknown;
  problem: Record<string, unknown>;
}

/** Records it once per event id; `false` when that id was already set aside (a redelivery). */
export async function quarantineWebhook(db: Pick<Db, 'query'>, w: SetAsideWebhook): Promise<boolean> {
  const fields = typeof w.body === 'object' && w.body !== null ? (w.body as Record<string, unknown>) : {};
  const eventType = typeof fields.event === 'string' ? fields.event.slice(0, 200) : null;
  const createdAt = typeof fields.created_at === 'number' && Number.isSafeInteger(fields.created_at) && fields.created_at >= 0 ? new Date(fields.created_at * 1000) : null;
  const { rowCount } = await db.query(
    `INSERT INTO quarantined_webhooks (event_id, event_type, reason, raw_body, signature, event_created_at, problem)
     VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (event_id) DO NOTHING`,
    [w.eventId, eventType, w.reason, w.rawBody, w.signature, createdAt && Number.isFinite(createdAt.getTime()) ? createdAt : null, JSON.stringify(w.problem)],
  );
  return rowCount === 1;
}

export interface QuarantinedWebhookView {
  id: number;
  eventId: string;
  event: string | null;
  reason: SetAsideReason;
  receivedAt: string;
  eventCreatedAt: string | null;
  problem: Record<string, unknown>;
  /** The body as Razorpay sent it (UTF-8); `signature` is the header it came with. */
  body: string;
  signature: string;
}

/** Newest first; `beforeId` pages on from the last row of the previous page. */
export async function quarantinedWebhooks(db: Pick<Db, 'query'>, filter: { reason?: SetAsideReason; beforeId?: number; limit: number }): Promise<QuarantinedWebhookView[]> {
  const { rows } = await db.query<{ id: string; event_id: string; event_type: string | null; reason: SetAsideReason; received_at: Date; event_created_at: Date | null; problem: Record<string, unknown>; raw_body: Buffer; signature: string }>(
    `SELECT id, event_id, event_type, reason, received_at, event_created_at, problem, raw_body, signature
       FROM quarantined_webhooks
      WHERE ($1::text IS NULL OR reason = $1) AND ($2::bigint IS NULL OR id < $2)
      ORDER BY id DESC LIMIT $3`,
    [filter.reason ?? null, filter.beforeId ?? null, filter.limit],
  );
  return rows.map((r) => ({
    id: Number(r.id), eventId: r.event_id, event: r.event_type, reason: r.reason, receivedAt: r.received_at.toISOString(),
    eventCreatedAt: r.event_created_at?.toISOString() ?? null, problem: r.problem, body: r.raw_body.toString('utf8'), signature: r.signature,
  }));
}
