/** Recon of the offline rail (issue 20 item 4): every settlement line recorded paid in the window needs
 * a bank debit with its UTR and amount (expected until the next working day after its value date; a
 * debit with the UTR and another amount is a mismatch), and every debit valued in the window needs a
 * paid line with its UTR. One statement over `recon_calendar` and `recon_found`, run by
 * matchWindowInDatabase in its transaction. $1/$2: the window's days, $3: as-of. */
export function offlineDebitsSql(foundColumns: string, laterWins: string): string {
  return `
  WITH paid AS (
    SELECT l.reference, l.batch_id, l.vendor_id, l.amount_paise, l.utr_normalised, l.paid_on, cal.bank_credit_due AS due,
      EXISTS (SELECT 1 FROM bank_statement_debits d WHERE d.utr_normalised = l.utr_normalised AND d.amount_paise = l.amount_paise) AS debited,
      (SELECT d FROM bank_statement_debits d WHERE d.utr_normalised = l.utr_normalised ORDER BY d.id LIMIT 1) AS same_utr
    FROM settlement_lines l JOIN recon_calendar cal ON cal.day = l.paid_on
    WHERE l.status = 'paid' AND l.paid_on BETWEEN $1 AND $2
  ),
  found AS (
    INSERT INTO recon_found (${foundColumns})
    SELECT CASE WHEN (p.same_utr).id IS NULL THEN 'offline-payment-without-debit' ELSE 'offline-debit-amount-differs' END || '|' || p.reference,
      CASE WHEN (p.same_utr).id IS NULL THEN 'offline-payment-without-debit' ELSE 'offline-debit-amount-differs' END,
      CASE WHEN (p.same_utr).id IS NOT NULL THEN 'mismatched' WHEN $3 <= p.due THEN 'expected' ELSE 'unmatched' END,
      p.paid_on, p.reference, NULL::text, NULL::text, NULL::bigint, p.amount_paise, (p.same_utr).amount_paise,
      jsonb_build_object('utr', p.utr_normalised, 'batchId', p.batch_id, 'vendorId', p.vendor_id, 'debitId', (p.same_utr).id, 'dueDay', to_char(p.due, 'YYYY-MM-DD'))
    FROM paid p WHERE NOT p.debited
    UNION ALL
    SELECT 'unexplained-bank-debit|' || d.id, 'unexplained-bank-debit', 'unmatched', d.value_date, NULL::text, NULL::text, NULL::text, NULL::bigint, NULL::bigint, d.amount_paise,
      jsonb_build_object('utr', d.utr_normalised, 'debitId', d.id, 'narration', d.narration)
    FROM bank_statement_debits d
    WHERE d.value_date BETWEEN $1 AND $2
      -- a paid line with the UTR explains it, or raised the amount difference on its own side
      AND NOT EXISTS (SELECT 1 FROM settlement_lines l WHERE l.status = 'paid' AND l.utr_normalised = d.utr_normalised)
    ${laterWins}
  )
  SELECT (SELECT count(*) FROM paid WHERE debited)::bigint AS matched`;
}
