/** `npm run security:csv-unsafe-report [-- --json]`: a one-off, read-only check of a database for
 * ids and names stored before the API refused those that start like a spreadsheet formula (issue
 * 41): each row's table, column and key, the value shown JSON-quoted (a tab or CR stays visible).
 * Talks to PostgreSQL directly (DATABASE_URL), like `npm run keys`. Exit codes: 0 none found,
 * 1 some found (or a failure), 2 bad input. */
import { csvUnsafeRows } from '../reports/csvUnsafeRows';
import { runJsonReportCli } from './jsonReportCli';

runJsonReportCli('security:csv-unsafe-report', 'the database to check', async (db, { json, print }) => {
  const rows = await csvUnsafeRows(db);
  if (json) print(JSON.stringify(rows));
  else if (rows.length === 0) print('no stored id or name starts like a spreadsheet formula');
  else {
    print(`${rows.length} stored value(s) start like a spreadsheet formula (=, +, -, @, tab or CR); a finance CSV refuses to carry them. Rename or correct each:`);
    print(['table', 'column', 'key', 'value'].join('\t'));
    for (const r of rows) print([r.table, r.column, r.key, JSON.stringify(r.value)].join('\t'));
  }
  return rows.length === 0 ? 0 : 1;
});
