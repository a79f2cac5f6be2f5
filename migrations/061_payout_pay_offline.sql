-- Ops may move a parked or review payout to offline payment (`pay_offline`): the payout becomes
-- `offline` (terminal: no transfer will ever be sent for it) and its amount shows in the open
-- offline ledger, once.
ALTER TABLE payouts DROP CONSTRAINT payouts_status_check;
ALTER TABLE payouts ADD CONSTRAINT payouts_status_check
  CHECK (status IN ('pending', 'processing', 'accepted', 'settled', 'failed', 'parked', 'review', 'cancelled', 'rerouted', 'offline'));

ALTER TABLE review_actions DROP CONSTRAINT review_actions_action_check;
ALTER TABLE review_actions ADD CONSTRAINT review_actions_action_check
  CHECK (action IN ('retry', 'mark_paid_externally', 'cancel', 'pay_offline', 'pause_transfers', 'resume_transfers'));
