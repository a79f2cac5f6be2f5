-- A split's transfer.processed / transfer.failed / transfer.reversed that arrives before the order's
-- capture (issue 36 item 6) names a transfer no split row of ours holds yet: markPaid writes the row
-- when the capture arrives. The hint is kept here (the transfer id and its source, the gateway order
-- or payment), and the capture that writes the split row follows it after its commit, then forgets it,
-- so the split is settled from the provider's answer without waiting for the split sweep. Only order
-- and payment sources are kept: a direct transfer from our balance is a payout's, never a split's.
CREATE TABLE early_transfer_hints (
  transfer_id text PRIMARY KEY CHECK (transfer_id ~ '^trf_[A-Za-z0-9]+$'),
  source      text NOT NULL CHECK (source ~ '^(order|pay)_[A-Za-z0-9]+$'),
  event       text NOT NULL CHECK (event IN ('transfer.processed', 'transfer.failed', 'transfer.reversed')),
  received_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX early_transfer_hints_source ON early_transfer_hints (source);
