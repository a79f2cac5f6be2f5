-- A payout's transfer reversed after it was accepted or settled (issue 19 item 3) is an attempt
-- outcome of its own, `reversed`, beside `failed_after_accept`: the payout is owed again and waits
-- for ops (TRANSFER_REVERSED), never retried by itself.
ALTER TABLE payout_attempts DROP CONSTRAINT payout_attempts_outcome_check;
ALTER TABLE payout_attempts ADD CONSTRAINT payout_attempts_outcome_check
  CHECK (outcome IN ('accepted', 'rejected', 'unknown', 'recovered', 'not_found', 'settled', 'failed_after_accept', 'not_sent', 'reversed'));
