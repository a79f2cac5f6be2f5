-- Running totals for the /metrics scrape (src/observability/metrics.ts), so a scrape reads a few
-- rows instead of counting tables that grow for ever: attempts by outcome, lost claims, and payouts
-- that reached a terminal status (settled, cancelled, rerouted, offline: never left again, so the
-- totals only grow). Live statuses (pending … review) are counted from the payouts themselves
-- through the payouts_status index: they are the open backlog, small by nature.
--
-- Kept by deferred triggers: the row lock on a total is taken at commit, after the transaction's
-- own work, so concurrent writers queue on it only for the length of their commit. Every writer
-- today locks its payout row first and touches at most one total of each kind, attempt before
-- status (src/payouts/outcomes.ts), so the lock order is the same everywhere.
CREATE TABLE payout_metric_totals (
  metric text NOT NULL CHECK (metric IN ('attempt_outcome', 'terminal_status', 'lost_claim')),
  label  text NOT NULL,
  count  bigint NOT NULL DEFAULT 0 CHECK (count >= 0),
  paise  bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (metric, label)
);

CREATE FUNCTION add_payout_metric_total(p_metric text, p_label text, p_paise bigint) RETURNS void
LANGUAGE sql AS $$
  INSERT INTO payout_metric_totals (metric, label, count, paise) VALUES (p_metric, p_label, 1, p_paise)
  ON CONFLICT (metric, label) DO UPDATE SET count = payout_metric_totals.count + 1, paise = payout_metric_totals.paise + EXCLUDED.paise;
$$;

CREATE FUNCTION count_payout_attempt() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM add_payout_metric_total('attempt_outcome', NEW.outcome, 0);
  RETURN NULL;
END $$;

CREATE FUNCTION count_payout_lost_claim() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM add_payout_metric_total('lost_claim', '', 0);
  RETURN NULL;
END $$;

CREATE FUNCTION count_payout_terminal_status() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM add_payout_metric_total('terminal_status', NEW.status, NEW.amount_paise);
  RETURN NULL;
END $$;

-- Creating a trigger locks its table against writers until this migration commits, so the
-- backfill below sees every row and no write slips between it and the triggers.
CREATE CONSTRAINT TRIGGER payout_attempts_count AFTER INSERT ON payout_attempts
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION count_payout_attempt();
CREATE CONSTRAINT TRIGGER payout_lost_claims_count AFTER INSERT ON payout_lost_claims
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION count_payout_lost_claim();
CREATE CONSTRAINT TRIGGER payouts_count_terminal_insert AFTER INSERT ON payouts
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (NEW.status IN ('settled', 'cancelled', 'rerouted', 'offline'))
  EXECUTE FUNCTION count_payout_terminal_status();
CREATE CONSTRAINT TRIGGER payouts_count_terminal_update AFTER UPDATE OF status ON payouts
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (NEW.status IN ('settled', 'cancelled', 'rerouted', 'offline') AND OLD.status IS DISTINCT FROM NEW.status)
  EXECUTE FUNCTION count_payout_terminal_status();

INSERT INTO payout_metric_totals (metric, label, count)
SELECT 'attempt_outcome', outcome, count(*) FROM payout_attempts GROUP BY outcome;
INSERT INTO payout_metric_totals (metric, label, count)
SELECT 'lost_claim', '', count(*) FROM payout_lost_claims HAVING count(*) > 0;
INSERT INTO payout_metric_totals (metric, label, count, paise)
SELECT 'terminal_status', status, count(*), sum(amount_paise) FROM payouts
WHERE status IN ('settled', 'cancelled', 'rerouted', 'offline') GROUP BY status;
