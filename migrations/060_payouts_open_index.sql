-- The payout sweep selects open payouts by status, oldest first, with no age cutoff (a pause or an
-- outage of any length strands nothing); this partial index keeps that cheap however many settled
-- payouts accumulate.
CREATE INDEX payouts_open_by_age ON payouts (created_at, id) WHERE status IN ('pending', 'failed', 'processing', 'accepted');
