/** No cell of a finance file starts like a formula (issue 41, item 2): an id or a name that a CSV
 * carries (the bank file's beneficiary, the statement's employer and order, the exceptions file's
 * resolution note, the bank response's reason) is refused at the API with 400 in the envelope,
 * naming the field, before anything is stored. */
import { randomBytes } from 'node:crypto';
import { admin, http, seedPair, startMoneyInHarness, type MoneyInHarness } from './moneyinHarness';

describe('ids and names that would start a formula in a finance CSV', () => {
  let h: MoneyInHarness;
  beforeAll(async () => {
    h = await startMoneyInHarness();
    await seedPair(h, { employerId: 'emp_csv', vendorId: 'ven_csv', commissionBps: 1_000, linkedAccount: false });
  });
  afterAll(async () => { await h?.close(); });

  const count = async (sql: string, params: unknown[]) => Number((await h.db.query<{ n: string }>(`SELECT count(*) AS n FROM ${sql}`, params)).rows[0]!.n);
  const refusedNaming = (field: string) => expect.objectContaining({ code: 'invalid_request', details: expect.arrayContaining([expect.objectContaining({ path: [field], message: expect.stringMatching(/^must not start with =, \+, -, @/) })]) });

  test('when a beneficiary name for the bank file starts with -, then 400 names beneficiaryName and no bank details are stored', async () => {
    const answer = await http(h, 'PUT', '/v1/admin/vendors/ven_csv/bank-details', { accountNumber: '123456789012', ifsc: 'HDFC0001234', beneficiaryName: '-2 & Co' }, admin(h));
    expect([answer.status, answer.body.error.code, answer.body.error.details.fields]).toEqual([400, 'invalid_bank_details', [{ field: 'beneficiaryName', message: expect.stringMatching(/^must not start with =, \+, -, @/) }]]);
    expect(await count('vendor_bank_details WHERE vendor_id = $1', ['ven_csv'])).toBe(0);
    expect((await http(h, 'PUT', '/v1/admin/vendors/ven_csv/bank-details', { accountNumber: '123456789012', ifsc: 'HDFC0001234', beneficiaryName: 'Co-op 2 & Co' }, admin(h))).status).toBe(201);
  });

  test.each([
    ['an employer id', '/v1/admin/employers', { id: '-A1-1', name: 'Acme' }, 'id', 'employers WHERE id = $1', '-A1-1'],
    ['an employer name', '/v1/admin/employers', { id: 'emp_named', name: '=HYPERLINK("x")' }, 'name', 'employers WHERE id = $1', 'emp_named'],
    ['a vendor id', '/v1/admin/vendors', { id: '+ven', name: 'Dosa' }, 'id', 'vendors WHERE id = $1', '+ven'],
    ['a vendor name', '/v1/admin/vendors', { id: 'ven_named', name: '@Dosa' }, 'name', 'vendors WHERE id = $1', 'ven_named'],
  ])('when %s for the statement CSV starts like a formula, then 400 names the field and nothing is stored', async (_what, path, body, field, table, id) => {
    const answer = await http(h, 'POST', path, body, admin(h));
    expect([answer.status, answer.body.error]).toEqual([400, refusedNaming(field)]);
    expect(await count(table, [id])).toBe(0);
  });

  test('when an employee id starts with -, then registering them is 400 naming employeeId and nothing is stored', async () => {
    const answer = await http(h, 'PUT', '/v1/admin/employers/emp_csv/employees/-E1', undefined, admin(h));
    expect([answer.status, answer.body.error]).toEqual([400, refusedNaming('employeeId')]);
    expect(await count('employees WHERE id = $1', ['-E1'])).toBe(0);
  });

  test.each([
    ['its client reference', { clientReference: '-ref-1' }, 'clientReference'],
    ['its employee id', { employeeId: '-E2' }, 'employeeId'],
  ])('when an order is placed with %s starting with -, then 400 names the field and no order is stored', async (_what, change, field) => {
    const order = { clientReference: `csv-${randomBytes(4).toString('hex')}`, employerId: 'emp_csv', vendorId: 'ven_csv', employeeId: 'e1', totalPaise: 10_000, subsidyPaise: 10_000, customerSharePaise: 0, paymentMethod: 'cash', ...change };
    const answer = await http(h, 'POST', '/v1/orders', order);
    expect([answer.status, answer.body.error]).toEqual([400, refusedNaming(field)]);
    expect(await count('orders WHERE client_reference = $1', [order.clientReference])).toBe(0);
  });

  test('when an exception is resolved with a note starting with -, then 400 names note and the exception stays open', async () => {
    const { rows } = await h.db.query<{ id: number }>(
      `INSERT INTO recon_exceptions (key, class, reason, severity, next_action, day, entity_id, first_run_id, last_run_id)
       VALUES ($1, 'unmatched', 'transfer-not-in-app', 'critical', 'check', current_date, 'trf_x', 'run-1', 'run-1') RETURNING id`, [`csv-${randomBytes(4).toString('hex')}`]);
    const answer = await http(h, 'POST', `/finance/recon/exceptions/${rows[0]!.id}/resolve`, { note: '-78 paise written off' }, h.keys.finance);
    expect([answer.status, answer.body.error]).toEqual([400, refusedNaming('note')]);
    expect(await count("recon_exceptions WHERE id = $1 AND status = 'open' AND resolution_note IS NULL", [rows[0]!.id])).toBe(1);
  });

  test("when the bank's response file gives a failed line's reason starting with -, then 400 invalid_bank_response names the line and reason, nothing imported", async () => {
    const before = await count('settlement_actions', []);
    const csv = 'reference,status,utr,value_date,amount,reason\r\nSTABCDEFGH0001,failed,,2026-09-05,70.00,-2 account closed\r\n';
    const answer = await http(h, 'POST', '/finance/settlement/bank-responses', { fileName: 'response.csv', csv }, h.keys.finance);
    expect([answer.status, answer.body.error.code, answer.body.error.details]).toEqual([400, 'invalid_bank_response', { problems: [{ line: 2, message: expect.stringMatching(/^reason must not start with =, \+, -, @/) }] }]);
    expect(await count('settlement_actions', [])).toBe(before);
  });
});
