-- Reversals of our transfers (issue 19 item 3): a payout's direct transfer or a Route split
-- (split_transfers) that Razorpay reports reversed, from the Dashboard, by Razorpay, or by a refund
-- with reverse_all. One row per Razorpay reversal (`rvrsl_…`), recorded once from a fetch of the
-- transfer and its reversals (a transfer.reversed webhook is only the hint), with what was fetched as
-- evidence. `owed_paise` is what the vendor is owed again because of it: the reversed amount, or 0
-- when one of our own refunds made it (that refund's decision already left the vendor what it is
-- owed: moneyin/splitReversal.ts). `made_by`: `outside` (no refund: the Dashboard or Razorpay),
-- `outside_refund` (a refund made outside the app reversed it), `our_refund`.
CREATE TABLE transfer_reversals (
  id                    text PRIMARY KEY CHECK (id ~ '^rvrsl_[A-Za-z0-9]+$'),
  transfer_id           text NOT NULL CHECK (transfer_id ~ '^trf_[A-Za-z0-9]+$'),
  payout_id             uuid REFERENCES payouts(id),
  split_order_id        text REFERENCES split_transfers(order_id),
  order_id              text NOT NULL REFERENCES orders(id),
  vendor_id             text NOT NULL REFERENCES vendors(id),
  amount_paise          bigint NOT NULL CHECK (amount_paise > 0),
  -- The reversed transfer's own amount (recon matches the transfer's settlement row against it).
  transfer_amount_paise bigint NOT NULL CHECK (transfer_amount_paise >= amount_paise),
  customer_refund_id    text,
  made_by               text NOT NULL CHECK (made_by IN ('outside', 'outside_refund', 'our_refund')),
  owed_paise            bigint NOT NULL CHECK (owed_paise >= 0 AND owed_paise <= amount_paise),
  -- created_at of the reversal at Razorpay.
  reversed_at           timestamptz NOT NULL,
  evidence              jsonb NOT NULL,
  recorded_at           timestamptz NOT NULL DEFAULT now(),
  CHECK ((payout_id IS NULL) <> (split_order_id IS NULL)),
  CHECK (made_by = 'outside' OR customer_refund_id IS NOT NULL)
);
CREATE INDEX transfer_reversals_transfer ON transfer_reversals (transfer_id);
CREATE INDEX transfer_reversals_payout ON transfer_reversals (payout_id) WHERE payout_id IS NOT NULL;
CREATE INDEX transfer_reversals_split ON transfer_reversals (split_order_id) WHERE split_order_id IS NOT NULL;
CREATE TRIGGER transfer_reversals_append_only BEFORE UPDATE OR DELETE ON transfer_reversals
  FOR EACH ROW EXECUTE FUNCTION refuse_change();
