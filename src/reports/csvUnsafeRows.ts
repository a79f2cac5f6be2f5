/** Rows stored before ids and names were refused when they start like a spreadsheet formula
 * (issue 41): what `npm run security:csv-unsafe-report` lists, so each can be renamed or written
 * off by hand before a finance file refuses to carry it (src/reports/csv.ts). Read-only. */
import type { Db } from '../db/pool';
import { FORMULA_START, startsLikeFormula } from '../domain/formulaText';

/** Each table's key (what a person looks the row up by) and the columns a CSV carries or that are
 * the ids the boundary now refuses. */
export const CSV_FIELDS: ReadonlyArray<{ table: string; key: string; columns: readonly string[] }> = [
  { table: 'employers', key: 'id', columns: ['id', 'name'] },
  { table: 'vendors', key: 'id', columns: ['id', 'name'] },
  { table: 'employees', key: 'id', columns: ['id', 'employer_id'] },
  { table: 'orders', key: 'id', columns: ['client_reference', 'employer_id', 'vendor_id', 'employee_id'] },
  { table: 'wallets', key: "owner_kind || ':' || owner_id", columns: ['owner_id'] },
  { table: 'wallet_topups', key: 'id', columns: ['client_reference'] },
  { table: 'payouts', key: 'order_id', columns: ['external_reference'] },
  { table: 'vendor_bank_details', key: 'vendor_id', columns: ['beneficiary_name'] },
  { table: 'settlement_lines', key: 'reference', columns: ['beneficiary_name', 'failure_reason'] },
  { table: 'recon_exceptions', key: 'id::text', columns: ['entity_id', 'order_id', 'resolution_note'] },
];

export interface CsvUnsafeRow { table: string; column: string; key: string; value: string }

export async function csvUnsafeRows(db: Pick<Db, 'query'>): Promise<CsvUnsafeRow[]> {
  // Names come from the list above, never from input; the pattern is the writers' own.
  const selects = CSV_FIELDS.flatMap(({ table, key, columns }) => columns.map((column) =>
    `SELECT '${table}' AS "table", '${column}' AS "column", (${key})::text AS key, ${column} AS value FROM ${table} WHERE ${column} ~ $1`));
  const { rows } = await db.query<CsvUnsafeRow>(`${selects.join('\nUNION ALL\n')}\nORDER BY 1, 2, 3`, [FORMULA_START.source]);
  return rows.filter((r) => startsLikeFormula(r.value));
}
