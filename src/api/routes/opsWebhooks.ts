/** Ops route for the signed webhooks set aside instead of applied (role `ops`): what Razorpay sent
 * that our schema refused, and events outside the replay window (src/webhooks/quarantine.ts). */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Db } from '../../db/pool';
import { requires } from '../../auth/routeAuth';
import { quarantinedWebhooks, SET_ASIDE_REASONS } from '../../webhooks/quarantine';
import { documented } from '../openapi';

const quarantineQuery = z.object({
  reason: z.enum(SET_ASIDE_REASONS).optional(),
  beforeId: z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
}).strict();

/** What recovers an event's effect: nothing is applied from the quarantine itself. */
const RECOVERY = 'Nothing here is applied. A capture of a pending order or top-up is found by the missed-webhook sweep (it fetches their payments from Razorpay); a transfer\'s outcome by the payout run and the transfer resolver (they fetch the transfer); a settlement by recon (it fetches settlements and their line items); a refund we requested by the sweep\'s retry with its receipt, and one made outside the app by recon (refund-outside-app or refund-not-in-app). A dispute is not fetched: read it on the Razorpay Dashboard. A schema_refused event Razorpay changed needs our schema fixed; its later events then apply.';

export async function opsWebhookRoutes(app: FastifyInstance, deps: { db: Db }): Promise<void> {
  app.get('/ops/webhooks/quarantine', documented(requires('ops'), {
    summary: 'Signed Razorpay webhooks set aside, not applied: refused by our schema, or outside the replay window (newest first)',
    description: 'Each with its event id, name, reason (`schema_refused`, `too_old`, `from_future`), the parse issues or the age and window, the body as sent and its signature. Page with `beforeId` (the last `id` of the previous page).',
    tags: ['ops', 'webhooks'],
    querystring: quarantineQuery,
  }), async (request) => {
    const filter = quarantineQuery.parse(request.query);
    const events = await quarantinedWebhooks(deps.db, filter);
    return { events, recovery: RECOVERY, nextBeforeId: events.length === filter.limit ? events[events.length - 1]!.id : null };
  });
}
