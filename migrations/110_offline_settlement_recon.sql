-- Recon covers the offline rail (issue 20 item 4). The bank statement import also reads debits (a
-- `type` column, CR/DR): the payments the bank made from our account, each matched by recon to the
-- settlement line it paid, by UTR and amount. Credits stay in bank_statement_lines, unchanged.
CREATE TABLE bank_statement_debits (
  id             bigserial PRIMARY KEY,
  import_id      bigint NOT NULL REFERENCES bank_statement_imports(id),
  line_no        integer NOT NULL,
  utr            text NOT NULL,
  utr_normalised text NOT NULL,
  amount_paise   bigint NOT NULL CHECK (amount_paise > 0),
  value_date     date NOT NULL,
  narration      text NOT NULL DEFAULT '',
  -- As credits: overlapping files add a debit once.
  UNIQUE (utr_normalised, amount_paise, value_date)
);
CREATE INDEX bank_statement_debits_date ON bank_statement_debits (value_date);
CREATE INDEX bank_statement_debits_utr ON bank_statement_debits (utr_normalised);

-- A paid settlement line with no debit (past the next working day), a debit no paid line explains,
-- and a debit with the line's UTR but another amount.
ALTER TABLE recon_exceptions DROP CONSTRAINT recon_exceptions_reason_check;
ALTER TABLE recon_exceptions ADD CONSTRAINT recon_exceptions_reason_check CHECK (reason IN (
  'captured-not-settled', 'settled-not-in-app', 'amount-mismatch', 'fee-mismatch',
  'refund-not-in-app', 'transfer-not-in-app', 'settlement-sum-mismatch', 'partially-settled',
  'settlement-without-bank-credit', 'unmatched-bank-credit', 'adjustment', 'on-hold',
  'payment-disputed', 'refund-rejected', 'refund-failed', 'split-not-processed', 'split-paid-after-owed-offline',
  'refund-outside-app', 'reversal-not-in-app',
  'offline-payment-without-debit', 'offline-debit-amount-differs', 'unexplained-bank-debit'));
