-- A discharge's balance (its amount = what its active items pay) was checked by a deferred trigger
-- for EACH item row: a batch transfer paying 60,000 orders summed its 60,000 items 60,000 times at
-- commit (quadratic: the claim of a 60,000-order batch never committed). Now a statement that adds or
-- changes items touches each discharge it wrote items for, once, and the discharge's own deferred
-- trigger (125's ledger_discharge_balances, FOR EACH ROW on ledger_discharges) checks it at commit:
-- once per discharge per statement, whatever the number of items.
DROP TRIGGER ledger_discharge_items_balance ON ledger_discharge_items;

CREATE FUNCTION ledger_items_touch_discharges() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE ledger_discharges d SET state = d.state WHERE d.id IN (SELECT DISTINCT discharge_id FROM changed_items);
  RETURN NULL;
END $$;
CREATE TRIGGER ledger_items_inserted_touch AFTER INSERT ON ledger_discharge_items
  REFERENCING NEW TABLE AS changed_items FOR EACH STATEMENT EXECUTE FUNCTION ledger_items_touch_discharges();
CREATE TRIGGER ledger_items_updated_touch AFTER UPDATE ON ledger_discharge_items
  REFERENCING NEW TABLE AS changed_items FOR EACH STATEMENT EXECUTE FUNCTION ledger_items_touch_discharges();
