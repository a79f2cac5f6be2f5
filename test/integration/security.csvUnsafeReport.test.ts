/** `npm run security:csv-unsafe-report` (issue 41): a database's rows stored before the API refused
 * ids and names that start like a spreadsheet formula are listed by table, column and key; a clean
 * database lists none. */
import { createPool, type Db } from '../../src/db/pool';
import { createIsolatedDatabase } from '../support/db';
import { startAppProcess } from '../support/processes';

describe('security:csv-unsafe-report', () => {
  let url: string;
  let db: Db;
  beforeAll(async () => {
    url = await createIsolatedDatabase();
    db = createPool(url, 2);
  });
  afterAll(async () => { await db?.end(); });

  const report = async (...args: string[]) => {
    const proc = startAppProcess('src/cli/csvUnsafeReport.ts', { DATABASE_URL: url, LOG_LEVEL: 'warn' }, args);
    return { code: await proc.exited, output: proc.output() };
  };

  test('when no stored id or name starts like a formula, then it says so and exits 0', async () => {
    await db.query(`INSERT INTO employers (id, name) VALUES ('emp_ok', 'Co-op 2 & Co')`);
    const clean = await report();
    expect(clean).toEqual({ code: 0, output: expect.stringContaining('no stored id or name starts like a spreadsheet formula') });
  });

  test('when rows were stored with ids and names that start like a formula, then each is listed with its table, column and key, and it exits 1', async () => {
    await db.query(`INSERT INTO employers (id, name) VALUES ('-A1-1', 'Acme'), ('emp_tab', E'\\tTabbed')`);
    await db.query(`INSERT INTO vendors (id, name) VALUES ('ven_ok', '=HYPERLINK("x")')`);
    await db.query(`INSERT INTO employees (id, employer_id, registered_by) VALUES ('@E1', 'emp_ok', 'test')`);
    await db.query(`INSERT INTO recon_exceptions (key, class, reason, severity, next_action, day, entity_id, order_id, first_run_id, last_run_id)
                    VALUES ('csv-report', 'unmatched', 'transfer-not-in-app', 'critical', 'check', current_date, 'trf_x', '+ord', 'run-1', 'run-1')`);
    const listed = await report('--json');
    expect(listed.code).toBe(1);
    const rows = JSON.parse(listed.output.trim().split('\n').at(-1)!) as Array<{ table: string; column: string; key: string; value: string }>;
    expect(rows.map((r) => [r.table, r.column, r.key, r.value])).toEqual([
      ['employees', 'id', '@E1', '@E1'],
      ['employers', 'id', '-A1-1', '-A1-1'],
      ['employers', 'name', 'emp_tab', '\tTabbed'],
      ['recon_exceptions', 'order_id', expect.stringMatching(/^\d+$/), '+ord'],
      ['vendors', 'name', 'ven_ok', '=HYPERLINK("x")'],
    ]);
    const text = await report();
    expect(text.code).toBe(1);
    expect(text.output).toContain('5 stored value(s) start like a spreadsheet formula');
    expect(text.output).toContain('employers\tname\temp_tab\t"\\tTabbed"');
  });
});
