-- What a vendor owes back after a refund made outside the app (issue 19 item 4) is a negative line in
-- the offline ledger, route `refund_clawback`. The ledger keeps one line per order (order_id stays
-- UNIQUE: the payable paths insert ON CONFLICT (order_id)), so a clawback line names its order in
-- `clawback_order_id` instead, and its refund in `outside_refund_id` (one line per refund). It has no
-- payout or split, so the open offline ledger lists it: finance nets it off the vendor's next
-- offline payment.
ALTER TABLE offline_ledger
  ALTER COLUMN order_id DROP NOT NULL,
  ADD COLUMN clawback_order_id text REFERENCES orders(id),
  ADD COLUMN outside_refund_id text UNIQUE REFERENCES outside_refunds(id);

ALTER TABLE offline_ledger DROP CONSTRAINT offline_ledger_route_check;
ALTER TABLE offline_ledger ADD CONSTRAINT offline_ledger_route_check CHECK (route IN (
  'direct_transfer', 'split', 'cash', 'manual_offline', 'no_linked_account', 'below_transfer_minimum', 'corporate_direct',
  'refund_clawback'));

ALTER TABLE offline_ledger ADD CONSTRAINT offline_ledger_clawback_shape CHECK (CASE
  WHEN route = 'refund_clawback' THEN order_id IS NULL AND clawback_order_id IS NOT NULL AND outside_refund_id IS NOT NULL AND amount_paise < 0
  ELSE order_id IS NOT NULL AND clawback_order_id IS NULL AND outside_refund_id IS NULL END);

CREATE INDEX offline_ledger_clawback_order ON offline_ledger (clawback_order_id) WHERE clawback_order_id IS NOT NULL;
