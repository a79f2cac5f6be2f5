/** The HTTP API (Fastify): thin routes over use cases. Each capability registers its routes here;
 * each route declares the role it needs (src/auth/routeAuth.ts). */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { logger } from '../logger';
import type { ApiDeps } from './deps';
import { installRouteAuth } from '../auth/routeAuth';
import { installThrottling } from './rateLimit';
import { watchUntrustedProxy } from './untrustedProxy';
import { apiMetrics } from '../observability/apiMetrics';
import { operationalRoutes } from './operationalRoutes';
import { securityHeaders } from './securityHeaders';
import { version as packageVersion } from '../../package.json';
import { frameworkErrors, installErrorHandler } from './errors';
import { healthRoutes } from './routes/health';
import { financeRoutes } from './routes/finance';
import { financeExportRoutes } from './routes/financeExports';
import { opsRefundRoutes } from './routes/opsRefunds';
import { consoleRoutes } from '../console/routes';
import { opsPayoutRoutes } from './routes/opsPayouts';
import { moneyInRoutes } from './routes/moneyin';
import { ApiProviderBudget } from '../moneyin/providerBudget';
import { statementRoutes } from './routes/statements';
import { settlementRoutes } from './routes/settlement';

export async function buildApi(deps: ApiDeps): Promise<FastifyInstance> {
  const trustProxy = deps.config.TRUST_PROXY;
  const app = Fastify({
    loggerInstance: logger.child({ component: 'api' }) as FastifyBaseLogger,
    // Per route: the file uploads take API_FILE_BODY_LIMIT_BYTES; the webhook sets its own.
    bodyLimit: deps.config.API_BODY_LIMIT_BYTES,
    frameworkErrors,
    // Request logs are for debugging (LOG_LEVEL=debug); what happened is logged by the use cases.
    logController: new LogController({ disableRequestLogging: true }),
    // request.protocol/host/ip believe X-Forwarded-* only from these proxies (off by default); a
    // hop count trusts that many proxies nearest to us.
    trustProxy: typeof trustProxy === 'number' ? (_address: string, hop: number) => hop < trustProxy : trustProxy,
  });
  // Helmet's headers on every answer, the console's pages and the API's alike.
  await securityHeaders(app, deps.config);
  app.addHook('onResponse', async (request, reply) => {
    request.log.debug({ method: request.method, url: request.url, statusCode: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'request');
  });
  installErrorHandler(app);
  // Before the route auth hook: a throttled key id is refused before any key lookup.
  const throttling = await installThrottling(app, deps.config);
  const untrustedProxy = watchUntrustedProxy(app, deps.config);
  // Before any route is registered: the onRoute check must see every one of them.
  installRouteAuth(app, deps.db);
  const metrics = await apiMetrics(app, deps);
  metrics.registry.registerMetric(throttling.refusals);
  metrics.registry.registerMetric(untrustedProxy.forwarded);
  const providerBudget = new ApiProviderBudget({ ratePerSecond: deps.config.API_RAZORPAY_RPS, burst: deps.config.API_RAZORPAY_BURST });
  metrics.registry.registerMetric(providerBudget.refusals);
  await app.register(async (scope) => healthRoutes(scope, deps));
  await app.register(async (scope) => financeRoutes(scope, deps));
  await app.register(async (scope) => opsPayoutRoutes(scope, deps));
  await app.register(async (scope) => moneyInRoutes(scope, { ...deps, providerBudget }));
  await app.register(async (scope) => financeExportRoutes(scope, deps));
  await app.register(async (scope) => opsRefundRoutes(scope, deps));
  await app.register(async (scope) => statementRoutes(scope, deps));
  await app.register(async (scope) => settlementRoutes(scope, deps));
  // The browser console (/console): its own scope for cookies, forms and HTML errors.
  await app.register(async (scope) => consoleRoutes(scope, deps));
  // Last: the document lists every route registered before it.
  await operationalRoutes(app, deps, metrics, packageVersion);
  return app;
}
