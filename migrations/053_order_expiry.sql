-- An online order still unpaid past the gateway's late-authorisation window (UNPAID_ORDER_EXPIRY_MS)
-- is `expired` by the missed-webhook sweep: nothing can capture for it any more, its subsidy goes
-- back to the employer wallet, and it leaves the sweep's batch. A capture that still arrives for it
-- is refunded, as for a cancelled order.
ALTER TABLE orders DROP CONSTRAINT orders_status_check;
ALTER TABLE orders ADD CONSTRAINT orders_status_check CHECK (status IN ('pending', 'paid', 'failed', 'cancelled', 'expired'));

-- Who ended an unpaid order (cancelled by a caller, expired by the sweep) and why. Append-only.
CREATE TABLE order_status_changes (
  id          bigserial PRIMARY KEY,
  order_id    text NOT NULL REFERENCES orders(id),
  from_status text NOT NULL,
  to_status   text NOT NULL,
  actor       text NOT NULL,
  reason      text NOT NULL CHECK (length(reason) > 0),
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX order_status_changes_order ON order_status_changes (order_id, id);
CREATE TRIGGER order_status_changes_append_only BEFORE UPDATE OR DELETE ON order_status_changes
  FOR EACH ROW EXECUTE FUNCTION refuse_change();
