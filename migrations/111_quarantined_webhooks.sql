-- Signed Razorpay webhooks set aside instead of applied (issue 21 items 7 and 13), each answered 2xx:
-- Razorpay retries a non-2xx for 24 h and then disables the endpoint, which would also stop every
-- payment.captured. `schema_refused`: our zod schema refused the body (the envelope or the payload
-- an effect reads); `too_old` / `from_future`: its created_at is outside the replay window
-- (RAZORPAY_WEBHOOK_MAX_AGE_SECONDS, RAZORPAY_WEBHOOK_CLOCK_SKEW_SECONDS). The exact bytes and the
-- signature are kept so the event can be verified again and read by ops (GET /ops/webhooks/quarantine);
-- what it would have done is recovered by the missed-webhook sweep and the transfer and settlement
-- fetches, never from this row.
CREATE TABLE quarantined_webhooks (
  id               bigserial PRIMARY KEY,
  event_id         text NOT NULL UNIQUE,            -- x-razorpay-event-id (a redelivery adds no row)
  event_type       text,                            -- the body's `event`, when it is a string
  reason           text NOT NULL CHECK (reason IN ('schema_refused', 'too_old', 'from_future')),
  raw_body         bytea NOT NULL,
  signature        text NOT NULL,                   -- x-razorpay-signature, verified before the row is written
  event_created_at timestamptz,                     -- the body's created_at, when it is a number
  problem          jsonb NOT NULL,                  -- the parse issues, or the age and the window
  received_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX quarantined_webhooks_by_reason ON quarantined_webhooks (reason, id DESC);
