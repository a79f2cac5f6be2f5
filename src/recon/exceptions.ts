/** Use cases on recon exceptions for finance: list with filters, resolve with a note (audited). */
import { z } from 'zod';
import { inTransaction, type Db } from '../db/pool';
import { isoDateSchema } from '../domain/schemas';
import { CLASSES, REASONS } from './reasons';


export const exceptionFilterSchema = z.object({
  status: z.enum(['open', 'resolved', 'cleared']).optional(),
  class: z.enum(CLASSES).optional(),
  reason: z.enum(REASONS).optional(),
  from: isoDateSchema.optional(),
  to: isoDateSchema.optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  /** Rows with an id greater than this (keyset paging). */
  after: z.coerce.number().int().min(0).default(0),
});
export type ExceptionFilter = z.infer<typeof exceptionFilterSchema>;

export interface ReconExceptionView {
  id: number; key: string; class: string; reason: string; severity: string; nextAction: string; status: string; day: string;
  entityId: string | null; settlementId: string | null; orderId: string | null; bankLineId: number | null;
  expectedPaise: number | null; actualPaise: number | null; details: unknown;
  resolvedAt: string | null; resolvedBy: string | null; resolutionNote: string | null;
}

const SELECT = `SELECT id, key, class, reason, severity, next_action, status, to_char(day, 'YYYY-MM-DD') AS day, entity_id, settlement_id,
  order_id, bank_line_id, expected_paise, actual_paise, details, resolved_at, resolved_by, resolution_note FROM recon_exceptions`;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function toView(r: any): ReconExceptionView {
  return {
    id: r.id, key: r.key, class: r.class, reason: r.reason, severity: r.severity, nextAction: r.next_action, status: r.status, day: r.day,
    entityId: r.entity_id, settlementId: r.settlement_id, orderId: r.order_id, bankLineId: r.bank_line_id,
    expectedPaise: r.expected_paise, actualPaise: r.actual_paise, details: r.details,
    resolvedAt: r.resolved_at ? new Date(r.resolved_at).toISOString() : null, resolvedBy: r.resolved_by, resolutionNote: r.resolution_note,
  };
}

export async function listExceptions(db: Db, filter: ExceptionFilter): Promise<ReconExceptionView[]> {
  const { rows } = await db.query(
    `${SELECT} WHERE ($1::text IS NULL OR status = $1) AND ($2::text IS NULL OR class = $2) AND ($3::text IS NULL OR reason = $3)
       AND ($4::date IS NULL OR day >= $4) AND ($5::date IS NULL OR day <= $5) AND id > $6
     ORDER BY id LIMIT $7`,
    [filter.status ?? null, filter.class ?? null, filter.reason ?? null, filter.from ?? null, filter.to ?? null, filter.after, filter.limit],
  );
  return rows.map(toView);
}

export type ResolveResult = { type: 'resolved'; exception: ReconExceptionView } | { type: 'not_found' } | { type: 'already_resolved'; exception: ReconExceptionView };

export async function resolveException(db: Db, id: number, actor: string, note: string): Promise<ResolveResult> {
  return inTransaction(db, async (tx) => {
    const updated = await tx.query(
      `UPDATE recon_exceptions SET status = 'resolved', resolved_at = now(), resolved_by = $2, resolution_note = $3, updated_at = now()
       WHERE id = $1 AND status <> 'resolved' RETURNING id`,
      [id, actor, note],
    );
    const current = (await tx.query(`${SELECT} WHERE id = $1`, [id])).rows[0];
    if (!current) return { type: 'not_found' };
    if (updated.rowCount === 0) return { type: 'already_resolved', exception: toView(current) };
    await tx.query(`INSERT INTO recon_exception_actions (exception_id, actor, action, note) VALUES ($1, $2, 'resolve', $3)`, [id, actor, note]);
    return { type: 'resolved', exception: toView(current) };
  });
}
