-- The open offline ledger, read from the ledger (issue 36, step 3; docs/ledger.md). Until now this
-- view derived "owed offline" by excluding every other rail (a NOT EXISTS per rail: a payout not
-- paid offline, a split not failed, an employer-direct obligation), and each new rail had to add
-- its own. Now a line is open when what it stands for is an obligation the ledger assigns to a
-- settlement run and no instrument pays, or only a settlement line frozen in an open batch may still
-- pay (then `batch_line_id` names that line, as before):
--   * a line of its own (a clawback, a split's reversal, a returned clawback): its obligation;
--   * an order's line: the order's net, or what a reversal of the transfer that paid it made owed
--     again (ops chose to pay it offline).
-- Each lookup is by an index (the obligation's source, its order).
DROP VIEW offline_ledger_open;
CREATE VIEW offline_ledger_open AS
SELECT l.*, m.line_id AS batch_line_id
FROM offline_ledger l
LEFT JOIN settlement_line_members m ON m.ledger_id = l.id AND m.active
WHERE (l.order_id IS NULL AND EXISTS (
         SELECT 1 FROM ledger_obligations o
          WHERE o.source = 'line:' || l.id AND o.rail = 'settlement_run'
            AND NOT EXISTS (SELECT 1 FROM ledger_discharge_items i JOIN ledger_discharges d ON d.id = i.discharge_id
                             WHERE i.obligation_id = o.id AND i.active AND NOT (d.kind = 'settlement_line' AND d.state = 'in_flight'))))
   OR (l.order_id IS NOT NULL AND EXISTS (
         SELECT 1 FROM ledger_obligations o
          WHERE o.order_id = l.order_id AND o.rail = 'settlement_run'
            AND (o.cause = 'order_net' OR (o.cause = 'reversal' AND o.payout_id IS NOT NULL))
            AND NOT EXISTS (SELECT 1 FROM ledger_discharge_items i JOIN ledger_discharges d ON d.id = i.discharge_id
                             WHERE i.obligation_id = o.id AND i.active AND NOT (d.kind = 'settlement_line' AND d.state = 'in_flight'))));
