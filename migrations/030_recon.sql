-- Reconciliation (design.md §8): app database ↔ gateway settlement rows ↔ bank statement.
-- Dates are IST calendar dates; instants are UTC.

-- One row per workflow run (a rerun of the same window is a new run with the same workflow id).
CREATE TABLE recon_runs (
  run_id       text PRIMARY KEY,              -- Temporal run id
  workflow_id  text NOT NULL,                 -- recon-<from>-<to>
  from_day     date NOT NULL,
  to_day       date NOT NULL,
  as_of_day    date NOT NULL,                 -- the IST day the calendar judged "overdue" against
  status       text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'completed', 'failed')),
  rows_fetched integer NOT NULL DEFAULT 0,
  summary      jsonb,
  started_at   timestamptz NOT NULL DEFAULT now(),
  finished_at  timestamptz,
  CHECK (from_day <= to_day)
);
CREATE INDEX recon_runs_workflow ON recon_runs (workflow_id, started_at);

-- Gateway rows exactly as received, upserted on entity id + settlement id (a payment settled in
-- two parts has two rows). Amounts are split out as paise columns for matching.
CREATE TABLE recon_rows (
  id             bigserial PRIMARY KEY,
  entity_id      text NOT NULL,
  settlement_id  text,
  type           text NOT NULL CHECK (type IN ('payment', 'refund', 'transfer', 'adjustment')),
  amount_paise   bigint NOT NULL,
  fee_paise      bigint NOT NULL DEFAULT 0,   -- includes tax
  tax_paise      bigint NOT NULL DEFAULT 0,
  credit_paise   bigint NOT NULL DEFAULT 0,
  debit_paise    bigint NOT NULL DEFAULT 0,
  on_hold        boolean NOT NULL,
  settled        boolean NOT NULL,
  recon_day      date NOT NULL,               -- the IST day whose report carried it
  created_at     timestamptz NOT NULL,        -- the entity's creation (capture for payments)
  settled_at     timestamptz,
  payment_id     text,
  order_id       text,                        -- gateway order id
  order_receipt  text,                        -- our order id
  settlement_utr text,
  raw            jsonb NOT NULL,
  first_seen_at  timestamptz NOT NULL DEFAULT now(),
  last_seen_at   timestamptz NOT NULL DEFAULT now(),
  UNIQUE NULLS NOT DISTINCT (entity_id, settlement_id)
);
CREATE INDEX recon_rows_day ON recon_rows (recon_day);
CREATE INDEX recon_rows_settlement ON recon_rows (settlement_id);

CREATE TABLE settlements (
  id           text PRIMARY KEY,              -- setl_…
  amount_paise bigint NOT NULL,
  fees_paise   bigint NOT NULL DEFAULT 0,
  tax_paise    bigint NOT NULL DEFAULT 0,
  status       text NOT NULL,
  utr          text,
  utr_normalised text,
  settled_day  date NOT NULL,                 -- IST
  created_at   timestamptz NOT NULL,
  raw          jsonb NOT NULL,
  updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX settlements_day ON settlements (settled_day);
CREATE INDEX settlements_utr ON settlements (utr_normalised);

-- A bank statement file; the same bytes imported twice add nothing.
CREATE TABLE bank_statement_imports (
  id          bigserial PRIMARY KEY,
  file_sha256 text NOT NULL UNIQUE,
  file_name   text,
  line_count  integer NOT NULL,
  lines_added integer NOT NULL,
  imported_by text NOT NULL,
  imported_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE bank_statement_lines (
  id             bigserial PRIMARY KEY,
  import_id      bigint NOT NULL REFERENCES bank_statement_imports(id),
  line_no        integer NOT NULL,
  utr            text NOT NULL,
  utr_normalised text NOT NULL,
  amount_paise   bigint NOT NULL CHECK (amount_paise > 0),
  value_date     date NOT NULL,
  narration      text NOT NULL DEFAULT '',
  -- A credit is identified by its UTR, amount and value date: overlapping files add it once.
  UNIQUE (utr_normalised, amount_paise, value_date)
);
CREATE INDEX bank_statement_lines_date ON bank_statement_lines (value_date);

-- Every difference, with a reason and what to do next. `key` (reason + references) makes reruns
-- update the same row instead of adding one; a resolved row is never touched by a run again.
CREATE TABLE recon_exceptions (
  id             bigserial PRIMARY KEY,
  key            text NOT NULL UNIQUE,
  class          text NOT NULL CHECK (class IN ('expected', 'unmatched', 'mismatched')),
  reason         text NOT NULL CHECK (reason IN (
                   'captured-not-settled', 'settled-not-in-app', 'amount-mismatch', 'fee-mismatch',
                   'refund-not-in-app', 'transfer-not-in-app', 'settlement-sum-mismatch', 'partially-settled',
                   'settlement-without-bank-credit', 'unmatched-bank-credit', 'adjustment', 'on-hold')),
  severity       text NOT NULL CHECK (severity IN ('low', 'medium', 'high', 'critical')),
  next_action    text NOT NULL,
  status         text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved', 'cleared')),
  day            date NOT NULL,               -- IST day the difference belongs to
  entity_id      text,
  settlement_id  text,
  order_id       text,
  bank_line_id   bigint REFERENCES bank_statement_lines(id),
  expected_paise bigint,
  actual_paise   bigint,
  details        jsonb NOT NULL DEFAULT '{}',
  first_run_id   text NOT NULL,
  last_run_id    text NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  resolved_at    timestamptz,
  resolved_by    text,
  resolution_note text,
  CHECK ((status = 'resolved') = (resolved_at IS NOT NULL AND resolved_by IS NOT NULL AND resolution_note IS NOT NULL))
);
CREATE INDEX recon_exceptions_listing ON recon_exceptions (status, class, reason, day);

-- Who resolved (or otherwise acted on) an exception, and why. Append-only.
CREATE TABLE recon_exception_actions (
  id           bigserial PRIMARY KEY,
  exception_id bigint NOT NULL REFERENCES recon_exceptions(id),
  actor        text NOT NULL,
  action       text NOT NULL CHECK (action IN ('resolve')),
  note         text NOT NULL CHECK (length(note) > 0),
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE TRIGGER recon_exception_actions_append_only BEFORE UPDATE OR DELETE ON recon_exception_actions
  FOR EACH ROW EXECUTE FUNCTION refuse_change();
