-- A batch's transfer reversed at Razorpay (issue 36 item 1): its reversal pays back no single order,
-- so the row names the batch instead. Until now order_id referenced orders and the batch's payout
-- passed its batch id: the insert failed on the foreign key, the transaction rolled back, and the
-- batch and its members stayed settled while Razorpay had taken the sum back. One owner key: an
-- order or a batch, never both (a reversal our own refund made of a never-payable order's split
-- keeps its order).
ALTER TABLE transfer_reversals ALTER COLUMN order_id DROP NOT NULL;
ALTER TABLE transfer_reversals ADD COLUMN batch_id text REFERENCES payout_batches(id);
ALTER TABLE transfer_reversals ADD CONSTRAINT transfer_reversals_order_or_batch CHECK ((order_id IS NULL) <> (batch_id IS NULL));
CREATE INDEX transfer_reversals_batch ON transfer_reversals (batch_id) WHERE batch_id IS NOT NULL;
