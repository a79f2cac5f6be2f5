-- The ledger under every rail (issue 36; design §11; docs/ledger.md). Two tables are what a vendor
-- is owed and how it was paid, whatever the rail:
--   an OBLIGATION is an amount owed to (negative: by) one vendor, with its cause and the rail
--     assigned to pay it;
--   a DISCHARGE is one instrument that paid (or, in flight, may still pay) obligations, with the
--     provider's or bank's id, linked to what it pays by ITEMS.
-- The rules that each rail used to re-derive are constraints here:
--   * an obligation has at most one active discharge (a partial unique index): a second instrument
--     for money an instrument already pays or may still pay cannot be written, whatever the rail;
--   * an item carries its obligation's whole amount and the same vendor (a trigger);
--   * a live discharge's amount is the sum of its active items, a void one has none (a deferred
--     constraint trigger, checked at commit);
--   * an adjustment names its reason and actor.
-- This step (the tables and the backfill: src/ledger/backfill.ts) builds the ledger from today's
-- rail tables in one transaction and checks it against the vendor statement (npm run ledger);
-- the rails write it directly in the next steps, each replacing its part of the backfill.
CREATE TABLE ledger_obligations (
  id           bigserial PRIMARY KEY,
  vendor_id    text NOT NULL REFERENCES vendors(id),
  employer_id  text REFERENCES employers(id),
  -- The order it is for, or for a reversal of a batch's transfer in part, the batch.
  order_id     text REFERENCES orders(id),
  batch_id     text REFERENCES payout_batches(id),
  cause        text NOT NULL CHECK (cause IN ('order_net', 'cash_kept', 'clawback', 'reversal', 'adjustment')),
  amount_paise bigint NOT NULL CHECK (amount_paise <> 0),
  rail         text NOT NULL CHECK (rail IN ('transfer', 'batch_transfer', 'split', 'settlement_run', 'employer_direct', 'cash_kept')),
  -- What it was written from, unique: a second write of the same cause is a no-op, never a second debt.
  source       text NOT NULL UNIQUE,
  reason       text,
  actor        text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  CHECK (cause <> 'adjustment' OR (reason IS NOT NULL AND actor IS NOT NULL)),
  CHECK (order_id IS NOT NULL OR batch_id IS NOT NULL OR cause = 'adjustment'),
  -- Only what the vendor owes back, or a net that commission exceeds, is negative.
  CHECK (amount_paise > 0 OR cause IN ('clawback', 'adjustment') OR rail = 'settlement_run')
);
CREATE INDEX ledger_obligations_vendor ON ledger_obligations (vendor_id);
CREATE INDEX ledger_obligations_order ON ledger_obligations (order_id) WHERE order_id IS NOT NULL;

CREATE TABLE ledger_discharges (
  id           bigserial PRIMARY KEY,
  vendor_id    text NOT NULL REFERENCES vendors(id),
  kind         text NOT NULL CHECK (kind IN ('order_transfer', 'batch_transfer', 'split', 'settlement_line', 'external_transfer', 'cash_kept', 'employer_direct', 'adjustment')),
  -- Our own name for the instrument (a transfer id, a payout id, a settlement line reference, an
  -- order id), unique per kind: one instrument is one discharge.
  instrument   text NOT NULL,
  -- The provider's or bank's id: trf_…, a UTR, ops' external reference.
  provider_ref text,
  amount_paise bigint NOT NULL,
  -- in_flight: it may still pay (a transfer sent, not settled; a split expected; a settlement line
  -- frozen in an open batch); paid; void: it did not pay (its items are inactive).
  state        text NOT NULL CHECK (state IN ('in_flight', 'paid', 'void')),
  created_at   timestamptz NOT NULL DEFAULT now(),
  UNIQUE (kind, instrument)
);
CREATE INDEX ledger_discharges_vendor ON ledger_discharges (vendor_id);

