/** The API's metrics, and the webhook route's numbers: how long each reply took, by status
 * class, how many were duplicates and how many were set aside (by reason). Called on the root instance before the routes are
 * registered: Fastify copies the root's hooks into each route scope when it is created, so hooks
 * added after the routes would never see the webhook. /metrics is src/api/operationalRoutes.ts. */
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/deps';
import { SCHEDULE_IDS } from '../wiring';
import { SET_ASIDE_REASONS, type SetAsideReason } from '../webhooks/quarantine';
import { createPayoutMetrics, webhookMetrics, type PayoutMetrics } from './metrics';
import { watchSchedules } from './scheduleWatch';

const WEBHOOK_URL = '/webhooks/razorpay';

export async function apiMetrics(app: FastifyInstance, deps: Pick<ApiDeps, 'db' | 'temporal' | 'config'>): Promise<PayoutMetrics> {
  const metrics = createPayoutMetrics({ db: deps.db, schedules: deps.temporal && watchSchedules(deps.temporal, SCHEDULE_IDS), budget: deps.config });
  const webhooks = webhookMetrics(metrics.registry);

  // The webhook answers `{ status: 'ok', eventId, event, duplicate, setAside?, … }`; only a 2xx can be one.
  app.addHook('onSend', async (request, reply, payload) => {
    if (request.routeOptions.url === WEBHOOK_URL && reply.statusCode < 300 && typeof payload === 'string') {
      const receipt = payload.includes('"duplicate":true') || payload.includes('"setAside":') ? readReceipt(payload) : {};
      if (receipt.duplicate === true) webhooks.duplicate();
      // A redelivery of an event already set aside is counted once, as a duplicate.
      else if (isSetAsideReason(receipt.setAside)) webhooks.setAside(receipt.setAside);
    }
    return payload;
  });
  app.addHook('onResponse', async (request, reply) => {
    if (request.routeOptions.url === WEBHOOK_URL) webhooks.replied(reply.statusCode, reply.elapsedTime / 1000);
  });
  return metrics;
}

function readReceipt(payload: string): { duplicate?: unknown; setAside?: unknown } {
  try {
    return JSON.parse(payload) as { duplicate?: unknown; setAside?: unknown };
  } catch {
    return {};
  }
}

const isSetAsideReason = (value: unknown): value is SetAsideReason => (SET_ASIDE_REASONS as readonly unknown[]).includes(value);
