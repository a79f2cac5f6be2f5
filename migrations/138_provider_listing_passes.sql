-- Issue 37: captures are confirmed from Razorpay's payment listing (GET /payments?from&count&skip),
-- one pass shared by every payout waiting in its window, instead of one payments.fetch per payout.
-- A pass lists every payment created since `listed_from_s` (the provider's Unix seconds) and confirms
-- each recorded capture the listing shows as we recorded it. A capture is covered by a pass that
-- started after we recorded it and listed from at or before the payment's creation: if such a pass
-- did not confirm it (or could not be read), the payout asks Razorpay for that payment alone.
CREATE TABLE provider_listing_passes (
  id            bigserial PRIMARY KEY,
  kind          text NOT NULL CHECK (kind IN ('payments')),
  started_at    timestamptz NOT NULL DEFAULT now(),
  -- A pass whose runner died is in flight only until its lease runs out.
  lease_until   timestamptz NOT NULL,
  listed_from_s bigint NOT NULL CHECK (listed_from_s >= 0),
  finished_at   timestamptz,
  pages         integer NOT NULL DEFAULT 0,
  items         integer NOT NULL DEFAULT 0,
  confirmed     integer NOT NULL DEFAULT 0,
  error         text,
  CHECK (error IS NULL OR finished_at IS NOT NULL)
);
CREATE INDEX provider_listing_passes_started ON provider_listing_passes (kind, started_at DESC);

-- How the capture was confirmed: one fetch of the payment, or a listing pass.
ALTER TABLE payments ADD COLUMN capture_confirmed_by text CHECK (capture_confirmed_by IN ('fetch', 'listing'));
UPDATE payments SET capture_confirmed_by = 'fetch' WHERE capture_confirmed_at IS NOT NULL;
ALTER TABLE payments ADD CONSTRAINT payments_capture_confirmed_by_when CHECK (capture_confirmed_by IS NULL OR capture_confirmed_at IS NOT NULL);
