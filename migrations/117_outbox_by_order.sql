-- The drainer's pacing (issue 22 item 1) counts the payouts already handed to Temporal that have not
-- sent their transfer: open payouts without an outbox row. That probe is by order id.
CREATE INDEX payouts_outbox_by_order ON payouts_outbox (order_id, attempts);
