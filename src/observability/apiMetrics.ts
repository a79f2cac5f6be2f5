/** GET /metrics on the API, and the webhook route's numbers: how long each reply took, by status
 * class, and how many were duplicates. Called on the root instance before the routes are
 * registered: Fastify copies the root's hooks into each route scope when it is created, so hooks
 * added after the routes would never see the webhook. */
import type { FastifyInstance } from 'fastify';
import { publicRoute } from '../auth/routeAuth';
import { documented } from '../api/openapi';
import type { ApiDeps } from '../api/deps';
import { SCHEDULE_IDS } from '../wiring';
import { createPayoutMetrics, webhookMetrics, type PayoutMetrics } from './metrics';

const WEBHOOK_URL = '/webhooks/razorpay';

export async function apiMetrics(app: FastifyInstance, deps: Pick<ApiDeps, 'db' | 'temporal'>): Promise<PayoutMetrics> {
  const metrics = createPayoutMetrics({ db: deps.db, temporal: deps.temporal, scheduleIds: SCHEDULE_IDS });
  const webhooks = webhookMetrics(metrics.registry);

  // The webhook answers `{ status: 'ok', eventId, event, duplicate, … }`; only a 2xx can be one.
  app.addHook('onSend', async (request, reply, payload) => {
    if (request.routeOptions.url === WEBHOOK_URL && reply.statusCode < 300 && typeof payload === 'string' && payload.includes('"duplicate":true')) {
      if (isDuplicateReceipt(payload)) webhooks.duplicate();
    }
    return payload;
  });
  app.addHook('onResponse', async (request, reply) => {
    if (request.routeOptions.url === WEBHOOK_URL) webhooks.replied(reply.statusCode, reply.elapsedTime / 1000);
  });

  // Public, as Prometheus scrapes: the text holds counts, amounts in aggregate, ages and the state of
  // the kill switch and the Schedules, never an id, a secret or personal data. Where the API port
  // faces the internet, route only the webhook and /v1 paths through the edge.
  app.get('/metrics', documented(publicRoute('metrics'), {
    summary: 'Prometheus metrics: payouts by status, ages, attempt outcomes, webhooks, recon exceptions, the kill switch, Schedules',
    tags: ['observability'],
  }), async (_request, reply) => {
    const text = await metrics.render();
    return reply.type(metrics.contentType).send(text);
  });
  return metrics;
}

function isDuplicateReceipt(payload: string): boolean {
  try {
    return (JSON.parse(payload) as { duplicate?: unknown }).duplicate === true;
  } catch {
    return false;
  }
}
