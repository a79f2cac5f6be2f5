-- The kill switch for direct transfers: one row. Every change is audited in review_actions
-- (pause_transfers / resume_transfers) in the same transaction.
CREATE TABLE transfer_switch (
  id         integer PRIMARY KEY CHECK (id = 1),
  paused     boolean NOT NULL DEFAULT false,
  reason     text,
  changed_by text,
  changed_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO transfer_switch (id, paused) VALUES (1, false);
