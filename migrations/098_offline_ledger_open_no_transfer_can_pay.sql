-- Owed offline means no transfer can pay it (issue 20): the open offline ledger never lists a
-- direct-transfer payout that a claim may still take or a transfer may be paying (pending, failed,
-- processing, accepted, parked, review), paused or not. Paying one by hand is the ops decision
-- `offline`, taken under the payout's row lock, after which no claim takes it. Settled and
-- cancelled payouts are never owed; `offline` (ops decided) and `rerouted` (the route changed to one
-- that is paid offline; a corporate_direct reroute is an obligation, excluded below) are. A status
-- added later is not owed offline until this view says so.
CREATE OR REPLACE VIEW offline_ledger_open AS
SELECT l.*
FROM offline_ledger l
WHERE l.route <> 'corporate_direct'
  AND NOT EXISTS (
    SELECT 1 FROM payouts p
    WHERE p.order_id = l.order_id AND p.status NOT IN ('offline', 'rerouted'))
  AND NOT EXISTS (
    SELECT 1 FROM split_transfers s
    WHERE s.order_id = l.order_id AND s.status IN ('expected', 'processed'))
  AND NOT EXISTS (SELECT 1 FROM vendor_obligations o WHERE o.order_id = l.order_id);
