-- Issue 37, the `daily` goal: an order that joins a batch waits for its cutoff anyway, so its capture
-- is confirmed by the once-more look's listing window (moneyin/paymentRecheck.ts) when that window is
-- listed before the cutoff, not by a capture listing pass of its own (payouts/captureListing.ts). The
-- mark says the payout waits for its window: the window then applies the order's payment while the
-- payout is still pending (its once-more look; a webhook may do the same at any time), which it does
-- not for other pending payouts.
ALTER TABLE payouts ADD COLUMN capture_window_since timestamptz;
-- A capture the window's listing showed exactly as recorded.
ALTER TABLE payments DROP CONSTRAINT payments_capture_confirmed_by_check;
ALTER TABLE payments ADD CONSTRAINT payments_capture_confirmed_by_check CHECK (capture_confirmed_by IN ('fetch', 'listing', 'window'));
-- The payout whose run took a capture listing pass (by its key: an order id): which class of payouts
-- the passes are run for (bench:day gives each pass's calls to it).
ALTER TABLE provider_listing_passes ADD COLUMN run_for text;
