-- Recon's ledger check (issue 36): every run derives the ledger again from the rails' rows and
-- compares it with the ledger as the rails wrote it; a vendor whose two differ is a critical
-- exception `ledger-drift`, naming the vendor and the amount (src/recon/ledgerDrift.ts).
ALTER TABLE recon_exceptions DROP CONSTRAINT recon_exceptions_reason_check;
ALTER TABLE recon_exceptions ADD CONSTRAINT recon_exceptions_reason_check CHECK (reason IN (
  'captured-not-settled', 'settled-not-in-app', 'amount-mismatch', 'fee-mismatch',
  'refund-not-in-app', 'transfer-not-in-app', 'settlement-sum-mismatch', 'partially-settled',
  'settlement-without-bank-credit', 'unmatched-bank-credit', 'adjustment', 'on-hold',
  'payment-disputed', 'refund-rejected', 'refund-failed', 'split-not-processed', 'split-paid-after-owed-offline',
  'refund-outside-app', 'reversal-not-in-app',
  'offline-payment-without-debit', 'offline-debit-amount-differs', 'unexplained-bank-debit', 'ledger-drift'));
