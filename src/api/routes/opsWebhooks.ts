/** Ops routes for the signed webhooks set aside instead of applied (role `ops`): what Razorpay sent
 * that our schema refused, and events outside the replay window (src/webhooks/quarantine.ts), each
 * with whether its effect has been recovered since; and the acknowledgement once ops have read one. */
import type { FastifyInstance } from 'fastify';
import type { Db } from '../../db/pool';
import { auditActor, requires } from '../../auth/routeAuth';
import { acknowledgeBody, quarantineIdParams, quarantineQuery } from '../../contracts/webhookQuarantine';
import { acknowledgeOrRefuse, quarantineCounts, quarantinedWebhooks, QUARANTINE_RECOVERY } from '../../webhooks/quarantine';
import { documented } from '../openapi';

export async function opsWebhookRoutes(app: FastifyInstance, deps: { db: Db }): Promise<void> {
  app.get('/ops/webhooks/quarantine', documented(requires('ops'), {
    summary: 'Signed Razorpay webhooks set aside, not applied: refused by our schema, or outside the replay window (newest first)',
    description: 'Each with its event id, name, reason (`schema_refused`, `too_old`, `from_future`), the parse issues or the age and window, the body as sent and its signature, '
      + '`recovery` (whether what the event would have done has happened since: `recovered`, `pending`, `not_fetched`, `unreadable`, with words) and `acknowledged` (null while open). '
      + '`counts`: how many are set aside and how many are open, by reason. `show` filters open or acknowledged rows. Page with `beforeId` (the last `id` of the previous page).',
    tags: ['ops', 'webhooks'],
    querystring: quarantineQuery,
  }), async (request) => {
    const filter = quarantineQuery.parse(request.query);
    const [events, counts] = await Promise.all([quarantinedWebhooks(deps.db, filter), quarantineCounts(deps.db)]);
    return { events, counts, recovery: QUARANTINE_RECOVERY, nextBeforeId: events.length === filter.limit ? events[events.length - 1]!.id : null };
  });

  app.post('/ops/webhooks/quarantine/:id/acknowledge', documented(requires('ops'), {
    summary: 'Acknowledge a set-aside webhook once read, with what you concluded (audited; applies nothing)',
    description: '`already: true` when it was acknowledged before (the first note stands). 404 `quarantined_webhook_not_found`.',
    tags: ['ops', 'webhooks'],
    params: quarantineIdParams,
    body: acknowledgeBody,
  }), async (request) => {
    const { id } = quarantineIdParams.parse(request.params);
    const { note } = acknowledgeBody.parse(request.body ?? {});
    return acknowledgeOrRefuse(deps.db, id, { actor: auditActor(request), note });
  });
}
