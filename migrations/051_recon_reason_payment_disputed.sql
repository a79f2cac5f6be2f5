-- A payment the customer's bank disputes (payment.dispute.* webhooks) is a recon exception.
ALTER TABLE recon_exceptions DROP CONSTRAINT recon_exceptions_reason_check;
ALTER TABLE recon_exceptions ADD CONSTRAINT recon_exceptions_reason_check CHECK (reason IN (
  'captured-not-settled', 'settled-not-in-app', 'amount-mismatch', 'fee-mismatch',
  'refund-not-in-app', 'transfer-not-in-app', 'settlement-sum-mismatch', 'partially-settled',
  'settlement-without-bank-credit', 'unmatched-bank-credit', 'adjustment', 'on-hold',
  'payment-disputed'));
