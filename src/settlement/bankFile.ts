/** The bank bulk-payment file (pure): one row per batch line — the vendor's beneficiary, account and
 * IFSC, the amount in rupees and paise (and exact paise beside it), and the line's reference, which
 * the bank echoes on its response file and in the statement's narration. */
import { plainRupees } from '../domain/money';
import { csvFile } from '../reports/csv';

export interface BankFileRow { reference: string; amountPaise: number; beneficiaryName: string; accountNumber: string; ifsc: string }

export const BANK_FILE_HEADER = ['reference', 'beneficiary_name', 'account_number', 'ifsc', 'amount', 'amount_paise', 'narration'] as const;

/** Written by the one CSV writer, which refuses a cell that starts like a formula (issue 41). */
export function bankFileCsv(rows: readonly BankFileRow[]): string {
  return csvFile(BANK_FILE_HEADER, rows.map((r) => [r.reference, r.beneficiaryName, r.accountNumber, r.ifsc, plainRupees(r.amountPaise), r.amountPaise, `PAYOUTS ${r.reference}`]));
}
