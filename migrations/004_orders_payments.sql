-- Orders and the money that comes in for them.
CREATE TABLE orders (
  id                   text PRIMARY KEY,
  client_reference     text NOT NULL UNIQUE,
  employer_id          text NOT NULL REFERENCES employers(id),
  vendor_id            text NOT NULL REFERENCES vendors(id),
  employee_id          text NOT NULL,
  total_paise          bigint NOT NULL CHECK (total_paise > 0),
  subsidy_paise        bigint NOT NULL CHECK (subsidy_paise >= 0),
  customer_share_paise bigint NOT NULL CHECK (customer_share_paise >= 0),
  commission_bps       integer NOT NULL CHECK (commission_bps BETWEEN 0 AND 10000),
  commission_paise     bigint NOT NULL CHECK (commission_paise >= 0),
  vendor_net_paise     bigint NOT NULL,
  payment_method       text NOT NULL CHECK (payment_method IN ('online', 'wallet', 'cash')),
  -- pending → paid; pending → failed → paid (late authorisation); pending|failed → cancelled.
  status               text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'paid', 'failed', 'cancelled')),
  gateway_order_id     text UNIQUE,
  -- Set when the Razorpay order carries a Route split to the vendor (unsubsidised online orders).
  split_transfer_paise bigint CHECK (split_transfer_paise >= 100),
  paid_at              timestamptz,
  created_at           timestamptz NOT NULL DEFAULT now(),
  updated_at           timestamptz NOT NULL DEFAULT now(),
  CHECK (total_paise = subsidy_paise + customer_share_paise),
  CHECK (vendor_net_paise = total_paise - commission_paise),
  CHECK ((status = 'paid') = (paid_at IS NOT NULL))
);
CREATE INDEX orders_status_created ON orders (status, created_at);

CREATE TABLE payments (
  id               text PRIMARY KEY,            -- pay_…
  gateway_order_id text NOT NULL,
  order_id         text REFERENCES orders(id),  -- NULL: an orphan capture (no order of ours)
  amount_paise     bigint NOT NULL CHECK (amount_paise > 0),
  status           text NOT NULL CHECK (status IN ('created', 'authorized', 'captured', 'refunded', 'failed')),
  method           text,
  fee_paise        bigint,
  tax_paise        bigint,
  captured_at      timestamptz,
  raw              jsonb NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX payments_order ON payments (order_id);

-- Our refund request id is the gateway `receipt`, so a retried request cannot refund twice.
CREATE TABLE refunds (
  id                text PRIMARY KEY,
  payment_id        text NOT NULL,
  order_id          text REFERENCES orders(id),
  amount_paise      bigint NOT NULL CHECK (amount_paise >= 100),
  reason            text NOT NULL,
  gateway_refund_id text UNIQUE,
  status            text NOT NULL DEFAULT 'requested' CHECK (status IN ('requested', 'pending', 'processed', 'failed')),
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now()
);
-- At most one refund of an orphan payment per reason.
CREATE UNIQUE INDEX refunds_one_per_payment_reason ON refunds (payment_id, reason);

-- Webhook event ids, inserted in the same transaction as the event's effect.
CREATE TABLE processed_events (
  event_id    text PRIMARY KEY,
  event_type  text NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now()
);
