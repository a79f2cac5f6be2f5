-- "Paid by transfer" and "settled offline" are exclusive (issue 20): an `offline` payout holds no
-- provider transfer. The pay-offline decision takes a payout that holds one only when that transfer
-- is recorded as failed after acceptance, and clears it from the row (payout_attempts keeps it);
-- rows already offline with such a transfer are cleared the same way here. An offline row holding
-- any other transfer makes this migration fail on purpose: it may be a double payment, and a human
-- looks at it before the constraint goes on. (No other table records an offline settlement yet.)
UPDATE payouts p SET provider_transfer_id = NULL
WHERE p.status = 'offline' AND p.provider_transfer_id IS NOT NULL
  AND EXISTS (
    SELECT 1 FROM payout_attempts a
    WHERE a.payout_id = p.id AND a.provider_transfer_id = p.provider_transfer_id AND a.outcome = 'failed_after_accept');

ALTER TABLE payouts ADD CONSTRAINT payouts_offline_without_transfer
  CHECK (status <> 'offline' OR provider_transfer_id IS NULL);
