/** The operational port of a process: `/health`, `/ready` with each check's detail, `/metrics` for
 * Prometheus when given them, and the API's OpenAPI document and Swagger UI when given that. The
 * worker serves it on WORKER_HEALTH_PORT; the API on ADMIN_PORT (src/api/operationalRoutes.ts).
 * It is for orchestrators, Prometheus and people inside the network, never routed from the
 * internet, so it asks for no API key; errors leave it in the API's envelope. */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import { installErrorHandler } from '../api/errors';
import { openApiRoutes } from '../api/openapi';
import { logger } from '../logger';
import type { Readiness } from './readiness';

export interface HealthServer { port: number; close(): Promise<void> }

export interface HealthRoutes {
  readiness: () => Promise<Readiness>;
  /** One scrape in the Prometheus text format (src/observability/metrics.ts); absent: no /metrics. */
  metrics?: () => Promise<string>;
  /** /openapi.json and /docs for the routes of `documents` (the public API); absent: neither. */
  docs?: { documents: FastifyInstance; version: string };
}

/** The Prometheus text format's media type (what prom-client's registry serves). */
const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8';

export async function buildHealthServer(opts: HealthRoutes): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: logger.child({ component: 'health-server' }) as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
  });
  installErrorHandler(app);
  app.get('/health', async () => ({ status: 'ok', time: new Date().toISOString() }));
  app.get('/ready', async (_request, reply) => {
    const result = await opts.readiness().catch((err: unknown) => ({ ready: false, error: String(err) }));
    return reply.status(result.ready ? 200 : 503).send(result);
  });
  const { metrics } = opts;
  if (metrics) {
    app.get('/metrics', async (_request, reply) => {
      const text = await metrics().catch((err: unknown) => err instanceof Error ? err : new Error(String(err)));
      if (text instanceof Error) return reply.status(500).send({ error: { code: 'metrics_failed', message: text.message } });
      return reply.type(PROMETHEUS_TEXT).send(text);
    });
  }
  if (opts.docs) await openApiRoutes(app, opts.docs);
  return app;
}

export async function startHealthServer(opts: HealthRoutes & { host: string; port: number }): Promise<HealthServer> {
  const app = await buildHealthServer(opts);
  await app.listen({ host: opts.host, port: opts.port });
  return { port: (app.server.address() as AddressInfo).port, close: () => app.close() };
}
