-- Recording an outcome is a retryable database activity: a retry after a lost answer must not
-- write the same fact twice (one outcome of each kind per claim of a payout).
CREATE UNIQUE INDEX payout_attempts_one_outcome_per_claim ON payout_attempts (payout_id, attempt_no, outcome);
