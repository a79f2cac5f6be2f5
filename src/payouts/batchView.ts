/** Payout batches as the ops surfaces show them (the API, the console, the CLI): the pair, the window,
 * the batch's own payout and every order inside with its amount and status. */
import { isBatchKey } from '../contracts/payoutBatch';
import type { Db } from '../db/pool';

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

export interface BatchFilter { status?: 'open' | 'closed'; vendorId?: string; limit: number }

/** Batches newest cutoff first. */
export async function listBatches(db: Pick<Db, 'query'>, filter: BatchFilter): Promise<BatchView[]> {
  const { rows } = await db.query<BatchRow>(
    `${BATCH_SQL} WHERE ($1::text IS NULL OR b.status = $1) AND ($2::text IS NULL OR b.vendor_id = $2) ORDER BY b.cutoff_at DESC, b.id LIMIT $3`,
    [filter.status ?? null, filter.vendorId ?? null, filter.limit]);
  return rows.map(toBatchView);
}
