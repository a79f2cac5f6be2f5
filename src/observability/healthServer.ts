/** A process without the API (the worker) answers `/health` and `/ready` on its own small HTTP
 * port, for compose healthchecks and orchestrators. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readiness } from './readiness';

export interface HealthServer { port: number; close(): Promise<void> }

export async function startHealthServer(opts: { host: string; port: number; readiness: () => Promise<Readiness> }): Promise<HealthServer> {
  const server = http.createServer((request, response) => {
    const send = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    const path = (request.url ?? '/').split('?')[0];
    if (request.method !== 'GET') return send(405, { error: { code: 'method_not_allowed', message: 'GET only' } });
    if (path === '/health') return send(200, { status: 'ok', time: new Date().toISOString() });
    if (path === '/ready') {
      opts.readiness().then((r) => send(r.ready ? 200 : 503, r), (err: unknown) => send(503, { ready: false, error: String(err) }));
      return;
    }
    return send(404, { error: { code: 'not_found', message: `no route GET ${path}` } });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
