/** One audit trail across capabilities, read-only: payout decisions and the kill switch
 * (review_actions), recon resolutions, bank statement imports, cash confirmations, cancelled and
 * expired orders, API key changes, vendors' bank details (masked), and settlement runs and their
 * lines' decisions, employees registered with their employer, set-aside webhooks acknowledged, each with the principal that
 * did it (`key:<name>`, and the person when X-Actor said). */
import { z } from 'zod';
import type { Db } from '../db/pool';
import { isoDateSchema } from '../domain/schemas';

export const auditFilterSchema = z.object({
  from: isoDateSchema.optional(),
  to: isoDateSchema.optional(),
  /** Matches the actor text: a key name (`ops-asha`) or a person (`Asha`). */
  actor: z.string().trim().min(1).max(100).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
}).strict();
export type AuditFilter = z.infer<typeof auditFilterSchema>;

export interface AuditEntry {
  at: string;
  actor: string;
  kind: 'payout_decision' | 'kill_switch' | 'recon_resolution' | 'bank_statement_import' | 'cash_confirmation' | 'order_status' | 'api_key' | 'bank_details' | 'settlement' | 'employee' | 'webhook_quarantine';
  action: string;
  subject: string | null;
  reason: string | null;
  reference: string | null;
}

/** Newest first; `from`/`to` are IST calendar days, inclusive. */
export async function readAuditLog(db: Pick<Db, 'query'>, filter: AuditFilter): Promise<AuditEntry[]> {
  const { rows } = await db.query<{ at: Date; actor: string; kind: AuditEntry['kind']; action: string; subject: string | null; reason: string | null; reference: string | null }>(
    `SELECT * FROM (
       SELECT r.created_at AS at, r.actor, CASE WHEN r.payout_id IS NULL THEN 'kill_switch' ELSE 'payout_decision' END AS kind,
              r.action, p.subject_id AS subject, r.reason, r.reference
         FROM review_actions r LEFT JOIN payouts p ON p.id = r.payout_id
       UNION ALL
       SELECT a.created_at, a.actor, 'recon_resolution', a.action, e.key, a.note, NULL
         FROM recon_exception_actions a JOIN recon_exceptions e ON e.id = a.exception_id
       UNION ALL
       SELECT b.imported_at, b.imported_by, 'bank_statement_import', 'import', b.file_name, NULL, b.file_sha256
         FROM bank_statement_imports b
       UNION ALL
       SELECT o.paid_at, o.paid_confirmed_by, 'cash_confirmation', 'confirm_cash', o.id, NULL, NULL
         FROM orders o WHERE o.paid_via = 'cash' AND o.paid_confirmed_by IS NOT NULL
       UNION ALL
       SELECT c.created_at, c.actor, 'order_status', c.to_status, c.order_id, c.reason, NULL FROM order_status_changes c
       UNION ALL
       SELECT k.created_at, k.minted_by, 'api_key', 'mint', k.name, array_to_string(k.roles, ','), k.id FROM api_keys k
       UNION ALL
       SELECT k.revoked_at, k.revoked_by, 'api_key', 'revoke', k.name, NULL, k.id FROM api_keys k WHERE k.revoked_at IS NOT NULL
       UNION ALL
       -- Masked only: the change log holds no account number.
       SELECT b.created_at, b.actor, 'bank_details', b.action, b.vendor_id, NULL,
              b.account_masked || ' ' || b.ifsc || ' ' || b.beneficiary_name || ' (key ' || b.key_id || ')'
         FROM vendor_bank_detail_changes b
       UNION ALL
       SELECT s.created_at, s.actor, 'settlement', s.action, coalesce(l.reference, s.batch_id), s.detail, s.batch_id
         FROM settlement_actions s LEFT JOIN settlement_lines l ON l.id = s.line_id
       UNION ALL
       SELECT e.registered_at, e.registered_by, 'employee', 'register', e.id, NULL, e.employer_id FROM employees e
       UNION ALL
       SELECT q.acknowledged_at, q.acknowledged_by, 'webhook_quarantine', 'acknowledge', q.event_id, q.acknowledgement, q.event_type
         FROM quarantined_webhooks q WHERE q.acknowledged_at IS NOT NULL
     ) audit
     WHERE ($1::date IS NULL OR at >= ($1::date::timestamp AT TIME ZONE 'Asia/Kolkata'))
       AND ($2::date IS NULL OR at < (($2::date + 1)::timestamp AT TIME ZONE 'Asia/Kolkata'))
       AND ($3::text IS NULL OR actor ILIKE '%' || $3 || '%')
     ORDER BY at DESC
     LIMIT $4`,
    [filter.from ?? null, filter.to ?? null, filter.actor ?? null, filter.limit],
  );
  return rows.map((r) => ({ ...r, at: r.at.toISOString() }));
}
