/** Exceptions raised by a gateway event rather than by a recon run: a disputed payment, a capture
 * that does not match its order. They are written in the transaction that handles the event,
 * `raised_by = 'event'`, so a recon run (which never finds them) does not clear them; the event flow
 * or finance (resolve) closes them. `first_run_id`/`last_run_id` name the event. */
import type { Db, Tx } from '../db/pool';
import type { ExceptionDraft } from './model';

/** Records (or updates in place) the exception; a resolved one is never touched. Returns its id. */
export async function raiseEventException(q: Db | Tx, d: ExceptionDraft, eventRef: string): Promise<number | null> {
  const { rows } = await q.query<{ id: number }>(
    `INSERT INTO recon_exceptions AS e (key, class, reason, severity, next_action, day, entity_id, settlement_id, order_id, bank_line_id,
       expected_paise, actual_paise, details, first_run_id, last_run_id, raised_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $14, 'event')
     ON CONFLICT (key) DO UPDATE SET class = EXCLUDED.class, severity = EXCLUDED.severity, next_action = EXCLUDED.next_action,
       order_id = COALESCE(EXCLUDED.order_id, e.order_id), expected_paise = EXCLUDED.expected_paise, actual_paise = EXCLUDED.actual_paise,
       details = EXCLUDED.details, last_run_id = EXCLUDED.last_run_id, updated_at = now()
     WHERE e.status <> 'resolved'
       AND (e.class, e.severity, e.next_action, e.expected_paise, e.actual_paise, e.details)
           IS DISTINCT FROM (EXCLUDED.class, EXCLUDED.severity, EXCLUDED.next_action, EXCLUDED.expected_paise, EXCLUDED.actual_paise, EXCLUDED.details)
     RETURNING id`,
    [d.key, d.class, d.reason, d.severity, d.nextAction, d.day, d.entityId, d.settlementId, d.orderId, d.bankLineId,
      d.expectedPaise, d.actualPaise, JSON.stringify(d.details), eventRef],
  );
  return rows[0]?.id ?? null;
}

/** Resolves an event exception because a later event settled the question (audited like a person's
 * resolution, with the event as the actor). Resolving twice changes nothing. */
export async function resolveEventException(tx: Tx, key: string, actor: string, note: string): Promise<boolean> {
  const { rows } = await tx.query<{ id: number }>(
    `UPDATE recon_exceptions SET status = 'resolved', resolved_at = now(), resolved_by = $2, resolution_note = $3, updated_at = now()
      WHERE key = $1 AND status <> 'resolved' RETURNING id`,
    [key, actor, note],
  );
  const resolved = rows[0];
  if (!resolved) return false;
  await tx.query(`INSERT INTO recon_exception_actions (exception_id, actor, action, note) VALUES ($1, $2, 'resolve', $3)`, [resolved.id, actor, note]);
  return true;
}
