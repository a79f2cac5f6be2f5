/** Signed webhooks set aside instead of applied (migration 111): a body our schema refuses, or an
 * event outside the replay window. Each is answered 2xx (Razorpay retries a non-2xx for 24 h and
 * then disables the endpoint, which would also stop every payment.captured), kept with its exact
 * bytes and signature, counted (`payouts_webhook_set_aside_total`) and listed for ops
 * (GET /ops/webhooks/quarantine). Nothing is ever applied from here: the missed-webhook sweep finds
 * the captures, and transfers and settlements are fetched from Razorpay, whatever the webhook said. */
import { AppError } from '../appError';
import type { Db } from '../db/pool';
import { setAsideTarget, type SetAsideTarget } from './setAsideTarget';
import { setAsideWords } from './setAsideWords';
import { SET_ASIDE_REASONS, type SetAsideReason } from './setAsideReason';

export { SET_ASIDE_REASONS, type SetAsideReason };

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
  /** The reason and problem in words. */
  why: string;
  receivedAt: string;
  eventCreatedAt: string | null;
  problem: Record<string, unknown>;
  /** The body as Razorpay sent it (UTF-8); `signature` is the header it came with. */
  body: string;
  signature: string;
  /** Whether what the event would have done has happened since, by the sweeps and fetches. */
  recovery: Recovery;
  /** Null while open. */
  acknowledged: { at: string; by: string; note: string } | null;
}

export type QuarantineShow = 'open' | 'acknowledged' | 'all';
export interface QuarantineFilter { reason?: SetAsideReason; show?: QuarantineShow; beforeId?: number; limit: number }

interface QuarantineRow {
  id: string; event_id: string; event_type: string | null; reason: SetAsideReason; received_at: Date; event_created_at: Date | null;
  problem: Record<string, unknown>; raw_body: Buffer; signature: string; acknowledged_at: Date | null; acknowledged_by: string | null; acknowledgement: string | null;
}

const parsedBody = (raw: Buffer): unknown => {
  try { return JSON.parse(raw.toString('utf8')); } catch { return null; }
};

/** Newest first; `beforeId` pages on from the last row of the previous page; `show` open (not yet
 * acknowledged), acknowledged, or all (the default). */
export async function quarantinedWebhooks(db: Pick<Db, 'query'>, filter: QuarantineFilter): Promise<QuarantinedWebhookView[]> {
  const show = filter.show ?? 'all';
  const { rows } = await db.query<QuarantineRow>(
    `SELECT id, event_id, event_type, reason, received_at, event_created_at, problem, raw_body, signature, acknowledged_at, acknowledged_by, acknowledgement
       FROM quarantined_webhooks
      WHERE ($1::text IS NULL OR reason = $1) AND ($2::bigint IS NULL OR id < $2)
        AND ($4 = 'all' OR ($4 = 'open') = (acknowledged_at IS NULL))
      ORDER BY id DESC LIMIT $3`,
    [filter.reason ?? null, filter.beforeId ?? null, filter.limit, show],
  );
  return Promise.all(rows.map(async (r) => ({
    id: Number(r.id), eventId: r.event_id, event: r.event_type, reason: r.reason, why: setAsideWords(r.reason, r.problem), receivedAt: r.received_at.toISOString(),
    eventCreatedAt: r.event_created_at?.toISOString() ?? null, problem: r.problem, body: r.raw_body.toString('utf8'), signature: r.signature,
    recovery: await recoveryOf(db, setAsideTarget(r.event_type, parsedBody(r.raw_body))),
    acknowledged: r.acknowledged_at ? { at: r.acknowledged_at.toISOString(), by: r.acknowledged_by!, note: r.acknowledgement! } : null,
  })));
}

export interface QuarantineCounts { total: number; open: number; openByReason: Record<SetAsideReason, number> }

/** How many are set aside, and how many of them no one has acknowledged yet, by reason. */
export async function quarantineCounts(db: Pick<Db, 'query'>): Promise<QuarantineCounts> {
  const { rows } = await db.query<{ reason: SetAsideReason; total: number; open: number }>(
    `SELECT reason, count(*)::int AS total, count(*) FILTER (WHERE acknowledged_at IS NULL)::int AS open FROM quarantined_webhooks GROUP BY reason`);
  const openByReason = Object.fromEntries(SET_ASIDE_REASONS.map((r) => [r, 0])) as Record<SetAsideReason, number>;
  for (const r of rows) openByReason[r.reason] = r.open;
  return { total: rows.reduce((n, r) => n + r.total, 0), open: rows.reduce((n, r) => n + r.open, 0), openByReason };
}

/** Ops have read it: who, and what they concluded. `already` when someone acknowledged it before
 * (their note stands); null for no such row. Applies nothing. */
export async function acknowledgeQuarantined(db: Pick<Db, 'query'>, id: number, by: { actor: string; note: string }): Promise<{ eventId: string; already: boolean } | null> {
  const { rows } = await db.query<{ event_id: string; fresh: boolean }>(
    `WITH target AS (SELECT id, event_id, acknowledged_at FROM quarantined_webhooks WHERE id = $1 FOR UPDATE),
          done AS (UPDATE quarantined_webhooks q SET acknowledged_at = now(), acknowledged_by = $2, acknowledgement = $3
                     FROM target t WHERE q.id = t.id AND t.acknowledged_at IS NULL RETURNING q.id)
     SELECT t.event_id, EXISTS (SELECT 1 FROM done) AS fresh FROM target t`,
    [id, by.actor, by.note],
  );
  return rows[0] ? { eventId: rows[0].event_id, already: !rows[0].fresh } : null;
}

