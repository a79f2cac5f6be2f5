-- Issue 36, campaign finding 8: the batch a completed run of an order's payout had joined, when a
-- restored database forgot that join. The run's result is the one record of the membership the
-- restore could not erase; the payout sweep copies it here before it starts the payout's next run,
-- and the order's next join goes back to that batch whatever its cutoff (src/payouts/batches.ts):
-- the provider may already hold that batch's transfer with this order's net in its sum.
ALTER TABLE payouts ADD COLUMN earlier_run_batch_id text;
