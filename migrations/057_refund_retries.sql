-- Refund requests are retried with backoff after a transient rejection (issue 10 item 9). The key
-- sent as X-Refund-Idempotency is the refund id, replaced by `<id>_r<n>` after a definitive
-- rejection (the provider may replay a remembered rejection); the receipt (our refund id) still
-- makes a second refund impossible. Every try is appended to refund_attempts.
ALTER TABLE refunds
  ADD COLUMN attempts        integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  ADD COLUMN idempotency_key text,
  ADD COLUMN reverse_all     boolean,
  ADD COLUMN next_attempt_at timestamptz,
  ADD COLUMN last_code       text,
  ADD COLUMN last_error      jsonb,
  ADD COLUMN rejected_at     timestamptz,
  ADD CONSTRAINT refunds_rejected_when CHECK ((status = 'rejected') = (rejected_at IS NOT NULL));

CREATE INDEX refunds_by_status ON refunds (status, updated_at) WHERE status IN ('requested', 'rejected', 'failed');

CREATE TABLE refund_attempts (
  id              bigserial PRIMARY KEY,
  refund_id       text NOT NULL REFERENCES refunds(id),
  attempt_no      integer NOT NULL,
  idempotency_key text NOT NULL,
  reverse_all     boolean NOT NULL,
  outcome         text NOT NULL CHECK (outcome IN ('accepted', 'already_made', 'transient_rejection', 'rejected', 'unknown')),
  provider_code   text,
  raw             jsonb,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX refund_attempts_refund ON refund_attempts (refund_id, id);
CREATE TRIGGER refund_attempts_append_only BEFORE UPDATE OR DELETE ON refund_attempts
  FOR EACH ROW EXECUTE FUNCTION refuse_change();
