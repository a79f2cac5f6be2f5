/** Reading a CSV file with a header row, strictly: every bad line is reported with its line number
 * (the bank statement, the bank's response to a settlement batch). Columns are found by name, in any
 * order and any case. */

export interface CsvProblem { line: number; message: string }
export interface CsvRecord { lineNo: number; cells: string[] }
export type CsvTable =
  | { ok: true; col: (name: string) => number; records: CsvRecord[]; problems: CsvProblem[] }
  | { ok: false; problems: CsvProblem[] };

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

/** The header's columns and each line's cells. `required` must be present; of each group in
 * `oneOf` at least one. Lines that are empty, unbalanced or of the wrong width are problems. */
export function readCsvRecords(text: string, required: readonly string[], oneOf: ReadonlyArray<readonly string[]> = []): CsvTable {
  const rawLines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  while (rawLines.length > 0 && rawLines[rawLines.length - 1]!.trim() === '') rawLines.pop();
  const header = splitCsvLine(rawLines[0] ?? '')?.map((h) => h.trim().toLowerCase());
  if (!header || rawLines.length === 0) return { ok: false, problems: [{ line: 1, message: 'the file is empty or has no header' }] };
  const col = (name: string) => header.indexOf(name);
  const missing = required.filter((c) => col(c) < 0).concat(oneOf.filter((group) => group.every((c) => col(c) < 0)).map((group) => group[0]!));
  if (missing.length > 0) return { ok: false, problems: [{ line: 1, message: `header lacks column(s): ${missing.join(', ')}` }] };

  const problems: CsvProblem[] = [];
  const records: CsvRecord[] = [];
  rawLines.slice(1).forEach((raw, i) => {
    const lineNo = i + 2;
    if (raw.trim() === '') { problems.push({ line: lineNo, message: 'empty line' }); return; }
    const cells = splitCsvLine(raw);
    if (!cells) { problems.push({ line: lineNo, message: 'unbalanced quotes' }); return; }
    if (cells.length !== header.length) { problems.push({ line: lineNo, message: `expected ${header.length} fields, found ${cells.length}` }); return; }
    records.push({ lineNo, cells });
  });
  return { ok: true, col, records, problems };
}
