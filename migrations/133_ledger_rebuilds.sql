-- The rebuild the upgrade to rails that write the ledger needs (127) is recorded when it is done,
-- not inferred from 127 being applied in the same run: a rebuild that failed or was stopped after
-- the migrations committed runs at the next start (src/ledger/upgrade.ts).
CREATE TABLE ledger_rebuilds (
  reason     text PRIMARY KEY,
  rebuilt_at timestamptz NOT NULL DEFAULT now()
);
