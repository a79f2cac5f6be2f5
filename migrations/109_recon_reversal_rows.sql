-- Recon reads reversal rows (issue 19 item 3): a transfer reversal credited back to us in a
-- settlement is a `reversal` row; one our transfer_reversals do not know is `reversal-not-in-app`.
ALTER TABLE recon_rows DROP CONSTRAINT recon_rows_type_check;
ALTER TABLE recon_rows ADD CONSTRAINT recon_rows_type_check CHECK (type IN ('payment', 'refund', 'transfer', 'reversal', 'adjustment'));

-- The reason is added to the reasons the constraint allows now (read from it), not to a list copied
-- here: other reasons are being added beside this one (src/recon/reasons.ts is the catalogue).
DO $$
DECLARE allowed text[];
BEGIN
  SELECT array_agg(m[1]) INTO allowed
    FROM pg_constraint c, regexp_matches(pg_get_constraintdef(c.oid), '''([^'']+)''', 'g') AS m
   WHERE c.conrelid = 'recon_exceptions'::regclass AND c.conname = 'recon_exceptions_reason_check';
  ALTER TABLE recon_exceptions DROP CONSTRAINT recon_exceptions_reason_check;
  EXECUTE format('ALTER TABLE recon_exceptions ADD CONSTRAINT recon_exceptions_reason_check CHECK (reason = ANY (%L::text[]))',
    array_append(allowed, 'reversal-not-in-app'));
END $$;
