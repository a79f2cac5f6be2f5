-- Employer (and employee) wallets: a balance row that can never go below zero, and an append-only
-- ledger of every movement with the balance after it.
CREATE TABLE wallets (
  owner_kind    text NOT NULL CHECK (owner_kind IN ('employer', 'employee')),
  owner_id      text NOT NULL,
  balance_paise bigint NOT NULL DEFAULT 0 CHECK (balance_paise >= 0),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (owner_kind, owner_id)
);

CREATE TABLE wallet_entries (
  id                  bigserial PRIMARY KEY,
  owner_kind          text NOT NULL,
  owner_id            text NOT NULL,
  kind                text NOT NULL CHECK (kind IN ('top_up', 'order_debit', 'refund_credit')),
  -- Signed: credits positive, debits negative.
  amount_paise        bigint NOT NULL CHECK (amount_paise <> 0),
  balance_after_paise bigint NOT NULL CHECK (balance_after_paise >= 0),
  -- What caused it: an order id, a top-up id, a refund id. One entry per (reference, kind).
  reference           text NOT NULL,
  created_at          timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (owner_kind, owner_id) REFERENCES wallets (owner_kind, owner_id),
  UNIQUE (owner_kind, owner_id, kind, reference)
);

CREATE FUNCTION refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP;
END $$;

CREATE TRIGGER wallet_entries_append_only BEFORE UPDATE OR DELETE ON wallet_entries
  FOR EACH ROW EXECUTE FUNCTION refuse_change();

-- A top-up is money in: a Razorpay order whose captured payment credits the wallet exactly once.
CREATE TABLE wallet_topups (
  id               text PRIMARY KEY,
  owner_kind       text NOT NULL,
  owner_id         text NOT NULL,
  amount_paise     bigint NOT NULL CHECK (amount_paise >= 100),
  gateway_order_id text UNIQUE,
  status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'credited', 'failed')),
  created_at       timestamptz NOT NULL DEFAULT now(),
  credited_at      timestamptz,
  FOREIGN KEY (owner_kind, owner_id) REFERENCES wallets (owner_kind, owner_id)
);
