/** The API's operational routes: /metrics, /openapi.json and the Swagger UI at /docs, and /ready
 * with each check's detail. With ADMIN_PORT they are served on a port of their own (the same
 * server the worker has: src/observability/healthServer.ts), started when the API is ready and
 * closed with it, and the public port has none of them and answers /ready without detail
 * (src/api/routes/health.ts). Production requires ADMIN_PORT: the metrics publish business volume
 * and cost queries per scrape, and a dependency's error names hosts. Without it (development, the
 * tests) they are public routes of the API itself, as `npm run dev` shows them. */
import type { FastifyInstance } from 'fastify';
import { publicRoute } from '../auth/routeAuth';
import { buildHealthServer } from '../observability/healthServer';
import type { PayoutMetrics } from '../observability/metrics';
import { readiness } from '../observability/readiness';
import type { ApiDeps } from './deps';
import { documented, openApiRoutes } from './openapi';

/** Register last: the OpenAPI document lists every route registered before. */
export async function operationalRoutes(app: FastifyInstance, deps: ApiDeps, metrics: PayoutMetrics, version: string): Promise<void> {
  const { config } = deps;
  if (config.ADMIN_PORT === undefined) {
    if (config.NODE_ENV === 'production') {
      throw new Error('ADMIN_PORT is required in production: /metrics, /docs, /openapi.json and the detailed /ready are served only there, never on the public API_PORT');
    }
    // Public, as Prometheus scrapes: the text holds counts, amounts in aggregate, ages and the state of
    // the kill switch and the Schedules, never an id, a secret or personal data.
    app.get('/metrics', documented(publicRoute('metrics'), {
      summary: 'Prometheus metrics: payouts by status, ages, attempt outcomes, webhooks, recon exceptions, the kill switch, Schedules',
      tags: ['observability'],
    }), async (_request, reply) => reply.type(metrics.contentType).send(await metrics.render()));
    await openApiRoutes(app, { version });
    return;
  }
  const admin = await buildHealthServer({
    readiness: () => readiness({ db: deps.db, temporal: deps.temporal }),
    metrics: () => metrics.render(),
    docs: { documents: app, version },
  });
  const adminPort = config.ADMIN_PORT;
  app.addHook('onReady', async () => {
    await admin.listen({ port: adminPort, host: config.ADMIN_HOST ?? config.HTTP_HOST });
    app.log.info({ adminPort }, 'admin port listening (/metrics, /docs, /openapi.json, /ready with detail)');
  });
  app.addHook('onClose', async () => { await admin.close(); });
}
