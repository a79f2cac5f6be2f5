-- The missed-webhook sweep takes the least recently checked first (never checked first, then
-- oldest), so orders nobody will ever pay cannot fill every batch and starve a newer missed capture.
-- `payment_checked_at` is set when the sweep takes an order or top-up to ask the gateway about it.
ALTER TABLE orders ADD COLUMN payment_checked_at timestamptz;
ALTER TABLE wallet_topups ADD COLUMN payment_checked_at timestamptz;
CREATE INDEX orders_awaiting_payment_check ON orders (payment_checked_at NULLS FIRST, created_at)
  WHERE status IN ('pending', 'failed') AND payment_method = 'online' AND gateway_order_id IS NOT NULL;
CREATE INDEX orders_ended_payment_check ON orders (payment_checked_at NULLS FIRST, created_at)
  WHERE status IN ('cancelled', 'expired') AND gateway_order_id IS NOT NULL;
CREATE INDEX wallet_topups_awaiting_payment_check ON wallet_topups (payment_checked_at NULLS FIRST, created_at)
  WHERE status IN ('pending', 'failed') AND gateway_order_id IS NOT NULL;
