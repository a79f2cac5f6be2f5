-- A Route split is followed up with the provider until its transfer is final (issue 10 item 4):
-- webhooks are only hints, so the split sweep (src/workflows/splitTransfer.ts) fetches the payment's
-- transfers for every split still `expected`. What the provider said is kept on the row (for the
-- decision and for recon) and every check is appended to split_transfer_checks.
--
-- `status` keeps its meaning for the `offline_ledger_open` view: `expected` = not final (created,
-- pending, or failed while Razorpay still retries it), `processed` = paid by the split, `failed` =
-- final (owed offline).
ALTER TABLE split_transfers
  ADD COLUMN provider_status text CHECK (provider_status IN ('created', 'pending', 'processed', 'failed', 'reversed', 'partially_reversed')),
  ADD COLUMN last_code       text,
  -- First time the provider reported the transfer failed; Razorpay retries it on following days.
  ADD COLUMN first_failed_at timestamptz,
  ADD COLUMN checked_at      timestamptz,
  -- When the row became final (`processed`, or `failed` once Razorpay stopped retrying).
  ADD COLUMN final_at        timestamptz,
  -- The row was `failed` (owed offline) when the provider later said processed: a human must check
  -- that the vendor was not also paid offline.
  ADD COLUMN processed_after_final boolean NOT NULL DEFAULT false;

-- The sweep's selection: open splits, least recently checked first.
CREATE INDEX split_transfers_open ON split_transfers (checked_at NULLS FIRST, created_at) WHERE status = 'expected';

CREATE TABLE split_transfer_checks (
  id                   bigserial PRIMARY KEY,
  order_id             text NOT NULL REFERENCES split_transfers(order_id),
  -- `webhook transfer.failed`, `sweep`, …: what made us ask the provider.
  trigger              text NOT NULL,
  provider_transfer_id text,
  provider_status      text,
  status_after         text NOT NULL,
  raw                  jsonb,
  created_at           timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX split_transfer_checks_order ON split_transfer_checks (order_id, id);
CREATE TRIGGER split_transfer_checks_append_only BEFORE UPDATE OR DELETE ON split_transfer_checks
  FOR EACH ROW EXECUTE FUNCTION refuse_change();
