-- The balance wall (issue 22): an insufficient-balance rejection is a platform condition, not a
-- payout's. The first one pauses direct transfers with a reason of its own (beside ops' kill
-- switch): claims wait, no payout spends an attempt, and one probe transfer at a time (at most every
-- PAYOUT_BALANCE_PROBE_MS, at once on ops' resume) finds out whether the balance is back.
ALTER TABLE transfer_switch
  ADD COLUMN balance_short_since timestamptz,
  ADD COLUMN balance_short_code  text,
  -- The earliest a probe may be claimed, and the payout that holds the probe now.
  ADD COLUMN balance_probe_at    timestamptz,
  ADD COLUMN balance_probe_payout uuid;
