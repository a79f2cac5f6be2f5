-- When a transfer request was really sent, and how old its idempotency key is:
--   request_sent_at   set by the money-moving activity just before the call (NULL on a new claim):
--                     the resolver lists the provider's transfers around it, so a request delayed
--                     behind a worker outage is still found;
--   key_first_sent_at the first time the current key went out (NULL when a fresh key is minted): a
--                     provider honours a key only for a retention window, after which it is a new
--                     request, so an old key is never reused blindly;
--   resolver_failing_since  the first of a run of failed listings: past PAYOUT_RESOLVER_GIVE_UP_MS
--                     the payout goes to review instead of asking for ever.
ALTER TABLE payouts ADD COLUMN request_sent_at timestamptz;
ALTER TABLE payouts ADD COLUMN key_first_sent_at timestamptz;
ALTER TABLE payouts ADD COLUMN resolver_failing_since timestamptz;

-- `not_sent`: a claim released without a request (transfers paused at the last moment, or a key
-- too old to trust).
ALTER TABLE payout_attempts DROP CONSTRAINT payout_attempts_outcome_check;
ALTER TABLE payout_attempts ADD CONSTRAINT payout_attempts_outcome_check
  CHECK (outcome IN ('accepted', 'rejected', 'unknown', 'recovered', 'not_found', 'settled', 'failed_after_accept', 'not_sent'));
