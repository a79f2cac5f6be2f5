/** Admin reference data (role `admin`): employers, their employees, vendors, each pair's terms, and vendors' bank
 * details (set by admin; the masked form also readable by finance, who pays them). */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { AppError } from '../../appError';
import { bankDetailsSchema, validateBankDetails } from '../../banking/details';
import { keyringFromConfig } from '../../banking/keyring';
import { readMaskedBankDetails, setBankDetails } from '../../banking/repository';
import { DEFAULT_DAILY_CUTOFF_IST, PAYOUT_SCHEDULES } from '../../domain/batchWindow';
import { csvSafe } from '../../domain/schemas';
import { SETTLEMENT_MODES } from '../../domain/routing';
import type { MoneyInDeps } from '../../moneyin/deps';
import { employeesOf, registerEmployee } from '../../moneyin/employees';
import { createEmployer, createVendor, upsertPairTerms } from '../../moneyin/referenceData';
import { auditActor, requires } from '../../auth/routeAuth';
import { documented } from '../openapi';

// Ids and names reach the finance CSVs (statement, bank file): none may start like a formula.
const entityId = csvSafe(z.string().trim().regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ and - (at most 64)'));
const entityName = csvSafe(z.string().trim().min(1).max(200));
const employerBody = z.object({ id: entityId, name: entityName }).strict();
const vendorBody = z.object({
  id: entityId,
  name: entityName,
  linkedAccountId: z.string().regex(/^acc_[A-Za-z0-9]{14}$/).nullable().default(null),
}).strict();
const pairParams = z.object({ employerId: entityId, vendorId: entityId });
const vendorParams = z.object({ vendorId: entityId });
const employeeParams = z.object({ employerId: entityId, employeeId: entityId });
const employerParams = z.object({ employerId: entityId });
const employeesQuery = z.object({ limit: z.coerce.number().int().min(1).max(1_000).default(500) }).strict();
const pairBody = z.object({
  settlementMode: z.enum(SETTLEMENT_MODES).default('platform_transfer'),
  commissionBps: z.number().int().min(0).max(10_000),
  /** per_order: one transfer per order; hourly / daily: one transfer per window (issue 22). */
  payoutSchedule: z.enum(PAYOUT_SCHEDULES).default('per_order'),
  /** The daily window's cutoff, IST (HH:MM). */
  payoutCutoffIst: z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'HH:MM, 00:00 to 23:59 (IST)').default(DEFAULT_DAILY_CUTOFF_IST),
}).strict();

export async function adminRoutes(app: FastifyInstance, deps: MoneyInDeps): Promise<void> {
  const keyring = keyringFromConfig(deps.config);
  app.post('/v1/admin/employers', documented(requires('admin'), { summary: 'Create an employer (idempotent on id)', tags: ['admin'], body: employerBody, success: 201 }), async (request, reply) => {
    const employer = employerBody.parse(request.body);
    const { created } = await createEmployer(deps.db, employer);
    return reply.status(created ? 201 : 200).send({ employer });
  });

  /** An employee wallet pays only its employee's orders with this employer (src/moneyin/employees.ts). */
  app.put('/v1/admin/employers/:employerId/employees/:employeeId', documented(requires('admin'), { summary: "Register an employee with their employer (idempotent; audited): only then does their wallet take top-ups and pay that employer's wallet orders", description: '201 registered, 200 already registered with this employer, 409 `employee_of_another_employer`, 422 `unknown_employer`.', tags: ['admin'], params: employeeParams, success: 201 }), async (request, reply) => {
    const { employerId, employeeId } = employeeParams.parse(request.params);
    const { employee, created } = await registerEmployee(deps.db, { employerId, employeeId, actor: auditActor(request) });
    return reply.status(created ? 201 : 200).send({ employee });
  });

  app.get('/v1/admin/employers/:employerId/employees', documented(requires('admin'), { summary: "An employer's registered employees (by id)", tags: ['admin'], params: employerParams, querystring: employeesQuery }), async (request) => {
    const { employerId } = employerParams.parse(request.params);
    const { limit } = employeesQuery.parse(request.query);
    const employees = await employeesOf(deps.db, employerId, limit);
    if (!employees) throw new AppError(404, 'employer_not_found', `employer ${employerId} does not exist`);
    return { employerId, employees };
  });

  app.post('/v1/admin/vendors', documented(requires('admin'), { summary: 'Create a vendor with its Razorpay linked account (idempotent on id)', tags: ['admin'], body: vendorBody, success: 201 }), async (request, reply) => {
    const vendor = vendorBody.parse(request.body);
    const { created } = await createVendor(deps.db, vendor);
    return reply.status(created ? 201 : 200).send({ vendor });
  });

  /** Creates or changes a pair's terms; the change applies to the next payout that fires. */
  app.put('/v1/admin/employers/:employerId/vendors/:vendorId', documented(requires('admin'), { summary: "Set an employer–vendor pair's settlement mode, commission and payout schedule (applies to the next payout that fires)", tags: ['admin'], params: pairParams, body: pairBody }), async (request) => {
    const pair = { ...pairParams.parse(request.params), ...pairBody.parse(request.body) };
    await upsertPairTerms(deps.db, pair);
    return { pair };
  });

  /** The account number is encrypted before it is stored; the answer, like every read, is masked. */
  app.put('/v1/admin/vendors/:vendorId/bank-details', documented(requires('admin'), { summary: "Set or replace a vendor's bank details (account number, IFSC, beneficiary); audited; answered masked", tags: ['admin'], params: vendorParams, body: bankDetailsSchema, success: 201 }), async (request, reply) => {
    const { vendorId } = vendorParams.parse(request.params);
    const checked = validateBankDetails(request.body);
    if (!checked.ok) {
      throw new AppError(400, 'invalid_bank_details', checked.problems.map((p) => `${p.field}: ${p.message}`).join('; '), { fields: checked.problems });
    }
    const { created, bankDetails } = await setBankDetails(deps.db, keyring, { vendorId, details: checked.details, actor: auditActor(request) });
    return reply.status(created ? 201 : 200).send({ bankDetails });
  });

  app.get('/v1/admin/vendors/:vendorId/bank-details', documented(requires('admin', 'finance'), { summary: "A vendor's bank details, masked (last four digits), with the key id and who changed them last", tags: ['admin'], params: vendorParams }), async (request) => {
    const { vendorId } = vendorParams.parse(request.params);
    const bankDetails = (await readMaskedBankDetails(deps.db, [vendorId])).get(vendorId);
    if (bankDetails) return { bankDetails };
    const vendor = await deps.db.query('SELECT 1 FROM vendors WHERE id = $1', [vendorId]);
    if (vendor.rowCount === 0) throw new AppError(404, 'vendor_not_found', `vendor ${vendorId} does not exist`);
    throw new AppError(404, 'bank_details_not_set', `vendor ${vendorId} has no bank details: PUT /v1/admin/vendors/${vendorId}/bank-details (role admin)`);
  });
}
