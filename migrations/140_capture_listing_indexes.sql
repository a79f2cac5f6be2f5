-- Issue 37: what the capture listing reads on every page and every pass, by index rather than by a
-- scan that grows with the orders. A listing page finds the orders paid on the payments it shows
-- (captureConfirmation.ts capturesToConfirmAmong); a pass starts from the oldest capture not yet
-- confirmed (captureListing.ts LIST_FROM_SQL): few rows, so a partial index.
CREATE INDEX orders_paid_payment ON orders (paid_payment_id) WHERE paid_payment_id IS NOT NULL;
CREATE INDEX payments_captures_unconfirmed ON payments (updated_at) WHERE status = 'captured' AND capture_confirmed_at IS NULL;
