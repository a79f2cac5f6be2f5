/** Issue 21, item 9: the API's operational routes. With ADMIN_PORT (required in production), the
 * metrics, the OpenAPI document and its Swagger UI, and /ready with each check's detail are served on
 * that port only; the public port answers /ready with no detail (no dependency error, host or
 * credential failure). Without it (development and tests) they stay on the public port. Real
 * PostgreSQL; no Temporal client, so readiness has a failing check to keep quiet about. */
import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../src/api/server';
import { loadConfig, type Config } from '../../src/config/config';
import type { Db } from '../../src/db/pool';
import { freePort } from '../../src/devstack/ports';
import { isolatedPool } from '../support/db';

describe('operational routes on the admin port', () => {
  let db: Db;
  let base: Config;
  const servers: FastifyInstance[] = [];

  beforeAll(async () => {
    ({ db } = await isolatedPool());
    base = loadConfig({ ...process.env, NODE_ENV: 'development' });
  });
  afterAll(async () => {
    for (const s of servers) await s.close();
    await db?.end();
  });

  describe('with ADMIN_PORT (as production must have it)', () => {
    let publicUrl: string;
    let adminUrl: string;

    beforeAll(async () => {
      const adminPort = await freePort();
      const api = await buildApi({ config: { ...base, NODE_ENV: 'production', ADMIN_PORT: adminPort, ADMIN_HOST: '127.0.0.1' }, db });
      servers.push(api);
      publicUrl = await api.listen({ port: 0, host: '127.0.0.1' });
      adminUrl = `http://127.0.0.1:${adminPort}`;
    });

    test.each(['/metrics', '/openapi.json', '/docs/', '/docs/json'])('when %s is asked on the public port, then it is not there (404)', async (path) => {
      const res = await fetch(`${publicUrl}${path}`);
      expect([path, res.status]).toEqual([path, 404]);
    });

    test('when /ready fails on the public port, then it says only that (503, no check, no detail); the admin port names each check and why', async () => {
      const open = await fetch(`${publicUrl}/ready`);
      expect(open.status).toBe(503);
      expect(await open.json()).toEqual({ ready: false });
      const admin = await fetch(`${adminUrl}/ready`);
      expect(admin.status).toBe(503);
      const detail = await admin.json() as { ready: boolean; checks: Record<string, { ok: boolean; detail: string }> };
      expect(detail.ready).toBe(false);
      expect(detail.checks.database).toEqual({ ok: true, detail: 'reachable' });
      expect(detail.checks.temporal).toEqual({ ok: false, detail: 'no Temporal client in this process' });
    });

    test('when the admin port is asked, then it serves the metrics, the OpenAPI document of the public routes and the Swagger UI', async () => {
      const metrics = await fetch(`${adminUrl}/metrics`);
      expect(metrics.status).toBe(200);
      expect(metrics.headers.get('content-type')).toContain('text/plain');
      expect(await metrics.text()).toContain('payouts_metrics_db_up 1');
      const doc = await (await fetch(`${adminUrl}/openapi.json`)).json() as { openapi: string; paths: Record<string, unknown> };
      expect(doc.openapi).toBe('3.1.0');
      expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/orders', '/webhooks/razorpay', '/ready', '/console/sign-in']));
      const ui = await fetch(`${adminUrl}/docs/`);
      expect(ui.status).toBe(200);
      expect(await ui.text()).toContain('swagger');
      expect((await fetch(`${adminUrl}/health`)).status).toBe(200);
    });

    test('when the API is closed, then the admin port is closed too', async () => {
      const adminPort = await freePort();
      const api = await buildApi({ config: { ...base, ADMIN_PORT: adminPort, ADMIN_HOST: '127.0.0.1' }, db });
      await api.listen({ port: 0, host: '127.0.0.1' });
      expect((await fetch(`http://127.0.0.1:${adminPort}/health`)).status).toBe(200);
      await api.close();
      await expect(fetch(`http://127.0.0.1:${adminPort}/health`)).rejects.toThrow();
    });
  });

  test('when production has no ADMIN_PORT, then the API refuses to start and says why', async () => {
    await expect(buildApi({ config: { ...base, NODE_ENV: 'production', ADMIN_PORT: undefined }, db })).rejects.toThrow(/ADMIN_PORT/);
  });

  test('when ADMIN_PORT is unset in development, then /metrics, /openapi.json and a detailed /ready stay on the public port', async () => {
    const api = await buildApi({ config: { ...base, ADMIN_PORT: undefined }, db });
    servers.push(api);
    const url = await api.listen({ port: 0, host: '127.0.0.1' });
    expect((await fetch(`${url}/metrics`)).status).toBe(200);
    expect((await fetch(`${url}/openapi.json`)).status).toBe(200);
    expect(((await (await fetch(`${url}/ready`)).json()) as { checks?: unknown }).checks).toHaveProperty('temporal');
  });
});
