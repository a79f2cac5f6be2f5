-- What we owe that did not happen: a refund Razorpay refused for good or failed after accepting it
-- (the customer's money is still with us), a Route split not processed past its due date, and a
-- split that processed after it was already owed offline (a possible double payment).
ALTER TABLE recon_exceptions DROP CONSTRAINT recon_exceptions_reason_check;
ALTER TABLE recon_exceptions ADD CONSTRAINT recon_exceptions_reason_check CHECK (reason IN (
  'captured-not-settled', 'settled-not-in-app', 'amount-mismatch', 'fee-mismatch',
  'refund-not-in-app', 'transfer-not-in-app', 'settlement-sum-mismatch', 'partially-settled',
  'settlement-without-bank-credit', 'unmatched-bank-credit', 'adjustment', 'on-hold',
  'payment-disputed', 'refund-rejected', 'refund-failed', 'split-not-processed', 'split-paid-after-owed-offline'));
