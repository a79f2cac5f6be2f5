-- An ops "retry" grants a fresh budget of attempts without rewriting history: the claim compares
-- `attempts` (monotonic) with `attempt_limit` (NULL = the configured cap).
ALTER TABLE payouts ADD COLUMN attempt_limit integer CHECK (attempt_limit > 0);
