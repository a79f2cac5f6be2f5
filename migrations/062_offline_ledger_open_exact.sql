-- The open offline ledger lists exactly what finance must pay by hand. A direct-transfer payout that
-- a transfer may still pay (pending, failed, processing, accepted, parked, review) is never in it
-- while transfers are on; while they are paused, only what no transfer can be in flight for
-- (pending, failed, parked, review) is. Settled and ops-cancelled payouts are never owed; `offline`
-- (ops decided) and `rerouted` (the route changed to one that is paid offline; a corporate_direct
-- reroute is an obligation, excluded below) are.
CREATE OR REPLACE VIEW offline_ledger_open AS
SELECT l.*
FROM offline_ledger l
WHERE l.route <> 'corporate_direct'
  AND NOT EXISTS (
    SELECT 1 FROM payouts p
    WHERE p.order_id = l.order_id
      AND (p.status IN ('processing', 'accepted', 'settled', 'cancelled')
           OR (p.status IN ('pending', 'failed', 'parked', 'review')
               AND NOT (SELECT paused FROM transfer_switch WHERE id = 1))))
  AND NOT EXISTS (
    SELECT 1 FROM split_transfers s
    WHERE s.order_id = l.order_id AND s.status IN ('expected', 'processed'))
  AND NOT EXISTS (SELECT 1 FROM vendor_obligations o WHERE o.order_id = l.order_id);
