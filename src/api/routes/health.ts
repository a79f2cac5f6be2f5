import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../server';

export async function healthRoutes(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  app.get('/health', async () => {
    await deps.db.query('SELECT 1');
    return { status: 'ok', time: new Date().toISOString() };
  });
}
