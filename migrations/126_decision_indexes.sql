-- Reads by owner that had no index (found in review, issue 36): ops' decisions by payout (the ops
-- page of a payout, the ledger's backfill reads each cancelled payout's decision) and finance's
-- settlement actions by batch (every batch view now says whether its bank file was downloaded).
CREATE INDEX review_actions_payout ON review_actions (payout_id, id) WHERE payout_id IS NOT NULL;
CREATE INDEX settlement_actions_batch ON settlement_actions (batch_id, action, id);
