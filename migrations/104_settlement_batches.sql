-- Settlement runs (issue 20 item 3): finance pays the open offline ledger by bank bulk payment.
-- A run for a period nets each vendor's unbatched open lines; a vendor owed a positive amount gets
-- one batch line (one row of the bank file, with a reference the bank echoes); a vendor whose lines
-- net to zero or less carries them forward (they stay open, never a negative payment). The ledger
-- lines a batch line pays are its members; a line is an active member of at most one batch line
-- (open or paid), enforced by a partial unique index. Paid: the members leave the open ledger. Failed
-- or cancelled: the membership ends and the lines are open again.
CREATE TABLE settlement_batches (
  id            text PRIMARY KEY CHECK (id ~ '^stb_[A-Za-z0-9]{14}$'),
  workflow_id   text NOT NULL,
  run_id        text NOT NULL UNIQUE,
  period_from   date NOT NULL,
  period_to     date NOT NULL CHECK (period_to >= period_from),
  -- NULL: every vendor with open lines in the period.
  vendor_ids    text[],
  status        text NOT NULL CHECK (status IN ('open', 'closed', 'cancelled')),
  -- Vendors left out with why (no bank details, net not positive), for the summary.
  skipped       jsonb NOT NULL DEFAULT '[]',
  created_by    text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  closed_at     timestamptz,
  cancelled_by  text,
  cancel_reason text,
  cancelled_at  timestamptz
);
CREATE INDEX settlement_batches_open ON settlement_batches (created_at) WHERE status = 'open';

CREATE TABLE settlement_lines (
  id            bigserial PRIMARY KEY,
  batch_id      text NOT NULL REFERENCES settlement_batches(id),
  vendor_id     text NOT NULL REFERENCES vendors(id),
  -- What the bank echoes back on its response file and on the statement's narration.
  reference     text NOT NULL UNIQUE CHECK (reference ~ '^[A-Z0-9]{6,20}$'),
  amount_paise  bigint NOT NULL CHECK (amount_paise > 0),
  -- The beneficiary as frozen (no account number: that is decrypted only to write the bank file, and
  -- the file is refused if the vendor's bank details changed after this).
  beneficiary_name text NOT NULL,
  ifsc          text NOT NULL,
  account_masked text NOT NULL,
  bank_details_updated_at timestamptz NOT NULL,
  status        text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'paid', 'failed', 'cancelled')),
  utr           text,
  utr_normalised text,
  paid_on       date,
  failure_reason text,
  decided_by    text,
  decided_at    timestamptz,
  UNIQUE (batch_id, vendor_id),
  CHECK ((status = 'paid') = (utr IS NOT NULL AND utr_normalised IS NOT NULL AND paid_on IS NOT NULL)),
  CHECK (status <> 'failed' OR failure_reason IS NOT NULL)
);
-- A UTR pays one line.
CREATE UNIQUE INDEX settlement_lines_utr ON settlement_lines (utr_normalised) WHERE utr_normalised IS NOT NULL;

CREATE TABLE settlement_line_members (
  line_id       bigint NOT NULL REFERENCES settlement_lines(id),
  ledger_id     bigint NOT NULL REFERENCES offline_ledger(id),
  amount_paise  bigint NOT NULL,
  -- true while the line is open or paid; false once it failed or its batch was cancelled.
  active        boolean NOT NULL DEFAULT true,
  PRIMARY KEY (line_id, ledger_id)
);
CREATE UNIQUE INDEX settlement_line_members_one_active ON settlement_line_members (ledger_id) WHERE active;

-- Every settlement decision, append-only: start, paid, failed, cancel, import, bank file downloads.
CREATE TABLE settlement_actions (
  id          bigserial PRIMARY KEY,
  batch_id    text NOT NULL REFERENCES settlement_batches(id),
  line_id     bigint REFERENCES settlement_lines(id),
  actor       text NOT NULL,
  action      text NOT NULL CHECK (action IN ('start', 'paid', 'failed', 'cancel', 'import', 'bank_file')),
  detail      text,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE TRIGGER settlement_actions_append_only BEFORE UPDATE OR DELETE ON settlement_actions
  FOR EACH ROW EXECUTE FUNCTION refuse_change();

-- Owed offline and not yet paid by a settlement: a line paid through a batch leaves the open ledger.
-- `batch_line_id` names the open batch line a line is frozen in (NULL: not in a batch yet).
CREATE OR REPLACE VIEW offline_ledger_open AS
SELECT l.*, m.line_id AS batch_line_id
FROM offline_ledger l
LEFT JOIN settlement_line_members m ON m.ledger_id = l.id AND m.active
LEFT JOIN settlement_lines sl ON sl.id = m.line_id
WHERE l.route <> 'corporate_direct'
  AND (sl.status IS NULL OR sl.status <> 'paid')
  AND NOT EXISTS (
    SELECT 1 FROM payouts p
    WHERE p.order_id = l.order_id AND p.status NOT IN ('offline', 'rerouted'))
  AND NOT EXISTS (
    SELECT 1 FROM split_transfers s
    WHERE s.order_id = l.order_id AND s.status IN ('expected', 'processed'))
  AND NOT EXISTS (SELECT 1 FROM vendor_obligations o WHERE o.order_id = l.order_id);
