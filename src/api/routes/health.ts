/** `/health`: the process is alive (no dependency touched). `/ready`: database reachable and
 * migrated, Temporal reachable; 503 otherwise, with each check's detail unless the detail has a port
 * of its own (ADMIN_PORT: src/api/operationalRoutes.ts), where a dependency's error (a host, an
 * authentication failure) is not told to the internet. */
import type { FastifyInstance } from 'fastify';
import { publicRoute } from '../../auth/routeAuth';
import { readiness } from '../../observability/readiness';
import type { ApiDeps } from '../deps';
import { documented } from '../openapi';

export async function healthRoutes(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  app.get('/health', documented(publicRoute('health'), { summary: 'The process is alive (no dependency touched)', tags: ['health'] }), async () => ({ status: 'ok', time: new Date().toISOString() }));
  app.get('/ready', documented(publicRoute('health'), { summary: 'Ready: the database reachable and migrated, Temporal reachable (503 with each check otherwise)', tags: ['health'] }), async (_request, reply) => {
    const result = await readiness({ db: deps.db, temporal: deps.temporal });
    return reply.status(result.ready ? 200 : 503).send(deps.config.ADMIN_PORT === undefined ? result : { ready: result.ready });
  });
}