/** recovered: our rows now hold what the event announced; pending: not yet (the named sweep or
 * fetch recovers it); not_fetched: the app does not fetch this kind (disputes); unreadable: the body
 * names no object we can read, or the event is not one the app acts on. */
export interface Recovery { state: 'recovered' | 'pending' | 'not_fetched' | 'unreadable'; words: string }

async function recoveryOf(db: Pick<Db, 'query'>, target: SetAsideTarget | null): Promise<Recovery> {
  if (!target) return { state: 'unreadable', words: 'Nothing to recover from here: the body names no payment, refund, transfer or settlement the app acts on.' };
  switch (target.kind) {
    case 'payment': {
      const { rows } = await db.query<{ status: string; order_id: string | null; topup_id: string | null }>('SELECT status, order_id, topup_id FROM payments WHERE id = $1', [target.id]);
      const p = rows[0];
      const of = p ? (p.order_id ? ` (order ${p.order_id})` : p.topup_id ? ` (top-up ${p.topup_id})` : ' (no order of ours)') : '';
      const done = p && (target.announced === 'captured' ? ['captured', 'refunded'].includes(p.status) : p.status !== 'created' && (target.announced !== 'failed' || p.status !== 'authorized'));
      return done
        ? { state: 'recovered', words: `Recovered: payment ${target.id} is recorded ${p.status}${of}.` }
        : { state: 'pending', words: `Not recovered yet: payment ${target.id} is ${p ? `recorded ${p.status}${of}` : 'not recorded'}. The missed-webhook sweep fetches the payments of pending orders and top-ups from Razorpay.` };
    }
    case 'refund': {
      const { rows } = await db.query<{ status: string }>(
        'SELECT status FROM refunds WHERE gateway_refund_id = $1 UNION ALL SELECT status FROM outside_refunds WHERE id = $1', [target.id]);
      const status = rows[0]?.status;
      const done = status !== undefined && (target.announced === 'created' ? status !== 'requested' : status === target.announced);
      return done
        ? { state: 'recovered', words: `Recovered: refund ${target.id} is recorded ${status}.` }
        : { state: 'pending', words: `Not recovered yet: refund ${target.id} is ${status ? `recorded ${status}` : 'not recorded'}. The refund sweep retries our own requests by their receipt; recon finds a refund made outside the app.` };
    }
    case 'transfer': {
      const { rows } = await db.query<{ payout: string | null; split: string | null; reversed: boolean }>(
        `SELECT (SELECT status FROM payouts WHERE provider_transfer_id = $1 LIMIT 1) AS payout,
                (SELECT status FROM split_transfers WHERE provider_transfer_id = $1) AS split,
                EXISTS (SELECT 1 FROM transfer_reversals WHERE transfer_id = $1) AS reversed`, [target.id]);
      const { payout, split, reversed } = rows[0]!;
      const known = payout ? `its payout is ${payout}` : split ? `its split is ${split}` : 'no payout or split of ours names it yet';
      const done = target.announced === 'reversed' ? reversed
        : target.announced === 'processed' ? payout === 'settled' || split === 'processed'
          : (payout !== null && !['processing', 'accepted'].includes(payout)) || split === 'failed';
      return done
        ? { state: 'recovered', words: `Recovered: transfer ${target.id} ${target.announced === 'reversed' ? 'has its reversal recorded' : `is known ${target.announced}`}; ${known}.` }
        : { state: 'pending', words: `Not recovered yet: ${known}${target.announced === 'reversed' && !reversed ? ', and no reversal of it is recorded' : ''}. The payout run, the transfer resolver and the split sweep fetch the transfer from Razorpay.` };
    }
    case 'settlement': {
      const { rows } = await db.query('SELECT 1 FROM settlements WHERE id = $1', [target.id]);
      return rows.length
        ? { state: 'recovered', words: `Recovered: settlement ${target.id} is recorded (recon fetched it).` }
        : { state: 'pending', words: `Not recovered yet: settlement ${target.id} is not recorded. Recon fetches the day's settlements and their line items; run recon for its day.` };
    }
    case 'dispute':
      return { state: 'not_fetched', words: `The app does not fetch disputes: read dispute ${target.id} on the Razorpay Dashboard.` };
  }
}

/** What recovers an event's effect: nothing is applied from the quarantine itself. */
export const QUARANTINE_RECOVERY = 'Nothing here is applied. A capture of a pending order or top-up is found by the missed-webhook sweep (it fetches their payments from Razorpay); a transfer\'s outcome by the payout run and the transfer resolver (they fetch the transfer); a settlement by recon (it fetches settlements and their line items); a refund we requested by the sweep\'s retry with its receipt, and one made outside the app by recon (refund-outside-app or refund-not-in-app). A dispute is not fetched: read it on the Razorpay Dashboard. A schema_refused event Razorpay changed needs our schema fixed; its later events then apply.';

/** The acknowledgement, audited; 404 for no such row. */
export async function acknowledgeOrRefuse(db: Pick<Db, 'query'>, id: number, by: { actor: string; note: string }): Promise<{ eventId: string; already: boolean }> {
  const done = await acknowledgeQuarantined(db, id, by);
  if (!done) throw new AppError(404, 'quarantined_webhook_not_found', `no set-aside webhook with id ${id}`);
  return done;
}

