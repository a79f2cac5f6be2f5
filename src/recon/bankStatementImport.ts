/** Use case: import a bank statement file (credits and, with a `type` column, debits). All or nothing: a file with a bad line writes nothing;
 * the same bytes imported again add nothing; a line already known from an overlapping file (same
 * UTR, amount and value date) is not added twice. */
import { createHash } from 'node:crypto';
import { inTransaction, type Db } from '../db/pool';
import { parseBankStatementCsv, type CsvProblem } from './bankStatementCsv';

export type BankImportResult =
  | { ok: true; importId: number; duplicateFile: boolean; lineCount: number; linesAdded: number }
  | { ok: false; problems: CsvProblem[] };

export async function importBankStatement(db: Db, file: { text: string; fileName?: string; actor: string }): Promise<BankImportResult> {
  const parsed = parseBankStatementCsv(file.text);
  if (!parsed.ok) return parsed;
  const sha256 = createHash('sha256').update(file.text).digest('hex');
  return inTransaction(db, async (tx) => {
    const inserted = await tx.query<{ id: number }>(
      `INSERT INTO bank_statement_imports (file_sha256, file_name, line_count, lines_added, imported_by) VALUES ($1, $2, $3, 0, $4)
       ON CONFLICT (file_sha256) DO NOTHING RETURNING id`,
      [sha256, file.fileName ?? null, parsed.lines.length, file.actor],
    );
    if (!inserted.rows[0]) {
      const existing = await tx.query<{ id: number }>(`SELECT id FROM bank_statement_imports WHERE file_sha256 = $1`, [sha256]);
      return { ok: true, importId: existing.rows[0]!.id, duplicateFile: true, lineCount: parsed.lines.length, linesAdded: 0 };
    }
    const importId = inserted.rows[0].id;
    // Credits (settlements reaching the bank) and debits (offline settlement payments) each in their table.
    let linesAdded = 0;
    for (const [direction, table] of [['credit', 'bank_statement_lines'], ['debit', 'bank_statement_debits']] as const) {
      const payload = parsed.lines.filter((l) => l.direction === direction)
        .map((l) => ({ line_no: l.lineNo, utr: l.utr, utr_normalised: l.utrNormalised, amount_paise: l.amountPaise, value_date: l.valueDate, narration: l.narration }));
      if (payload.length === 0) continue;
      const added = await tx.query(
        `INSERT INTO ${table} (import_id, line_no, utr, utr_normalised, amount_paise, value_date, narration)
         SELECT $2, x.* FROM jsonb_to_recordset($1::jsonb) AS x(line_no integer, utr text, utr_normalised text, amount_paise bigint, value_date date, narration text)
         ON CONFLICT (utr_normalised, amount_paise, value_date) DO NOTHING`,
        [JSON.stringify(payload), importId],
      );
      linesAdded += added.rowCount ?? 0;
    }
    await tx.query(`UPDATE bank_statement_imports SET lines_added = $2 WHERE id = $1`, [importId, linesAdded]);
    return { ok: true, importId, duplicateFile: false, lineCount: parsed.lines.length, linesAdded };
  });
}
