-- A discharge's balance (its amount = what its active items pay) was checked when items were added
-- or changed (130), not when they were deleted: a statement that deleted some of a discharge's
-- items left it paying less than its amount, unchecked. Deleting items now touches each discharge
-- they belonged to, once per statement, so its deferred balance check (125) runs at commit too (a
-- discharge deleted in the same transaction is gone by then, and has nothing to check).
CREATE TRIGGER ledger_items_deleted_touch AFTER DELETE ON ledger_discharge_items
  REFERENCING OLD TABLE AS changed_items FOR EACH STATEMENT EXECUTE FUNCTION ledger_items_touch_discharges();
