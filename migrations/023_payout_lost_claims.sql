-- A run whose claim matched zero rows ends; each such run is recorded once (the lost-claims counter).
CREATE TABLE payout_lost_claims (
  workflow_run_id text PRIMARY KEY,
  order_id        text NOT NULL,
  status_seen     text,
  created_at      timestamptz NOT NULL DEFAULT now()
);
