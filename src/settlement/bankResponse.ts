/** The bank's response to a bulk-payment file (pure parsing): `reference,status,utr,value_date,amount`
 * and, for a failed row, `reason`. Status is `paid` or `failed` (any case). A paid row carries the
 * bank's UTR and value date; the amount, in rupees (`1234.50`) or an `amount_paise` column, must be
 * the line's (checked against the batch by the import). Any bad row: nothing is imported. */
import { z } from 'zod';
import { readCsvRecords, type CsvProblem } from '../domain/csvRecords';
import { csvSafe } from '../domain/schemas';
import { isCalendarDate, normaliseUtr, rupeesToPaise, utrSchema } from '../recon/bankStatementCsv';
import { SETTLEMENT_REFERENCE } from './references';

export type BankResponseRow =
  | { lineNo: number; reference: string; status: 'paid'; utr: string; utrNormalised: string; paidOn: string; amountPaise: number }
  | { lineNo: number; reference: string; status: 'failed'; reason: string; amountPaise: number };

export type BankResponseResult = { ok: true; rows: BankResponseRow[] } | { ok: false; problems: CsvProblem[] };

const rowSchema = z.discriminatedUnion('status', [
  z.object({ status: z.literal('paid'), reference: z.string().regex(SETTLEMENT_REFERENCE, 'reference is not a settlement line reference'), utr: utrSchema, paidOn: z.string().refine(isCalendarDate, 'value_date must be a YYYY-MM-DD date'), amountPaise: z.number().int().positive() }),
  z.object({ status: z.literal('failed'), reference: z.string().regex(SETTLEMENT_REFERENCE, 'reference is not a settlement line reference'), reason: csvSafe(z.string().trim().min(1, 'a failed row needs a reason').max(500)), amountPaise: z.number().int().positive() }),
]);

export function parseBankResponse(text: string): BankResponseResult {
  const table = readCsvRecords(text, ['reference', 'status'], [['amount', 'amount_paise']]);
  if (!table.ok) return table;
  const { col } = table;
  const cell = (cells: string[], name: string) => (col(name) >= 0 ? cells[col(name)]!.trim() : '');
  const problems: CsvProblem[] = [...table.problems];
  const rows: BankResponseRow[] = [];
  const seen = new Map<string, number>();
  for (const { lineNo, cells } of table.records) {
    const amountText = col('amount') >= 0 ? cell(cells, 'amount') : cell(cells, 'amount_paise');
    const amountPaise = col('amount') >= 0 ? rupeesToPaise(amountText) : (/^\d+$/.test(amountText) ? Number(amountText) : null);
    const parsed = rowSchema.safeParse({
      status: cell(cells, 'status').toLowerCase(),
      reference: cell(cells, 'reference').toUpperCase(),
      utr: cell(cells, 'utr'),
      paidOn: cell(cells, 'value_date'),
      reason: cell(cells, 'reason'),
      amountPaise: amountPaise ?? undefined,
    });
    const reference = cell(cells, 'reference').toUpperCase();
    const earlier = seen.get(reference);
    if (earlier === undefined) seen.set(reference, lineNo);
    if (!parsed.success) {
      problems.push({ line: lineNo, message: parsed.error.issues.map((i) => (i.path[0] === 'amountPaise' ? `amount "${amountText}" is not an amount like 1234.50` : i.path[0] === 'status' ? `status "${cell(cells, 'status')}" is not paid or failed` : i.code === 'custom' ? `${String(i.path[0])} ${i.message}` : i.message)).join('; ') });
      continue;
    }
    if (earlier !== undefined) { problems.push({ line: lineNo, message: `reference ${reference} is also on line ${earlier}` }); continue; }
    rows.push(parsed.data.status === 'paid'
      ? { lineNo, reference: parsed.data.reference, status: 'paid', utr: parsed.data.utr, utrNormalised: normaliseUtr(parsed.data.utr), paidOn: parsed.data.paidOn, amountPaise: parsed.data.amountPaise }
      : { lineNo, reference: parsed.data.reference, status: 'failed', reason: parsed.data.reason, amountPaise: parsed.data.amountPaise });
  }
  if (problems.length > 0) return { ok: false, problems: problems.sort((a, b) => a.line - b.line) };
  if (rows.length === 0) return { ok: false, problems: [{ line: 2, message: 'the file has no rows' }] };
  return { ok: true, rows };
}
