-- A captured payment may be for a wallet top-up rather than an order; linking it keeps it from
-- looking like an orphan capture (order_id NULL and topup_id NULL together mean: not ours).
ALTER TABLE payments ADD COLUMN topup_id text REFERENCES wallet_topups(id);
CREATE INDEX payments_gateway_order ON payments (gateway_order_id);
-- A payment made without any gateway order (possible at Razorpay) is still recorded, as an orphan.
ALTER TABLE payments ALTER COLUMN gateway_order_id DROP NOT NULL;
