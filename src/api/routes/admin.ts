/** Admin reference data (role `admin`): employers, vendors and each pair's terms. */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { SETTLEMENT_MODES } from '../../domain/routing';
import type { MoneyInDeps } from '../../moneyin/deps';
import { createEmployer, createVendor, upsertPairTerms } from '../../moneyin/referenceData';
import { requires } from '../../auth/routeAuth';
import { documented } from '../openapi';

const entityId = z.string().trim().regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ and - (at most 64)');
const employerBody = z.object({ id: entityId, name: z.string().trim().min(1).max(200) }).strict();
const vendorBody = z.object({
  id: entityId,
  name: z.string().trim().min(1).max(200),
  linkedAccountId: z.string().regex(/^acc_[A-Za-z0-9]{14}$/).nullable().default(null),
}).strict();
const pairParams = z.object({ employerId: entityId, vendorId: entityId });
const pairBody = z.object({
  settlementMode: z.enum(SETTLEMENT_MODES).default('platform_transfer'),
  commissionBps: z.number().int().min(0).max(10_000),
}).strict();

export async function adminRoutes(app: FastifyInstance, deps: MoneyInDeps): Promise<void> {
  app.post('/v1/admin/employers', documented(requires('admin'), { summary: 'Create an employer (idempotent on id)', tags: ['admin'], body: employerBody, success: 201 }), async (request, reply) => {
    const employer = employerBody.parse(request.body);
    const { created } = await createEmployer(deps.db, employer);
    return reply.status(created ? 201 : 200).send({ employer });
  });

  app.post('/v1/admin/vendors', documented(requires('admin'), { summary: 'Create a vendor with its Razorpay linked account (idempotent on id)', tags: ['admin'], body: vendorBody, success: 201 }), async (request, reply) => {
    const vendor = vendorBody.parse(request.body);
    const { created } = await createVendor(deps.db, vendor);
    return reply.status(created ? 201 : 200).send({ vendor });
  });

  /** Creates or changes a pair's terms; the change applies to the next payout that fires. */
  app.put('/v1/admin/employers/:employerId/vendors/:vendorId', documented(requires('admin'), { summary: "Set an employer–vendor pair's settlement mode and commission (applies to the next payout that fires)", tags: ['admin'], params: pairParams, body: pairBody }), async (request) => {
    const pair = { ...pairParams.parse(request.params), ...pairBody.parse(request.body) };
    await upsertPairTerms(deps.db, pair);
    return { pair };
  });
}
