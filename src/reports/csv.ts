/** CSV for finance files, the one way every export writes it: RFC 4180 quoting, CRLF line ends,
 * rupees with Indian grouping (no ₹ sign), and typed text that cannot run as a spreadsheet formula. */
import { formatRupees } from '../domain/money';

export type CsvCell = string | number | null;

/** `1,23,456.78`: rupees with Indian grouping and no ₹ sign, so a spreadsheet opens the file the
 * same whatever encoding it guesses. */
export function rupeesCell(paise: number | null): string {
  return paise === null ? '' : formatRupees(paise).replace('₹', '');
}

/** Text a person typed (or a bank sent) that starts like a formula (`=`, `+`, `-`, `@`) would run in
 * a spreadsheet: it is given as text. Our own amounts are never passed here. */
export function spreadsheetSafe(value: string | null): string | null {
  return value !== null && /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
}

/** RFC 4180: a field with a comma, quote, CR or LF is quoted, its quotes doubled. */
export function csvField(value: CsvCell): string {
  const s = value === null ? '' : String(value);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The whole file: the header row (even with no rows), then each row, every line ended by CRLF. */
export function csvFile(header: readonly string[], rows: readonly (readonly CsvCell[])[]): string {
  return [header, ...rows].map((cells) => `${cells.map(csvField).join(',')}\r\n`).join('');
}
