/** Strict bank statement CSV parsing: header `utr,amount,value_date,narration` (any order, any
 * case), and optionally `type`: `CR`/`credit` (the default) or `DR`/`debit` — a payment the bank made
 * from our account (an offline settlement line). Amount is rupees with at most two decimals (`1234.50`) converted to paise without floats,
 * or an `amount_paise` column of integers. Every bad line is reported with its line number, and a
 * file with any bad line yields no lines at all. */
import { z } from 'zod';
import { readCsvRecords, type CsvProblem } from '../domain/csvRecords';

export { splitCsvLine, type CsvProblem } from '../domain/csvRecords';

export type BankDirection = 'credit' | 'debit';
export interface BankStatementLine { lineNo: number; direction: BankDirection; utr: string; utrNormalised: string; amountPaise: number; valueDate: string; narration: string }
export type BankCsvResult = { ok: true; lines: BankStatementLine[] } | { ok: false; problems: CsvProblem[] };

/** UTRs are compared trimmed and upper-cased (banks and Razorpay differ in case). */
export function normaliseUtr(utr: string): string {
  return utr.trim().toUpperCase();
}

/** "1,234.50" is refused: a thousands separator is ambiguous in a CSV cell. */
export function rupeesToPaise(text: string): number | null {
  const match = /^(\d{1,13})(?:\.(\d{1,2}))?$/.exec(text.trim());
  if (!match) return null;
  const paise = Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
  return Number.isSafeInteger(paise) ? paise : null;
}

/** A real calendar date: Date.parse alone accepts 2026-09-31. */
export function isCalendarDate(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const parsed = Date.parse(`${text}T00:00:00Z`);
  return !Number.isNaN(parsed) && new Date(parsed).toISOString().slice(0, 10) === text;
}

const isoDate = z.string().trim().refine(isCalendarDate, 'value_date must be a YYYY-MM-DD date');

export const utrSchema = z.string().trim().regex(/^[A-Za-z0-9]{6,40}$/, 'utr must be 6–40 letters or digits');

const lineSchema = z.object({
  utr: utrSchema,
  direction: z.enum(['credit', 'debit'], { message: 'type must be CR, DR, credit or debit' }),
  amountPaise: z.number().int().positive('amount must be positive (a debit says so in the type column)').max(Number.MAX_SAFE_INTEGER),
  valueDate: isoDate,
  narration: z.string().max(500, 'narration is longer than 500 characters'),
});

const DIRECTIONS: Record<string, BankDirection> = { cr: 'credit', credit: 'credit', dr: 'debit', debit: 'debit' };

export function parseBankStatementCsv(text: string): BankCsvResult {
  const table = readCsvRecords(text, ['utr', 'value_date'], [['amount', 'amount_paise']]);
  if (!table.ok) return table;
  const { col } = table;
  const amountCol = col('amount') >= 0 ? { index: col('amount'), paise: false } : { index: col('amount_paise'), paise: true };

  const problems: CsvProblem[] = [...table.problems];
  const lines: BankStatementLine[] = [];
  const seen = new Map<string, number>();
  table.records.forEach(({ lineNo, cells }) => {
    const amountText = cells[amountCol.index]!.trim();
    const amountPaise = amountCol.paise ? (/^\d+$/.test(amountText) ? Number(amountText) : NaN) : rupeesToPaise(amountText) ?? NaN;
    const typeText = col('type') >= 0 ? cells[col('type')]!.trim().toLowerCase() : 'credit';
    const parsed = lineSchema.safeParse({
      direction: DIRECTIONS[typeText] ?? typeText,
      utr: cells[col('utr')],
      amountPaise: Number.isNaN(amountPaise) ? undefined : amountPaise,
      valueDate: cells[col('value_date')],
      narration: col('narration') >= 0 ? cells[col('narration')]!.trim() : '',
    });
    if (!parsed.success) {
      const message = parsed.error.issues.map((issue) => (issue.path[0] === 'amountPaise' && Number.isNaN(amountPaise) ? `amount "${amountText}" is not a rupee amount like 1234.50` : issue.message)).join('; ');
      problems.push({ line: lineNo, message });
      return;
    }
    const utrNormalised = normaliseUtr(parsed.data.utr);
    const key = `${parsed.data.direction}|${utrNormalised}|${parsed.data.amountPaise}|${parsed.data.valueDate}`;
    const earlier = seen.get(key);
    if (earlier !== undefined) { problems.push({ line: lineNo, message: `duplicate of line ${earlier}` }); return; }
    seen.set(key, lineNo);
    lines.push({ lineNo, direction: parsed.data.direction, utr: parsed.data.utr, utrNormalised, amountPaise: parsed.data.amountPaise, valueDate: parsed.data.valueDate, narration: parsed.data.narration });
  });
  if (problems.length > 0) return { ok: false, problems: problems.sort((a, b) => a.line - b.line) };
  if (lines.length === 0) return { ok: false, problems: [{ line: 2, message: 'the file has no statement lines' }] };
  return { ok: true, lines };
}
