-- Issue 37: the missed-webhook sweep's once-more look at paid online orders reads Razorpay's payment
-- listing by window (GET /payments?from&to&count&skip, a call per page) instead of one
-- GET /orders/:id/payments per order. A window lists every payment created in
-- [listed_from_s, listed_to_s] (inclusive, the provider's Unix seconds) once that whole range is at
-- least LATE_CAPTURE_RECHECK_MS old; the windows follow each other without a gap. For a window,
-- `confirmed` counts the listed payments it applied (those of paid orders whose payout had decided).
ALTER TABLE provider_listing_passes DROP CONSTRAINT provider_listing_passes_kind_check;
ALTER TABLE provider_listing_passes ADD CONSTRAINT provider_listing_passes_kind_check CHECK (kind IN ('payments', 'payments_recheck'));
ALTER TABLE provider_listing_passes ADD COLUMN listed_to_s bigint;
ALTER TABLE provider_listing_passes ADD CONSTRAINT provider_listing_passes_window
  CHECK (kind <> 'payments_recheck' OR (listed_to_s IS NOT NULL AND listed_to_s >= listed_from_s));
-- The cursor (the last window listed) and the window left open.
CREATE INDEX provider_listing_passes_recheck ON provider_listing_passes (listed_to_s DESC) WHERE kind = 'payments_recheck';
