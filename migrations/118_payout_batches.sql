-- Payout schedules per employer–vendor pair (issue 22 item 4). `per_order` (the default) pays each
-- order by its own transfer, as before. `hourly` and `daily` gather the pair's direct-transfer orders
-- into one batch per window, closed at the cutoff (the top of each IST hour, or `payout_cutoff_ist`
-- each day) and paid by ONE direct transfer for the sum.
ALTER TABLE employer_vendor
  ADD COLUMN payout_schedule   text NOT NULL DEFAULT 'per_order' CHECK (payout_schedule IN ('per_order', 'hourly', 'daily')),
  ADD COLUMN payout_cutoff_ist time NOT NULL DEFAULT '18:00';

-- A batch: one pair, one window [window_start, cutoff_at). Its id is derived from the pair, the
-- schedule and the cutoff (domain/batchWindow.ts), so every joiner names the same batch, and it is
-- the first idempotency key of the batch's transfer.
CREATE TABLE payout_batches (
  id           text PRIMARY KEY CHECK (length(id) BETWEEN 4 AND 36),
  employer_id  text NOT NULL REFERENCES employers(id),
  vendor_id    text NOT NULL REFERENCES vendors(id),
  schedule     text NOT NULL CHECK (schedule IN ('hourly', 'daily')),
  window_start timestamptz NOT NULL,
  cutoff_at    timestamptz NOT NULL CHECK (cutoff_at > window_start),
  -- open: orders may join; closed: the sum is fixed and its payout row (below) carries the transfer.
  status       text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'closed')),
  closed_at    timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now(),
  UNIQUE (employer_id, vendor_id, schedule, cutoff_at),
  CHECK ((status = 'closed') = (closed_at IS NOT NULL))
);
CREATE INDEX payout_batches_open ON payout_batches (cutoff_at) WHERE status = 'open';

-- An order belongs to at most one batch: the primary key is the order.
CREATE TABLE payout_batch_orders (
  order_id     text PRIMARY KEY REFERENCES orders(id),
  batch_id     text NOT NULL REFERENCES payout_batches(id),
  amount_paise bigint NOT NULL CHECK (amount_paise > 0),
  joined_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX payout_batch_orders_batch ON payout_batch_orders (batch_id);

-- A closed batch's transfer is carried by a payouts row of its own (order_id NULL, batch_id set), so
-- the claim, the three-valued outcome, the notes-based resolver, the attempt cap and parking, and
-- settlement by webhook, poll and recon are the very code per-order payouts run. A member order's
-- own row is `batched` while the batch pays it, then takes the batch's final status.
ALTER TABLE payouts ALTER COLUMN order_id DROP NOT NULL;
ALTER TABLE payouts ADD COLUMN batch_id text UNIQUE REFERENCES payout_batches(id);
ALTER TABLE payouts ADD CONSTRAINT payouts_order_or_batch CHECK ((order_id IS NULL) <> (batch_id IS NULL));
ALTER TABLE payouts DROP CONSTRAINT payouts_status_check;
ALTER TABLE payouts ADD CONSTRAINT payouts_status_check
  CHECK (status IN ('pending', 'processing', 'accepted', 'settled', 'failed', 'parked', 'review', 'cancelled', 'rerouted', 'offline', 'batched'));

-- The terminal totals count orders: a batch's own row would count its members' money twice.
CREATE OR REPLACE FUNCTION count_payout_terminal_status() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.order_id IS NOT NULL THEN
    PERFORM add_payout_metric_total('terminal_status', NEW.status, NEW.amount_paise);
  END IF;
  RETURN NULL;
END $$;
