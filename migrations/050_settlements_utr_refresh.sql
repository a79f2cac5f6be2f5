-- A settlement can be seen before its UTR exists (its settlement.processed webhook, an early recon
-- pull): such a settlement is fetched again, at most every SETTLEMENT_UTR_REFRESH_MS, until it has
-- one. `last_seen_at` is the last time the provider told us about it (webhook or fetch); a UTR once
-- known is never overwritten with NULL. The partial index keeps the refresh's pick cheap.
ALTER TABLE settlements ADD COLUMN last_seen_at timestamptz NOT NULL DEFAULT now();
ALTER TABLE settlements ADD COLUMN first_seen_via text NOT NULL DEFAULT 'recon' CHECK (first_seen_via IN ('recon', 'webhook'));
CREATE INDEX settlements_awaiting_utr ON settlements (last_seen_at) WHERE utr IS NULL AND status <> 'failed';
