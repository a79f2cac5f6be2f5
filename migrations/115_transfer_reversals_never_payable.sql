-- A cancelled order paid anyway carries its Route split at Razorpay, and our refund of that payment
-- takes the split back with reverse_all. No payout or split row of ours owns that transfer (the order
-- was never payable), yet the reversal must be in our rows, so that recon matches the transfer and
-- its reversal instead of raising transfer-not-in-app and reversal-not-in-app (found by the fault
-- campaign). Such a reversal has neither owner, is made by our refund and owes the vendor nothing.
DO $$
DECLARE c text;
BEGIN
  SELECT conname INTO c FROM pg_constraint
   WHERE conrelid = 'transfer_reversals'::regclass AND contype = 'c'
     AND pg_get_constraintdef(oid) = 'CHECK (((payout_id IS NULL) <> (split_order_id IS NULL)))';
  IF c IS NULL THEN RAISE EXCEPTION 'transfer_reversals: the one-owner CHECK was not found'; END IF;
  EXECUTE format('ALTER TABLE transfer_reversals DROP CONSTRAINT %I', c);
END $$;
ALTER TABLE transfer_reversals ADD CONSTRAINT transfer_reversals_owner CHECK (
  (payout_id IS NULL) <> (split_order_id IS NULL)
  OR (payout_id IS NULL AND split_order_id IS NULL AND made_by = 'our_refund' AND owed_paise = 0));

-- When the missed-webhook sweep last looked for the reversals a processed reverse_all refund made on
-- an order that no payout or split of ours pays (null: not yet).
ALTER TABLE refunds ADD COLUMN reversals_checked_at timestamptz;
