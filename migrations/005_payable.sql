-- What a vendor is owed for a paid order, by route (design.md §3).

-- Direct transfers from the platform balance. `id` is the recovery key (always in the transfer's
-- notes) and the first idempotency key; `idempotency_key` changes only after a definitive rejection.
CREATE TABLE payouts (
  id                   uuid PRIMARY KEY,
  order_id             text NOT NULL UNIQUE REFERENCES orders(id),
  vendor_id            text NOT NULL REFERENCES vendors(id),
  linked_account_id    text NOT NULL,
  amount_paise         bigint NOT NULL CHECK (amount_paise >= 100),
  status               text NOT NULL DEFAULT 'pending'
                       CHECK (status IN ('pending', 'processing', 'accepted', 'settled', 'failed', 'parked', 'review', 'cancelled', 'rerouted')),
  attempts             integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  claimed_at           timestamptz,
  idempotency_key      text NOT NULL CHECK (length(idempotency_key) BETWEEN 4 AND 36),
  provider_transfer_id text UNIQUE,
  last_code            text,
  external_reference   text,
  next_attempt_at      timestamptz,
  created_at           timestamptz NOT NULL DEFAULT now(),
  updated_at           timestamptz NOT NULL DEFAULT now(),
  settled_at           timestamptz
);
CREATE INDEX payouts_status ON payouts (status, updated_at);

-- Every try, append-only.
CREATE TABLE payout_attempts (
  id                   bigserial PRIMARY KEY,
  payout_id            uuid NOT NULL REFERENCES payouts(id),
  attempt_no           integer NOT NULL,
  idempotency_key      text NOT NULL,
  outcome              text NOT NULL CHECK (outcome IN ('accepted', 'rejected', 'unknown', 'recovered', 'not_found', 'settled', 'failed_after_accept')),
  provider_code        text,
  provider_transfer_id text,
  raw                  jsonb,
  workflow_run_id      text,
  created_at           timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX payout_attempts_payout ON payout_attempts (payout_id, id);
CREATE TRIGGER payout_attempts_append_only BEFORE UPDATE OR DELETE ON payout_attempts
  FOR EACH ROW EXECUTE FUNCTION refuse_change();

-- Who did what to a payout (or to the transfer switch), and why.
CREATE TABLE review_actions (
  id         bigserial PRIMARY KEY,
  payout_id  uuid REFERENCES payouts(id),
  actor      text NOT NULL,
  action     text NOT NULL CHECK (action IN ('retry', 'mark_paid_externally', 'cancel', 'pause_transfers', 'resume_transfers')),
  reason     text NOT NULL CHECK (length(reason) > 0),
  reference  text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TRIGGER review_actions_append_only BEFORE UPDATE OR DELETE ON review_actions
  FOR EACH ROW EXECUTE FUNCTION refuse_change();

-- Every paid order writes what the platform would owe the vendor offline (signed: negative means
-- the vendor owes the platform, e.g. a cash order whose commission exceeds the subsidy).
CREATE TABLE offline_ledger (
  id           bigserial PRIMARY KEY,
  order_id     text NOT NULL UNIQUE REFERENCES orders(id),
  employer_id  text NOT NULL,
  vendor_id    text NOT NULL REFERENCES vendors(id),
  amount_paise bigint NOT NULL,
  -- The route the order took when it became payable.
  route        text NOT NULL CHECK (route IN ('direct_transfer', 'split', 'cash', 'manual_offline', 'no_linked_account', 'below_transfer_minimum', 'corporate_direct')),
  created_at   timestamptz NOT NULL DEFAULT now()
);

-- corporate_direct: the employer pays the vendor itself; we only record the obligation.
CREATE TABLE vendor_obligations (
  id           bigserial PRIMARY KEY,
  order_id     text NOT NULL UNIQUE REFERENCES orders(id),
  employer_id  text NOT NULL,
  vendor_id    text NOT NULL REFERENCES vendors(id),
  amount_paise bigint NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now()
);

-- The Route split a Razorpay order carries to the vendor (unsubsidised online orders).
CREATE TABLE split_transfers (
  order_id             text PRIMARY KEY REFERENCES orders(id),
  vendor_id            text NOT NULL REFERENCES vendors(id),
  linked_account_id    text NOT NULL,
  amount_paise         bigint NOT NULL CHECK (amount_paise >= 100),
  gateway_order_id     text NOT NULL,
  provider_transfer_id text UNIQUE,
  status               text NOT NULL DEFAULT 'expected' CHECK (status IN ('expected', 'processed', 'failed')),
  created_at           timestamptz NOT NULL DEFAULT now(),
  updated_at           timestamptz NOT NULL DEFAULT now()
);

-- What finance still has to settle offline: ledger rows whose order no transfer has settled or is
-- settling (a switched-off transfer needs no backfill: its order reappears here).
CREATE VIEW offline_ledger_open AS
SELECT l.*
FROM offline_ledger l
WHERE l.route <> 'corporate_direct'
  AND NOT EXISTS (
    SELECT 1 FROM payouts p
    WHERE p.order_id = l.order_id AND p.status IN ('processing', 'accepted', 'settled'))
  AND NOT EXISTS (
    SELECT 1 FROM split_transfers s
    WHERE s.order_id = l.order_id AND s.status IN ('expected', 'processed'))
  AND NOT EXISTS (SELECT 1 FROM vendor_obligations o WHERE o.order_id = l.order_id);
