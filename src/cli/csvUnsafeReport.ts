/** `npm run security:csv-unsafe-report [-- --json]`: a one-off, read-only check of a database for
 * ids and names stored before the API refused those that start like a spreadsheet formula (issue
 * 41): each row's table, column and key, the value shown JSON-quoted (a tab or CR stays visible).
 * Talks to PostgreSQL directly (DATABASE_URL), like `npm run keys`. Exit codes: 0 none found,
 * 1 some found (or a failure), 2 bad input. */
import { parseArgs } from 'node:util';
import { loadConfig } from '../config/config';
import { createPool, poolOptionsFrom } from '../db/pool';
import { csvUnsafeRows } from '../reports/csvUnsafeRows';

class UsageError extends Error {}

async function main(argv: string[]): Promise<number> {
  let json = false;
  try {
    json = parseArgs({ args: argv, options: { json: { type: 'boolean' } } }).values.json === true;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const config = loadConfig();
  if (!config.DATABASE_URL) throw new UsageError('DATABASE_URL is required (the database to check)');
  const db = createPool(config.DATABASE_URL, { ...poolOptionsFrom(config), max: 1 });
  try {
    const rows = await csvUnsafeRows(db);
    if (json) print(JSON.stringify(rows));
    else if (rows.length === 0) print('no stored id or name starts like a spreadsheet formula');
    else {
      print(`${rows.length} stored value(s) start like a spreadsheet formula (=, +, -, @, tab or CR); a finance CSV refuses to carry them. Rename or correct each:`);
      print(['table', 'column', 'key', 'value'].join('\t'));
      for (const r of rows) print([r.table, r.column, r.key, JSON.stringify(r.value)].join('\t'));
    }
    return rows.length === 0 ? 0 : 1;
  } finally {
    await db.end();
  }
}

function print(line: string): void {
  process.stdout.write(`${line}\n`);
}

main(process.argv.slice(2)).then((code) => process.exit(code), (err: unknown) => {
  if (err instanceof UsageError) {
    process.stderr.write(`security:csv-unsafe-report: ${err.message}\nusage: npm run security:csv-unsafe-report [-- --json]\n`);
    process.exit(2);
  }
  process.stderr.write(`security:csv-unsafe-report: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
