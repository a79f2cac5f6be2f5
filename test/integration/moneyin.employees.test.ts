/** Issue 21 item 10: an ordering key names the employee and the employer of an order, so without the
 * employee ↔ employer relation it could debit any employee's wallet for any employer's order. Admin
 * registers each employee with their employer (audited); a wallet order whose employee is not the
 * order employer's, and a top-up of an unregistered employee's wallet, are refused in the error
 * envelope with nothing written. Real API, PostgreSQL and sandbox. */
import { admin, http, registerEmployee, snapshot, startMoneyInHarness, seedPair, topUp, uniqueRef, walletBalance, type MoneyInHarness } from './moneyinHarness';

const ACME = 'emp_acme_staff';
const GLOBEX = 'emp_globex_staff';
const VENDOR = 'ven_staff';

describe('money in: employees belong to their employer', () => {
  let h: MoneyInHarness;

  beforeAll(async () => {
    h = await startMoneyInHarness();
    await seedPair(h, { employerId: ACME, vendorId: VENDOR, commissionBps: 1_900 });
    await seedPair(h, { employerId: GLOBEX, vendorId: VENDOR, commissionBps: 1_900 });
    await topUp(h, 'employer', ACME, 100_000);
    await topUp(h, 'employer', GLOBEX, 100_000);
    await registerEmployee(h, ACME, 'asha');
    await topUp(h, 'employee', 'asha', 20_000);
  });

  afterAll(async () => {
    await h?.close();
  });

  const walletOrder = (employerId: string, employeeId: string) => ({
    clientReference: uniqueRef('staff'), employerId, vendorId: VENDOR, employeeId,
    totalPaise: 10_000, subsidyPaise: 6_000, customerSharePaise: 4_000, paymentMethod: 'wallet',
  });

  test('when admin registers an employee, then it is 201 once and 200 again, listed under the employer, audited with the actor; another employer is refused with 409', async () => {
    const first = await http(h, 'PUT', `/v1/admin/employers/${ACME}/employees/ravi`, undefined, { ...admin(h), 'x-actor': 'Meera' });
    expect([first.status, first.body.employee]).toEqual([201, expect.objectContaining({ employeeId: 'ravi', employerId: ACME, registeredBy: expect.stringMatching(/\(Meera\)$/) })]);
    expect((await http(h, 'PUT', `/v1/admin/employers/${ACME}/employees/ravi`, undefined, admin(h))).status).toBe(200);
    const listed = await http(h, 'GET', `/v1/admin/employers/${ACME}/employees`, undefined, admin(h));
    expect(listed.body).toEqual({ employerId: ACME, employees: [expect.objectContaining({ employeeId: 'asha' }), expect.objectContaining({ employeeId: 'ravi' })] });
    const audit = await http(h, 'GET', '/ops/audit?actor=Meera', undefined, h.keys.ops);
    expect(audit.body.entries).toEqual([expect.objectContaining({ kind: 'employee', action: 'register', subject: 'ravi', reference: ACME })]);

    const before = await snapshot(h.db);
    const elsewhere = await http(h, 'PUT', `/v1/admin/employers/${GLOBEX}/employees/ravi`, undefined, admin(h));
    expect([elsewhere.status, elsewhere.body.error.code]).toEqual([409, 'employee_of_another_employer']);
    const noEmployer = await http(h, 'PUT', '/v1/admin/employers/emp_nobody/employees/zed', undefined, admin(h));
    expect([noEmployer.status, noEmployer.body.error.code]).toEqual([422, 'unknown_employer']);
    expect((await http(h, 'GET', '/v1/admin/employers/emp_nobody/employees', undefined, admin(h))).status).toBe(404);
    expect(await snapshot(h.db)).toEqual(before);
  });

  test('when a wallet order names an employee of another employer, then 422 employee_not_of_employer and nothing is written: the wallet is not debited', async () => {
    const before = await snapshot(h.db);
    const answer = await http(h, 'POST', '/v1/orders', walletOrder(GLOBEX, 'asha'));
    expect([answer.status, answer.body.error.code]).toEqual([422, 'employee_not_of_employer']);
    expect(await snapshot(h.db)).toEqual(before);
    expect(await walletBalance(h, 'employee', 'asha')).toBe(20_000);
  });

  test('when a wallet order names an employee no employer registered (even with nothing to take from the wallet), then 422 unknown_employee and nothing is written', async () => {
    const before = await snapshot(h.db);
    for (const order of [walletOrder(ACME, 'stranger'), { ...walletOrder(ACME, 'stranger'), subsidyPaise: 10_000, customerSharePaise: 0 }]) {
      const answer = await http(h, 'POST', '/v1/orders', order);
      expect([answer.status, answer.body.error.code]).toEqual([422, 'unknown_employee']);
    }
    expect(await snapshot(h.db)).toEqual(before);
  });

  test('when an unregistered employee\'s wallet is topped up, then 422 unknown_employee and nothing is written', async () => {
    const before = await snapshot(h.db);
    const answer = await http(h, 'POST', '/v1/wallets/employee/stranger/top-ups', { amountPaise: 10_000 });
    expect([answer.status, answer.body.error.code]).toEqual([422, 'unknown_employee']);
    expect(await snapshot(h.db)).toEqual(before);
  });

  test('when a wallet order names the employee with their own employer, then it is paid from their wallet', async () => {
    const answer = await http(h, 'POST', '/v1/orders', walletOrder(ACME, 'asha'));
    expect([answer.status, answer.body.order.status, answer.body.order.paidVia]).toEqual([201, 'paid', 'wallet']);
    expect(await walletBalance(h, 'employee', 'asha')).toBe(16_000);
  });
});
