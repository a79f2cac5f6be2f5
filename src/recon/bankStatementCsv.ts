/** Strict bank statement CSV parsing: header `utr,amount,value_date,narration` (any order, any
 * case). Amount is rupees with at most two decimals (`1234.50`) converted to paise without floats,
 * or an `amount_paise` column of integers. Every bad line is reported with its line number, and a
 * file with any bad line yields no lines at all. */
import { z } from 'zod';

export interface BankStatementLine { lineNo: number; utr: string; utrNormalised: string; amountPaise: number; valueDate: string; narration: string }
export interface CsvProblem { line: number; message: string }
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

const lineSchema = z.object({
  utr: z.string().trim().regex(/^[A-Za-z0-9]{6,40}$/, 'utr must be 6–40 letters or digits'),
  amountPaise: z.number().int().positive('amount must be a positive credit').max(Number.MAX_SAFE_INTEGER),
  valueDate: isoDate,
  narration: z.string().max(500, 'narration is longer than 500 characters'),
});

/** RFC 4180 fields: quotes around fields, doubled quotes inside them. */
export function splitCsvLine(line: string): string[] | null {
  const fields: string[] = [];
  let i = 0;
  while (i <= line.length) {
    if (line[i] === '"') {
      let value = '';
      i += 1;
      for (;;) {
        if (i >= line.length) return null;
        if (line[i] === '"') {
          if (line[i + 1] === '"') { value += '"'; i += 2; continue; }
          i += 1;
          break;
        }
        value += line[i];
        i += 1;
      }
      if (i < line.length && line[i] !== ',') return null;
      fields.push(value);
      i += 1;
    } else {
      const end = line.indexOf(',', i);
      const stop = end === -1 ? line.length : end;
      fields.push(line.slice(i, stop));
      i = stop + 1;
    }
  }
  return fields;
}

export function parseBankStatementCsv(text: string): BankCsvResult {
  const rawLines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  while (rawLines.length > 0 && rawLines[rawLines.length - 1]!.trim() === '') rawLines.pop();
  const header = splitCsvLine(rawLines[0] ?? '')?.map((h) => h.trim().toLowerCase());
  if (!header || rawLines.length === 0) return { ok: false, problems: [{ line: 1, message: 'the file is empty or has no header' }] };
  const col = (name: string) => header.indexOf(name);
  const amountCol = col('amount') >= 0 ? { index: col('amount'), paise: false } : { index: col('amount_paise'), paise: true };
  const missing = ['utr', 'value_date'].filter((c) => col(c) < 0).concat(amountCol.index < 0 ? ['amount'] : []);
  if (missing.length > 0) return { ok: false, problems: [{ line: 1, message: `header lacks column(s): ${missing.join(', ')}` }] };

  const problems: CsvProblem[] = [];
  const lines: BankStatementLine[] = [];
  const seen = new Map<string, number>();
  rawLines.slice(1).forEach((raw, i) => {
    const lineNo = i + 2;
    if (raw.trim() === '') { problems.push({ line: lineNo, message: 'empty line' }); return; }
    const cells = splitCsvLine(raw);
    if (!cells) { problems.push({ line: lineNo, message: 'unbalanced quotes' }); return; }
    if (cells.length !== header.length) { problems.push({ line: lineNo, message: `expected ${header.length} fields, found ${cells.length}` }); return; }
    const amountText = cells[amountCol.index]!.trim();
    const amountPaise = amountCol.paise ? (/^\d+$/.test(amountText) ? Number(amountText) : NaN) : rupeesToPaise(amountText) ?? NaN;
    const parsed = lineSchema.safeParse({
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
    const key = `${utrNormalised}|${parsed.data.amountPaise}|${parsed.data.valueDate}`;
    const earlier = seen.get(key);
    if (earlier !== undefined) { problems.push({ line: lineNo, message: `duplicate of line ${earlier}` }); return; }
    seen.set(key, lineNo);
    lines.push({ lineNo, utr: parsed.data.utr, utrNormalised, amountPaise: parsed.data.amountPaise, valueDate: parsed.data.valueDate, narration: parsed.data.narration });
  });
  if (problems.length > 0) return { ok: false, problems };
  if (lines.length === 0) return { ok: false, problems: [{ line: 2, message: 'the file has no statement lines' }] };
  return { ok: true, lines };
}
