-- Issue 36, campaign finding 2: a refund webhook for a paid order is a hint that stays until the
-- refund has been read from Razorpay (src/moneyin/refundHints.ts). Written in the webhook's
-- transaction; deleted in the transaction that records what the fetch said. While it waits, no money
-- leaves for its order: a batch's close and a transfer's send gate hold the order's payout
-- (src/payouts/refundHolds.ts), and `held_from` keeps the status it was held from, so the refund, once
-- read, is recorded as that hold. A worker re-reads each one after a backoff until Razorpay answers.
CREATE TABLE refund_hints (
  refund_id       text PRIMARY KEY,                      -- rfnd_…, Razorpay's refund id
  payment_id      text NOT NULL,
  order_id        text NOT NULL REFERENCES orders(id),
  received_at     timestamptz NOT NULL DEFAULT now(),
  attempts        int NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  last_error      text,
  held_from       text                                   -- the payout's status when an unread hint held it
);
CREATE INDEX refund_hints_due ON refund_hints (next_attempt_at);
CREATE INDEX refund_hints_order ON refund_hints (order_id);
