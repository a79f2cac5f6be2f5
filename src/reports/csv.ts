/** CSV for finance files, the one way every export writes it: RFC 4180 quoting, CRLF line ends,
 * rupees with Indian grouping (no ₹ sign), and no cell that can run as a spreadsheet formula. */
import { startsLikeFormula } from '../domain/formulaText';
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
  return value !== null && startsLikeFormula(value) ? `'${value}` : value;
}

/** Our own negative amounts (`-1,234.00`, from rupeesCell): a spreadsheet reads them as numbers. */
const NEGATIVE_AMOUNT = /^-\d{1,3}(,\d{2,3})*\.\d{2}$/;

/** A cell that would run as a formula reached a writer: an id or a name that validation should
 * have refused (issue 41), or a row stored before it did (`npm run security:csv-unsafe-report`). */
export class UnsafeCsvCell extends Error {
  override name = 'UnsafeCsvCell';
  constructor(readonly column: string, readonly row: number) {
    super(`CSV column ${column}, row ${row}: the value starts like a spreadsheet formula (=, +, -, @, tab or CR); refused rather than written (npm run security:csv-unsafe-report lists such rows)`);
  }
}

/** Every text cell of every finance file passes here: free text goes through spreadsheetSafe first,
 * ids and names must never need it. */
function assertSafeCells(header: readonly string[], rows: readonly (readonly CsvCell[])[]): void {
  rows.forEach((cells, r) => cells.forEach((cell, c) => {
    if (typeof cell === 'string' && startsLikeFormula(cell) && !NEGATIVE_AMOUNT.test(cell)) throw new UnsafeCsvCell(header[c] ?? `#${c + 1}`, r + 1);
  }));
}

/** RFC 4180: a field with a comma, quote, CR or LF is quoted, its quotes doubled. */
export function csvField(value: CsvCell): string {
  const s = value === null ? '' : String(value);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The whole file: the header row (even with no rows), then each row, every line ended by CRLF. */
export function csvFile(header: readonly string[], rows: readonly (readonly CsvCell[])[]): string {
  assertSafeCells(header, rows);
  return [header, ...rows].map((cells) => `${cells.map(csvField).join(',')}\r\n`).join('');
}
