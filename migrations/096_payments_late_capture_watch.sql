-- The missed-webhook sweep watches paid orders whose other payments may still be captured late
-- (failed or authorised, then captured by the bank: a duplicate capture to refund). Such payments
-- are few; this index finds them without scanning every paid order.
CREATE INDEX payments_may_still_capture ON payments (created_at) WHERE status IN ('created', 'authorized', 'failed');
