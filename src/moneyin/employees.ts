/** Which employer each employee works for (migration 112; issue 21 item 10). An employee wallet is
 * the employee's, spent on that employee's orders with that employer: an ordering key names the
 * employee and the employer of an order, and without this relation it could debit any employee's
 * wallet for any employer's order. Registered by admin, audited with the actor. */
import { AppError } from '../appError';
import type { Db, Tx } from '../db/pool';
import { employerExists, employerOrFail } from './referenceData';
import { ensureWallet, type WalletOwner } from './wallets';

type Queryable = Pick<Db | Tx, 'query'>;

export interface EmployeeView { employeeId: string; employerId: string; registeredAt: string; registeredBy: string }

/** Idempotent for the same employer; 409 when the employee already works for another one (moving
 * an employee would move their wallet's balance to another employer's orders: not done silently). */
export async function registerEmployee(db: Db, e: { employerId: string; employeeId: string; actor: string }): Promise<{ employee: EmployeeView; created: boolean }> {
  await employerOrFail(db, e.employerId);
  const inserted = await db.query('INSERT INTO employees (id, employer_id, registered_by) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING', [e.employeeId, e.employerId, e.actor]);
  const employee = (await employeeOf(db, e.employeeId))!;
  if (employee.employerId !== e.employerId) {
    throw new AppError(409, 'employee_of_another_employer', `employee ${e.employeeId} is registered with employer ${employee.employerId}`, { employerId: employee.employerId });
  }
  await ensureWallet(db, { ownerKind: 'employee', ownerId: e.employeeId });
  return { employee, created: inserted.rowCount === 1 };
}

export async function employeesOf(db: Db, employerId: string, limit: number): Promise<EmployeeView[] | null> {
  if (!(await employerExists(db, employerId))) return null;
  const { rows } = await db.query<EmployeeRow>('SELECT id, employer_id, registered_at, registered_by FROM employees WHERE employer_id = $1 ORDER BY id LIMIT $2', [employerId, limit]);
  return rows.map(viewOf);
}

/** The employee wallet an order of `employerId` for `employeeId` may spend, or a 422 naming why
 * not (nothing is written: the caller's transaction rolls back). */
export async function employeeWalletForOrder(q: Queryable, employerId: string, employeeId: string): Promise<WalletOwner> {
  const employee = await registeredEmployeeOrFail(q, employeeId);
  if (employee.employerId !== employerId) {
    throw new AppError(422, 'employee_not_of_employer', `employee ${employeeId} is not registered with employer ${employerId}: their wallet pays only their own employer's orders`);
  }
  return { ownerKind: 'employee', ownerId: employeeId };
}

/** A wallet is topped up only for an employee an employer registered (its balance could not be spent otherwise). */
export async function registeredEmployeeOrFail(q: Queryable, employeeId: string): Promise<EmployeeView> {
  const employee = await employeeOf(q, employeeId);
  if (!employee) {
    throw new AppError(422, 'unknown_employee', `employee ${employeeId} is not registered with any employer: PUT /v1/admin/employers/<employerId>/employees/${employeeId} (role admin)`);
  }
  return employee;
}

interface EmployeeRow { id: string; employer_id: string; registered_at: Date; registered_by: string }
const viewOf = (r: EmployeeRow): EmployeeView => ({ employeeId: r.id, employerId: r.employer_id, registeredAt: r.registered_at.toISOString(), registeredBy: r.registered_by });

async function employeeOf(q: Queryable, employeeId: string): Promise<EmployeeView | null> {
  const { rows } = await q.query<EmployeeRow>('SELECT id, employer_id, registered_at, registered_by FROM employees WHERE id = $1', [employeeId]);
  return rows[0] ? viewOf(rows[0]) : null;
}