CREATE TABLE ledger_discharge_items (
  discharge_id  bigint NOT NULL REFERENCES ledger_discharges(id),
  obligation_id bigint NOT NULL REFERENCES ledger_obligations(id),
  amount_paise  bigint NOT NULL,
  active        boolean NOT NULL DEFAULT true,
  PRIMARY KEY (discharge_id, obligation_id)
);
-- Exactly once, in the database: one active instrument per obligation.
CREATE UNIQUE INDEX ledger_one_active_discharge ON ledger_discharge_items (obligation_id) WHERE active;
CREATE INDEX ledger_discharge_items_obligation ON ledger_discharge_items (obligation_id);

CREATE FUNCTION ledger_item_matches_obligation() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE o ledger_obligations; d ledger_discharges;
BEGIN
  SELECT * INTO o FROM ledger_obligations WHERE id = NEW.obligation_id;
  SELECT * INTO d FROM ledger_discharges WHERE id = NEW.discharge_id;
  IF NEW.amount_paise <> o.amount_paise THEN
    RAISE EXCEPTION 'ledger: obligation % is % paise, discharged as %', o.id, o.amount_paise, NEW.amount_paise USING ERRCODE = 'check_violation';
  END IF;
  IF d.vendor_id <> o.vendor_id THEN
    RAISE EXCEPTION 'ledger: discharge % pays vendor %, obligation % is owed to %', d.id, d.vendor_id, o.id, o.vendor_id USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER ledger_item_matches_obligation BEFORE INSERT OR UPDATE ON ledger_discharge_items
  FOR EACH ROW EXECUTE FUNCTION ledger_item_matches_obligation();

CREATE FUNCTION ledger_discharge_balances() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE did bigint; d ledger_discharges; items bigint; active_items int;
BEGIN
  IF TG_TABLE_NAME = 'ledger_discharge_items' THEN did := NEW.discharge_id; ELSE did := NEW.id; END IF;
  SELECT * INTO d FROM ledger_discharges WHERE id = did;
  SELECT COALESCE(sum(amount_paise), 0), count(*) INTO items, active_items FROM ledger_discharge_items WHERE discharge_id = did AND active;
  IF d.state = 'void' AND active_items > 0 THEN
    RAISE EXCEPTION 'ledger: void discharge % still pays % obligations', did, active_items USING ERRCODE = 'check_violation';
  END IF;
  IF d.state <> 'void' AND items <> d.amount_paise THEN
    RAISE EXCEPTION 'ledger: discharge % (% %) is % paise, its obligations sum to %', did, d.kind, d.instrument, d.amount_paise, items USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER ledger_discharge_balances AFTER INSERT OR UPDATE ON ledger_discharges
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_discharge_balances();
CREATE CONSTRAINT TRIGGER ledger_discharge_items_balance AFTER INSERT OR UPDATE ON ledger_discharge_items
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_discharge_balances();

-- Per vendor: owed (every obligation), paid and in flight (active items by their discharge's
-- state), open = owed - paid - in flight. The one reading of a vendor's balance.
CREATE VIEW ledger_vendor_balances AS
SELECT v.id AS vendor_id,
       COALESCE(o.owed, 0)::bigint AS owed_paise,
       COALESCE(i.paid, 0)::bigint AS paid_paise,
       COALESCE(i.in_flight, 0)::bigint AS in_flight_paise,
       (COALESCE(o.owed, 0) - COALESCE(i.paid, 0) - COALESCE(i.in_flight, 0))::bigint AS open_paise
  FROM vendors v
  LEFT JOIN (SELECT vendor_id, sum(amount_paise) AS owed FROM ledger_obligations GROUP BY vendor_id) o ON o.vendor_id = v.id
  LEFT JOIN (SELECT d.vendor_id, sum(it.amount_paise) FILTER (WHERE d.state = 'paid') AS paid, sum(it.amount_paise) FILTER (WHERE d.state = 'in_flight') AS in_flight
               FROM ledger_discharge_items it JOIN ledger_discharges d ON d.id = it.discharge_id WHERE it.active GROUP BY d.vendor_id) i ON i.vendor_id = v.id;
