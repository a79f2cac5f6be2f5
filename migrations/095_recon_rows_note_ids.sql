-- Recon matching runs in the database (src/recon/matchInDatabase.ts): the ids a transfer or refund
-- row carries in its notes (our payout id as `transaction_id`, our refund id as `refund_request_id`)
-- are read once, when the row is stored (gatewayRows.ts: notes may be an object, a JSON string or
-- free text), instead of by every run. Rows stored before this file get them here, read the same way.
ALTER TABLE recon_rows ADD COLUMN note_transaction_id text;
ALTER TABLE recon_rows ADD COLUMN note_refund_request_id text;

WITH parsed AS (
  SELECT id, CASE jsonb_typeof(raw->'notes')
               WHEN 'object' THEN raw->'notes'
               WHEN 'string' THEN CASE WHEN pg_input_is_valid(raw->>'notes', 'jsonb') THEN (raw->>'notes')::jsonb END
             END AS notes, type
  FROM recon_rows WHERE type IN ('transfer', 'refund')
)
UPDATE recon_rows r SET
  note_transaction_id = CASE WHEN r.type = 'transfer' AND jsonb_typeof(p.notes->'transaction_id') = 'string' THEN NULLIF(p.notes->>'transaction_id', '') END,
  note_refund_request_id = CASE WHEN r.type = 'refund' AND jsonb_typeof(p.notes->'refund_request_id') = 'string' THEN NULLIF(p.notes->>'refund_request_id', '') END
FROM parsed p
WHERE p.id = r.id AND jsonb_typeof(p.notes) = 'object';
