-- What a payout pays, named once: its order (a per-order payout) or its batch (a batch's own payout,
-- whose transfer pays the batch's members). The run that pays it is keyed by it, ops find the payout
-- by it, and the audit log and recon name it. Before, each reader spelled it out in its own SQL; the
-- CHECK payouts_order_or_batch (118) keeps exactly one of the two set, so it is never NULL.
-- VIRTUAL (PostgreSQL 18): computed when read, so adding it does not rewrite payouts under an
-- ACCESS EXCLUSIVE lock; nothing filters or indexes on it.
ALTER TABLE payouts ADD COLUMN subject_id text GENERATED ALWAYS AS (COALESCE(order_id, batch_id)) VIRTUAL;
