-- A refund made outside the app on the payment that keeps an order paid (issue 19 item 4), raised by
-- the refund's webhook with what the vendor owes back.
ALTER TABLE recon_exceptions DROP CONSTRAINT recon_exceptions_reason_check;
ALTER TABLE recon_exceptions ADD CONSTRAINT recon_exceptions_reason_check CHECK (reason IN (
  'captured-not-settled', 'settled-not-in-app', 'amount-mismatch', 'fee-mismatch',
  'refund-not-in-app', 'transfer-not-in-app', 'settlement-sum-mismatch', 'partially-settled',
  'settlement-without-bank-credit', 'unmatched-bank-credit', 'adjustment', 'on-hold',
  'payment-disputed', 'refund-rejected', 'refund-failed', 'split-not-processed', 'split-paid-after-owed-offline',
  'refund-outside-app'));
