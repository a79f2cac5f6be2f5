-- Refunds made outside the app (issue 19 item 4): a refund Razorpay made on the payment that keeps an
-- order paid (orders.paid_payment_id) that matches no refund of ours, e.g. one issued from the
-- Razorpay Dashboard. One row per gateway refund, recorded once from a fetch of the refund (the
-- webhook is only the hint); `action` is what it did to the vendor's money, decided under the
-- payout's row lock: `payout_held` (not sent: moved to review, CUSTOMER_REFUNDED), `owed_back` (paid
-- or paying: a negative offline-ledger line of `clawback_paise`), `reported` (a recon exception only).
CREATE TABLE outside_refunds (
  id             text PRIMARY KEY,                      -- rfnd_…, Razorpay's refund id
  payment_id     text NOT NULL,
  order_id       text NOT NULL REFERENCES orders(id),
  amount_paise   bigint NOT NULL CHECK (amount_paise > 0),
  captured_paise bigint NOT NULL CHECK (captured_paise > 0),
  status         text NOT NULL CHECK (status IN ('pending', 'processed', 'failed')),
  action         text NOT NULL CHECK (action IN ('payout_held', 'owed_back', 'reported')),
  payout_id      uuid REFERENCES payouts(id),
  payout_status  text,                                  -- the payout's status when the refund was seen
  clawback_paise bigint CHECK (clawback_paise >= 0),
  first_seen_at  timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX outside_refunds_order ON outside_refunds (order_id);
