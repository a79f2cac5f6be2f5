-- A capture whose amount is not the order's customer share (issue 36 item 6) no longer makes its
-- order `paid` when a direct-transfer payout can hold it: the order is `capture_mismatch` — charged
-- (paid_via and paid_payment_id say by which payment), not paid (paid_at stays NULL), so no reader
-- that counts paid orders (the vendor statement, the console, the CLI) shows it paid or owed — while
-- its payout waits in `review` (AMOUNT_MISMATCH) for ops. Their decision on that payout makes the
-- order `paid` (order_status_changes says who, when and why; so does the hold). Nothing is written
-- twice: the payout, its offline-ledger line (out of the open ledger while the payout is in review)
-- and the payment row are written by the capture, as before.
ALTER TABLE orders DROP CONSTRAINT orders_status_check;
ALTER TABLE orders ADD CONSTRAINT orders_status_check CHECK (status IN ('pending', 'paid', 'failed', 'cancelled', 'expired', 'capture_mismatch'));
-- A held order always names the payment it was charged by: the payout's capture check and an
-- outside refund of that payment find it through paid_payment_id.
ALTER TABLE orders ADD CONSTRAINT orders_capture_mismatch_names_payment CHECK (status <> 'capture_mismatch' OR paid_payment_id IS NOT NULL);
