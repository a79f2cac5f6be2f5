-- The workflow run that took the current claim: a retried claim activity of the same run (its first
-- try committed, its completion was lost) gets its own claim back instead of a lost claim.
ALTER TABLE payouts ADD COLUMN claimed_by_run text;
