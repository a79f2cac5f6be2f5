-- A clawback (route `refund_clawback`: the vendor's share of a refund made outside the app, owed back
-- because its payout's transfer had left) stops being owed when ops cancel that payout: the vendor
-- kept nothing of the order (issue 36 item 4). The ledger keeps it, with who took it back and why,
-- and the open offline ledger no longer lists it. If a settlement line the bank paid had already
-- netted it off (history: that line keeps its amount, which matched its bank debit), the vendor is
-- owed the amount again: a new positive line, route `clawback_returned`, naming the clawback it
-- returns (at most one per clawback), paid by the next settlement run.
ALTER TABLE offline_ledger
  ADD COLUMN taken_back_at     timestamptz,
  ADD COLUMN taken_back_by     text,
  ADD COLUMN taken_back_reason text,
  ADD COLUMN returns_clawback_id bigint UNIQUE REFERENCES offline_ledger(id),
  ADD CONSTRAINT offline_ledger_taken_back_shape CHECK (
    (taken_back_at IS NULL AND taken_back_by IS NULL AND taken_back_reason IS NULL)
    OR (route = 'refund_clawback' AND taken_back_at IS NOT NULL AND taken_back_by IS NOT NULL AND taken_back_reason IS NOT NULL));

ALTER TABLE offline_ledger DROP CONSTRAINT offline_ledger_route_check;
ALTER TABLE offline_ledger ADD CONSTRAINT offline_ledger_route_check CHECK (route IN (
  'direct_transfer', 'split', 'cash', 'manual_offline', 'no_linked_account', 'below_transfer_minimum', 'corporate_direct',
  'refund_clawback', 'transfer_reversal', 'clawback_returned'));

ALTER TABLE offline_ledger DROP CONSTRAINT offline_ledger_line_shape;
ALTER TABLE offline_ledger ADD CONSTRAINT offline_ledger_line_shape CHECK (CASE
  WHEN route = 'refund_clawback' THEN order_id IS NULL AND clawback_order_id IS NOT NULL AND outside_refund_id IS NOT NULL AND transfer_reversal_id IS NULL AND returns_clawback_id IS NULL AND amount_paise < 0
  WHEN route = 'transfer_reversal' THEN order_id IS NULL AND clawback_order_id IS NULL AND outside_refund_id IS NULL AND transfer_reversal_id IS NOT NULL AND returns_clawback_id IS NULL AND amount_paise > 0
  WHEN route = 'clawback_returned' THEN order_id IS NULL AND clawback_order_id IS NOT NULL AND outside_refund_id IS NULL AND transfer_reversal_id IS NULL AND returns_clawback_id IS NOT NULL AND amount_paise > 0
  ELSE order_id IS NOT NULL AND clawback_order_id IS NULL AND outside_refund_id IS NULL AND transfer_reversal_id IS NULL AND returns_clawback_id IS NULL END);

-- 108's open ledger, less the clawbacks taken back. Dropped and created again: `l.*` gains columns
-- before `batch_line_id`, which CREATE OR REPLACE cannot move.
DROP VIEW offline_ledger_open;
CREATE VIEW offline_ledger_open AS
SELECT l.*, m.line_id AS batch_line_id
FROM offline_ledger l
LEFT JOIN settlement_line_members m ON m.ledger_id = l.id AND m.active
LEFT JOIN settlement_lines sl ON sl.id = m.line_id
WHERE l.route <> 'corporate_direct'
  AND l.taken_back_at IS NULL
  AND (sl.status IS NULL OR sl.status <> 'paid')
  AND NOT EXISTS (
    SELECT 1 FROM payouts p
    WHERE p.order_id = l.order_id AND p.status NOT IN ('offline', 'rerouted'))
  AND NOT EXISTS (
    SELECT 1 FROM split_transfers s
    WHERE s.order_id = l.order_id AND s.status IN ('expected', 'processed', 'reversed'))
  AND NOT EXISTS (SELECT 1 FROM vendor_obligations o WHERE o.order_id = l.order_id);
