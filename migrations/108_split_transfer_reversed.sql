-- A Route split reversed after it paid (issue 19 item 3) is `reversed`: the split paid the vendor,
-- then Razorpay took the reversed amount back. What the vendor is owed again is one offline-ledger
-- line per reversal, route `transfer_reversal`, of the reversal's `owed_paise` (transfer_reversals):
-- the amount reversed from outside, nothing when one of our own refunds reversed it. The order's own
-- line stays out of the open ledger, as for a processed split, so a partial reversal owes exactly
-- what was taken back. The line names its reversal (its order through it), as a clawback line names
-- its refund.
ALTER TABLE split_transfers DROP CONSTRAINT split_transfers_status_check;
ALTER TABLE split_transfers ADD CONSTRAINT split_transfers_status_check CHECK (status IN ('expected', 'processed', 'failed', 'reversed'));

ALTER TABLE offline_ledger ADD COLUMN transfer_reversal_id text UNIQUE REFERENCES transfer_reversals(id);

ALTER TABLE offline_ledger DROP CONSTRAINT offline_ledger_route_check;
ALTER TABLE offline_ledger ADD CONSTRAINT offline_ledger_route_check CHECK (route IN (
  'direct_transfer', 'split', 'cash', 'manual_offline', 'no_linked_account', 'below_transfer_minimum', 'corporate_direct',
  'refund_clawback', 'transfer_reversal'));

ALTER TABLE offline_ledger DROP CONSTRAINT offline_ledger_clawback_shape;
ALTER TABLE offline_ledger ADD CONSTRAINT offline_ledger_line_shape CHECK (CASE
  WHEN route = 'refund_clawback' THEN order_id IS NULL AND clawback_order_id IS NOT NULL AND outside_refund_id IS NOT NULL AND transfer_reversal_id IS NULL AND amount_paise < 0
  WHEN route = 'transfer_reversal' THEN order_id IS NULL AND clawback_order_id IS NULL AND outside_refund_id IS NULL AND transfer_reversal_id IS NOT NULL AND amount_paise > 0
  ELSE order_id IS NOT NULL AND clawback_order_id IS NULL AND outside_refund_id IS NULL AND transfer_reversal_id IS NULL END);

-- 104's open ledger (batch lines, a paid settlement line leaves it), with a reversed split's own line
-- kept out beside expected and processed ones. Dropped and created again: `l.*` gains a column
-- before 104's `batch_line_id`, which CREATE OR REPLACE cannot move.
DROP VIEW offline_ledger_open;
CREATE VIEW offline_ledger_open AS
SELECT l.*, m.line_id AS batch_line_id
FROM offline_ledger l
LEFT JOIN settlement_line_members m ON m.ledger_id = l.id AND m.active
LEFT JOIN settlement_lines sl ON sl.id = m.line_id
WHERE l.route <> 'corporate_direct'
  AND (sl.status IS NULL OR sl.status <> 'paid')
  AND NOT EXISTS (
    SELECT 1 FROM payouts p
    WHERE p.order_id = l.order_id AND p.status NOT IN ('offline', 'rerouted'))
  AND NOT EXISTS (
    SELECT 1 FROM split_transfers s
    WHERE s.order_id = l.order_id AND s.status IN ('expected', 'processed', 'reversed'))
  AND NOT EXISTS (SELECT 1 FROM vendor_obligations o WHERE o.order_id = l.order_id);
