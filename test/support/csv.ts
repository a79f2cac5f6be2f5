/** A CSV file of ours read back as a spreadsheet would (RFC 4180 fields, CRLF lines): records by
 * header name. No field of these files holds a line break. */
import { splitCsvLine } from '../../src/recon/bankStatementCsv';

export function csvRecords(text: string): Array<Record<string, string>> {
  const [header, ...rows] = text.split('\r\n').filter((line) => line !== '').map((line) => splitCsvLine(line)!);
  return rows.map((cells) => Object.fromEntries(header!.map((name, i) => [name, cells[i]!])));
}
