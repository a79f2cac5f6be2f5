-- A database restored to an earlier point (issue 23 item 4) forgets sends the provider remembers.
-- Set when the system sees a payout's row older than what Temporal knows of it (its run completed,
-- or the run had recorded a send the row no longer shows): from this instant on, a transfer of ours
-- may exist for the payout that the row does not record. The next send is not made; the gate turns
-- it into a question to the provider's ledger (the resolver's listing by the payout's note, from this
-- instant), and only "nothing found" lets the payout be sent.
ALTER TABLE payouts ADD COLUMN provider_may_know_since timestamptz;
