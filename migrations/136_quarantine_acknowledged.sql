-- Ops acknowledge a set-aside webhook once they have read it (issue 39): who, when and what they
-- concluded, kept on the row (the audit log reads it from here). Acknowledging applies nothing: the
-- event's effect is recovered by the sweeps and fetches whatever the row says. A row is open until
-- acknowledged; the console lists open rows first and counts them.
ALTER TABLE quarantined_webhooks
  ADD COLUMN acknowledged_at  timestamptz,
  ADD COLUMN acknowledged_by  text,
  ADD COLUMN acknowledgement  text,
  ADD CONSTRAINT quarantined_webhooks_acknowledged_whole CHECK (
    (acknowledged_at IS NULL AND acknowledged_by IS NULL AND acknowledgement IS NULL)
    OR (acknowledged_at IS NOT NULL AND acknowledged_by IS NOT NULL AND length(acknowledgement) >= 3));
CREATE INDEX quarantined_webhooks_open ON quarantined_webhooks (id DESC) WHERE acknowledged_at IS NULL;
