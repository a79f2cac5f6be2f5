-- The transfer rails write the ledger (issue 36, step 2; docs/ledger.md). Every paid order writes its
-- obligations (its net by its route, a cash order's share kept at the counter, and their discharges
-- for cash kept and employer direct) in the transaction that marks it paid; every change of a
-- payout's status writes its transfer's discharge in the transaction that changes it, so a claim's
-- transfer is in the ledger before any request leaves, and the partial unique index
-- (ledger_one_active_discharge) refuses a second instrument for an obligation one already pays.
-- `payout_id` names the payout a transfer's discharge, a reversal's obligation or ops' cancel was
-- written for: the payout's rail finds its own rows by it.
ALTER TABLE ledger_discharges ADD COLUMN payout_id uuid REFERENCES payouts(id);
ALTER TABLE ledger_obligations ADD COLUMN payout_id uuid REFERENCES payouts(id);
CREATE INDEX ledger_discharges_payout ON ledger_discharges (payout_id, id) WHERE payout_id IS NOT NULL;
CREATE INDEX ledger_obligations_payout ON ledger_obligations (payout_id) WHERE payout_id IS NOT NULL;
CREATE INDEX ledger_obligations_batch ON ledger_obligations (batch_id) WHERE batch_id IS NOT NULL;
