/** Payout batches as the ops surfaces show them (the API, the console, the CLI): the pair, the window,
 * the batch's own payout and every order inside with its amount and status. */
import { isBatchKey } from '../contracts/payoutBatch';
import { z } from 'zod';
import type { Db } from '../db/pool';
import { isoDateSchema } from '../domain/schemas';

export interface BatchOrder { orderId: string; amountPaise: number; status: string; joinedAt: string }

export interface BatchView {
  batchId: string;
  employerId: string;
  vendorId: string;
  schedule: string;
  windowStart: string;
  cutoffAt: string;
  /** open: orders may still join; closed: the sum is fixed. */
  status: 'open' | 'closed';
  closedAt: string | null;
  orderCount: number;
  totalPaise: number;
  /** The batch's own payout (the one transfer), once closed with orders. */
  payout: { id: string; status: string; attempts: number; providerTransferId: string | null; lastCode: string | null } | null;
}

interface BatchRow {
  id: string; employer_id: string; vendor_id: string; schedule: string; window_start: Date; cutoff_at: Date; status: 'open' | 'closed';
  closed_at: Date | null; order_count: number; total_paise: number | null;
  payout_id: string | null; payout_status: string | null; attempts: number | null; provider_transfer_id: string | null; last_code: string | null;
}

const BATCH_SQL = `
SELECT b.id, b.employer_id, b.vendor_id, b.schedule, b.window_start, b.cutoff_at, b.status, b.closed_at,
       (SELECT count(*)::int FROM payout_batch_orders m WHERE m.batch_id = b.id) AS order_count,
       (SELECT sum(m.amount_paise) FROM payout_batch_orders m WHERE m.batch_id = b.id) AS total_paise,
       p.id AS payout_id, p.status AS payout_status, p.attempts, p.provider_transfer_id, p.last_code
  FROM payout_batches b LEFT JOIN payouts p ON p.batch_id = b.id`;

function toBatchView(r: BatchRow): BatchView {
  return {
    batchId: r.id, employerId: r.employer_id, vendorId: r.vendor_id, schedule: r.schedule,
    windowStart: r.window_start.toISOString(), cutoffAt: r.cutoff_at.toISOString(), status: r.status,
    closedAt: r.closed_at ? r.closed_at.toISOString() : null, orderCount: r.order_count, totalPaise: Number(r.total_paise ?? 0),
    payout: r.payout_id ? { id: r.payout_id, status: r.payout_status!, attempts: r.attempts!, providerTransferId: r.provider_transfer_id, lastCode: r.last_code } : null,
  };
}

/** The batch a payout key names (a batch id) or belongs to (a member order), with its orders. */
export async function batchOfPayoutKey(db: Pick<Db, 'query'>, key: string): Promise<(BatchView & { orders: BatchOrder[] }) | null> {
  const where = isBatchKey(key) ? 'b.id = $1' : 'b.id = (SELECT batch_id FROM payout_batch_orders WHERE order_id = $1)';
  const { rows } = await db.query<BatchRow>(`${BATCH_SQL} WHERE ${where}`, [key]);
  if (!rows[0]) return null;
  const orders = await db.query<{ order_id: string; amount_paise: number; status: string | null; joined_at: Date }>(
    `SELECT m.order_id, m.amount_paise, p.status, m.joined_at FROM payout_batch_orders m LEFT JOIN payouts p ON p.order_id = m.order_id
      WHERE m.batch_id = $1 ORDER BY m.joined_at, m.order_id`, [rows[0].id]);
  return {
    ...toBatchView(rows[0]),
    orders: orders.rows.map((o) => ({ orderId: o.order_id, amountPaise: Number(o.amount_paise), status: o.status ?? 'missing', joinedAt: o.joined_at.toISOString() })),
  };
}

export const batchIdSchema = z.string().regex(/^batch_[0-9a-f]{30}$/, 'a batch id: batch_ and 30 hex digits');

export const batchFilterSchema = z.object({
  status: z.enum(['open', 'closed']).optional(),
  employerId: z.string().min(1).max(100).optional(),
  vendorId: z.string().min(1).max(100).optional(),
  /** Batches whose window overlaps this IST day. */
  day: isoDateSchema.optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
}).strict();
export type BatchFilter = z.input<typeof batchFilterSchema> & { limit: number };

const FILTER_SQL = `($1::text IS NULL OR b.status = $1) AND ($2::text IS NULL OR b.employer_id = $2) AND ($3::text IS NULL OR b.vendor_id = $3)
  AND ($4::date IS NULL OR (b.window_start < (($4::date + 1)::timestamp AT TIME ZONE 'Asia/Kolkata') AND b.cutoff_at > ($4::date::timestamp AT TIME ZONE 'Asia/Kolkata')))`;
const filterParams = (f: BatchFilter) => [f.status ?? null, f.employerId ?? null, f.vendorId ?? null, f.day ?? null];

/** Batches newest cutoff first. */
export async function listBatches(db: Pick<Db, 'query'>, filter: BatchFilter): Promise<BatchView[]> {
  const { rows } = await db.query<BatchRow>(`${BATCH_SQL} WHERE ${FILTER_SQL} ORDER BY b.cutoff_at DESC, b.id LIMIT $5`, [...filterParams(filter), filter.limit]);
  return rows.map(toBatchView);
}

export interface BatchTotals { batches: number; open: number; orders: number; totalPaise: number }

/** Every batch the filter matches, past any page: how many, how many open, their orders and sum. */
export async function batchTotals(db: Pick<Db, 'query'>, filter: BatchFilter): Promise<BatchTotals> {
  const { rows } = await db.query<{ batches: number; open: number; orders: number; total_paise: string | null }>(
    `SELECT count(DISTINCT b.id)::int AS batches, count(DISTINCT b.id) FILTER (WHERE b.status = 'open')::int AS open,
            count(m.order_id)::int AS orders, sum(m.amount_paise) AS total_paise
       FROM payout_batches b LEFT JOIN payout_batch_orders m ON m.batch_id = b.id WHERE ${FILTER_SQL}`, filterParams(filter));
  const r = rows[0]!;
  return { batches: r.batches, open: r.open, orders: r.orders, totalPaise: Number(r.total_paise ?? 0) };
}
