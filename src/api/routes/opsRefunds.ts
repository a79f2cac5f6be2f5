/** Ops routes for refunds (role `ops`): the queue of refunds the gateway refused for good
 * (`rejected`: the customer's money is still with us) or that failed after Razorpay accepted them
 * (`failed`, its refund.failed webhook), and what is still being retried (`requested`). */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Db } from '../../db/pool';
import { requires } from '../../auth/routeAuth';
import { refundsInStatus } from '../../moneyin/refunds';
import { documented } from '../openapi';

export interface OpsRefundDeps {
  db: Db;
}

const queueQuery = z.object({
  status: z.enum(['rejected', 'failed', 'requested', 'pending', 'processed']).default('rejected'),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

export async function opsRefundRoutes(app: FastifyInstance, deps: OpsRefundDeps): Promise<void> {
  app.get('/ops/refunds', documented(requires('ops'), {
    summary: 'Refunds by status: the ops queue of refunds the gateway refused (rejected) or failed',
    description: 'Default `rejected`: the gateway refused the refund for good and the customer\'s money is still with us. `requested` lists what is being retried with backoff.',
    tags: ['ops'],
    querystring: queueQuery,
  }), async (request) => {
    const { status, limit } = queueQuery.parse(request.query);
    return { status, refunds: await refundsInStatus(deps.db, status, limit) };
  });
}
