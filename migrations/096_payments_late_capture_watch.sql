-- The missed-webhook sweep watches paid orders whose other payments may still be captured late
-- (failed or authorised, then captured by the bank: a duplicate capture to refund). Such payments
-- are few; this index finds them without scanning every paid order.
CREATE INDEX payments_may_still_capture ON payments (created_at) WHERE status IN ('created', 'authorized', 'failed');
-- Paid online orders not asked about since their payment: each is asked once more (another capture
-- whose webhooks were all lost is found and refunded). The index empties as they are asked.
CREATE INDEX orders_paid_not_rechecked ON orders (paid_at)
  WHERE status = 'paid' AND gateway_order_id IS NOT NULL AND (payment_checked_at IS NULL OR payment_checked_at < paid_at);
