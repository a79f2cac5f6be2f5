-- A batch's members reach their final status in ONE statement (payouts/repository.ts moveBatchMembers),
-- and the per-row deferred trigger of migration 070 then updated the same payout_metric_totals row once
-- per member, in one transaction: each update walks the row's versions made earlier in the same
-- transaction, so the cost grows with the square of the members (5,000: 0.4 s; 20,000: 5.9 s; a
-- 60,000-order batch's settlement ran past its activity's timeout and was retried for 90 s; issue 36
-- item 5). Rows leaving `batched` are now counted per statement instead: one delta row per status,
-- folded into the totals by a deferred trigger, so the totals' row lock is still taken at commit and
-- in event order (attempt before status), as 070 takes it for every other writer.

CREATE FUNCTION add_payout_metric_totals(p_metric text, p_label text, p_count bigint, p_paise bigint) RETURNS void
LANGUAGE sql AS $$
  INSERT INTO payout_metric_totals (metric, label, count, paise) VALUES (p_metric, p_label, p_count, p_paise)
  ON CONFLICT (metric, label) DO UPDATE SET count = payout_metric_totals.count + EXCLUDED.count, paise = payout_metric_totals.paise + EXCLUDED.paise;
$$;

-- Written and deleted in the same transaction: never holds a row once it commits.
CREATE TABLE payout_metric_deltas (
  id     bigserial PRIMARY KEY,
  metric text NOT NULL,
  label  text NOT NULL,
  count  bigint NOT NULL CHECK (count > 0),
  paise  bigint NOT NULL
);

CREATE FUNCTION fold_payout_metric_delta() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM add_payout_metric_totals(NEW.metric, NEW.label, NEW.count, NEW.paise);
  DELETE FROM payout_metric_deltas WHERE id = NEW.id;
  RETURN NULL;
END $$;

CREATE CONSTRAINT TRIGGER payout_metric_deltas_fold AFTER INSERT ON payout_metric_deltas
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION fold_payout_metric_delta();

-- Members (order rows leaving `batched` for a final status), one delta per status per statement. A
-- batch's own row (order_id NULL) is not counted, as in 118: its members carry the money. Every other
-- UPDATE of payouts leaves at the first check. The count runs as dynamic SQL, planned for the rows at
-- hand: a plan cached for one-row transition tables joins 60,000 members by nested loop (minutes).
CREATE FUNCTION count_batch_members_terminal() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM old_rows WHERE status = 'batched') THEN
    RETURN NULL;
  END IF;
  EXECUTE $q$
    INSERT INTO payout_metric_deltas (metric, label, count, paise)
    SELECT 'terminal_status', n.status, count(*), sum(n.amount_paise)
      FROM new_rows n JOIN old_rows o ON o.id = n.id
     WHERE o.status = 'batched' AND n.status IN ('settled', 'cancelled', 'rerouted', 'offline') AND n.order_id IS NOT NULL
     GROUP BY n.status $q$;
  RETURN NULL;
END $$;

CREATE TRIGGER payouts_count_batch_members_terminal AFTER UPDATE ON payouts
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION count_batch_members_terminal();

-- The per-row trigger leaves the rows the statement trigger counts.
DROP TRIGGER payouts_count_terminal_update ON payouts;
CREATE CONSTRAINT TRIGGER payouts_count_terminal_update AFTER UPDATE OF status ON payouts
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (NEW.status IN ('settled', 'cancelled', 'rerouted', 'offline') AND OLD.status IS DISTINCT FROM NEW.status AND OLD.status <> 'batched')
  EXECUTE FUNCTION count_payout_terminal_status();
