-- The transactional outbox for work a webhook (or any money-in path) makes due but must not wait
-- for: today one kind, "start the payout workflow for order X". The row is written in the same
-- transaction as the payout row it is about, so it exists exactly when the payout does; the
-- drainer (src/outbox/drainer.ts, in the worker) deletes it once Temporal has the run.
--
-- next_attempt_at is both the retry time and the lease: the writer's own after-commit step gets
-- the first try (the row is written a few seconds in the future), a drainer that claims a batch
-- pushes it forward while it works, a failure pushes it forward by the backoff. A process that dies
-- holding a lease only delays the row until the lease runs out; nothing waits on a live process.
CREATE TABLE payouts_outbox (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  kind            text NOT NULL CHECK (kind IN ('start_payout')),
  order_id        text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  attempts        integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  last_error      text
);

-- The drainer's claim: due rows, oldest due first.
CREATE INDEX payouts_outbox_due ON payouts_outbox (next_attempt_at, id);
