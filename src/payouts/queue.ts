/** The human queue as ops see it: parked and review payouts with their amount, why they wait (code
 * and words), how long, the last attempt and the Web UI link; oldest first, paginated by cursor. */
import { z } from 'zod';
import { payoutWorkflowId } from '../contracts/payout';
import type { Db } from '../db/pool';
import { keysetCursorSchema } from '../db/keysetCursor';
import { formatRupees } from '../domain/money';
import { explainPayoutCode, type DecidedBy } from './reasons';

const AGE = /^(\d{1,6})(m|h|d)$/;
const SECONDS = { m: 60, h: 3_600, d: 86_400 } as const;

export const queueFilterSchema = z.object({
  status: z.enum(['parked', 'review']).optional(),
  vendorId: z.string().trim().min(1).max(64).optional(),
  /** The provider's (or our) code, e.g. BAD_REQUEST_TRANSFER_NOT_ALLOWED_TO_SUSPENDED_LINKED_ACCOUNT. */
  reason: z.string().trim().regex(/^[A-Z0-9_]{3,100}$/, 'a code such as BAD_REQUEST_TRANSFER_INVALID_ACCOUNT_ID').optional(),
  /** Waiting longer than this: 30m, 4h, 2d. */
  olderThan: z.string().regex(AGE, 'a duration such as 30m, 4h or 2d').transform((v) => {
    const [, n, unit] = AGE.exec(v)!;
    return Number(n) * SECONDS[unit as keyof typeof SECONDS];
  }).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  /** The `next` of the previous page. */
  after: keysetCursorSchema.optional(),
}).strict();
export type QueueFilter = z.infer<typeof queueFilterSchema>;

export interface QueueItem {
  orderId: string;
  payoutId: string;
  vendorId: string;
  linkedAccountId: string;
  status: 'parked' | 'review';
  amount: { paise: number; rupees: string };
  reason: { code: string | null; words: string; nextStep: string; decidedBy: DecidedBy };
  waitingSince: string;
  ageSeconds: number;
  attempts: number;
  lastAttempt: { outcome: string; providerCode: string | null; at: string } | null;
  workflowId: string;
  webUiUrl: string;
}

interface Row {
  order_id: string; id: string; vendor_id: string; linked_account_id: string; status: 'parked' | 'review'; amount_paise: number;
  last_code: string | null; updated_at: Date; age_seconds: number; attempts: number; cursor: string;
  last_outcome: string | null; last_provider_code: string | null; last_at: Date | null;
}

export async function listHumanQueue(db: Pick<Db, 'query'>, filter: QueueFilter, links: { temporalUiUrl: string; namespace: string }): Promise<{ items: QueueItem[]; next: string | null }> {
  const { rows } = await db.query<Row>(
    `SELECT p.subject_id AS order_id, p.id, p.vendor_id, p.linked_account_id, p.status, p.amount_paise, p.last_code, p.updated_at, p.attempts,
            floor(extract(epoch FROM now() - p.updated_at))::int8 AS age_seconds,
            to_char(p.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') || '|' || p.id AS cursor,
            a.outcome AS last_outcome, a.provider_code AS last_provider_code, a.created_at AS last_at
     FROM payouts p
     LEFT JOIN LATERAL (SELECT outcome, provider_code, created_at FROM payout_attempts WHERE payout_id = p.id ORDER BY id DESC LIMIT 1) a ON true
     WHERE p.status = ANY($1)
       AND ($2::text IS NULL OR p.vendor_id = $2)
       AND ($3::text IS NULL OR p.last_code = $3)
       AND ($4::int8 IS NULL OR p.updated_at < now() - make_interval(secs => $4))
       AND ($5::timestamptz IS NULL OR (p.updated_at, p.id) > ($5::timestamptz, $6::uuid))
     ORDER BY p.updated_at, p.id
     LIMIT $7`,
    [filter.status ? [filter.status] : ['parked', 'review'], filter.vendorId ?? null, filter.reason ?? null, filter.olderThan ?? null, filter.after?.at ?? null, filter.after?.id ?? null, filter.limit],
  );
  const items = rows.map((r): QueueItem => {
    const workflowId = payoutWorkflowId(r.order_id);
    return {
      orderId: r.order_id,
      payoutId: r.id,
      vendorId: r.vendor_id,
      linkedAccountId: r.linked_account_id,
      status: r.status,
      amount: { paise: r.amount_paise, rupees: formatRupees(r.amount_paise) },
      reason: { code: r.last_code, ...explainPayoutCode(r.last_code, r.status) },
      waitingSince: r.updated_at.toISOString(),
      ageSeconds: r.age_seconds,
      attempts: r.attempts,
      lastAttempt: r.last_outcome ? { outcome: r.last_outcome, providerCode: r.last_provider_code, at: r.last_at!.toISOString() } : null,
      workflowId,
      webUiUrl: `${links.temporalUiUrl.replace(/\/$/, '')}/namespaces/${encodeURIComponent(links.namespace)}/workflows/${encodeURIComponent(workflowId)}`,
    };
  });
  return { items, next: rows.length === filter.limit ? rows[rows.length - 1]!.cursor : null };
}

export interface QueueTotals { payouts: number; parked: number; review: number; amount: { paise: number; rupees: string } }

/** Everything waiting for ops, past any page: how many payouts, by status, and their sum. */
export async function humanQueueTotals(db: Pick<Db, 'query'>): Promise<QueueTotals> {
  const { rows } = await db.query<{ parked: number; review: number; paise: string | null }>(
    `SELECT count(*) FILTER (WHERE status = 'parked')::int AS parked, count(*) FILTER (WHERE status = 'review')::int AS review, sum(amount_paise) AS paise
       FROM payouts WHERE status IN ('parked', 'review')`);
  const r = rows[0]!;
  const paise = Number(r.paise ?? 0);
  return { payouts: r.parked + r.review, parked: r.parked, review: r.review, amount: { paise, rupees: formatRupees(paise) } };
}
