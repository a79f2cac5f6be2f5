/** Offline-ledger lines of their own in the ledger (issue 36, step 2), written where each line is:
 * a refund made outside the app after the money left (a clawback: the vendor owes it back), a Route
 * split's reversal (owed again), a clawback returned after a paid settlement line netted it (ops'
 * adjustment, with the actor and reason of the cancel that took the clawback back); and a clawback
 * ops took back before any paid line netted it (an adjustment that nets it to nothing). Each is paid
 * by a settlement run (settlementLines.ts). The model's rules (model.ts), in SQL. Idempotent. */
import type { Tx } from '../db/pool';

type Queryable = Pick<Tx, 'query'>;

export async function oweOfflineLines(tx: Queryable, ledgerIds: readonly (number | string)[]): Promise<void> {
  if (ledgerIds.length === 0) return;
  await tx.query(
    `INSERT INTO ledger_obligations (source, vendor_id, employer_id, order_id, cause, amount_paise, rail, reason, actor)
     SELECT 'line:' || l.id, l.vendor_id, l.employer_id, COALESCE(l.clawback_order_id, r.order_id),
            CASE l.route WHEN 'refund_clawback' THEN 'clawback' WHEN 'transfer_reversal' THEN 'reversal' ELSE 'adjustment' END,
            l.amount_paise, 'settlement_run',
            CASE WHEN l.route = 'clawback_returned' THEN 'a clawback returned after a paid settlement netted it: ' || COALESCE(c.taken_back_reason, '') END,
            CASE WHEN l.route = 'clawback_returned' THEN COALESCE(c.taken_back_by, 'unknown') END
       FROM offline_ledger l
       LEFT JOIN transfer_reversals r ON r.id = l.transfer_reversal_id
       LEFT JOIN offline_ledger c ON c.id = l.returns_clawback_id
      WHERE l.id = ANY($1::bigint[]) AND l.order_id IS NULL AND l.amount_paise <> 0
        AND l.route IN ('refund_clawback', 'transfer_reversal', 'clawback_returned')
     ON CONFLICT (source) DO NOTHING`,
    [ledgerIds.map(String)],
  );
}

/** Clawback lines the rails deleted before any settlement line paid them (the transfer they were
 * charged against paid nothing): their obligations go with them. One in a line is never deleted. */
export async function forgetOfflineLines(tx: Queryable, ledgerIds: readonly (number | string)[]): Promise<void> {
  if (ledgerIds.length === 0) return;
  await tx.query(
    `DELETE FROM ledger_obligations o WHERE o.source = ANY($1::text[])
        AND NOT EXISTS (SELECT 1 FROM ledger_discharge_items i WHERE i.obligation_id = o.id)`,
    [ledgerIds.map((id) => `line:${id}`)]);
}

/** Ops took a clawback back (their cancel): unless a paid settlement line netted it (then it is
 * returned on a line of its own), an adjustment with their name and reason nets it to nothing. */
export async function netTakenBackClawback(tx: Queryable, ledgerId: number | string): Promise<void> {
  await tx.query(
    `WITH clawback AS (
       SELECT o.id, o.vendor_id, o.employer_id, o.order_id, o.amount_paise, l.taken_back_by, l.taken_back_reason
         FROM offline_ledger l JOIN ledger_obligations o ON o.source = 'line:' || l.id
        WHERE l.id = $1 AND l.taken_back_at IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM ledger_discharge_items i WHERE i.obligation_id = o.id AND i.active)),
     adjustment AS (
       INSERT INTO ledger_obligations (source, vendor_id, employer_id, order_id, cause, amount_paise, rail, reason, actor)
       SELECT 'taken-back:' || $1, vendor_id, employer_id, order_id, 'adjustment', -amount_paise, 'settlement_run', taken_back_reason, taken_back_by FROM clawback
       ON CONFLICT (source) DO NOTHING RETURNING id, vendor_id, amount_paise),
     paying AS (
       INSERT INTO ledger_discharges (vendor_id, kind, instrument, amount_paise, state)
       SELECT vendor_id, 'adjustment', 'taken-back:' || $1, 0, 'paid' FROM adjustment RETURNING id)
     INSERT INTO ledger_discharge_items (discharge_id, obligation_id, amount_paise)
     SELECT paying.id, clawback.id, clawback.amount_paise FROM paying, clawback
     UNION ALL SELECT paying.id, adjustment.id, adjustment.amount_paise FROM paying, adjustment`,
    [String(ledgerId)],
  );
}
