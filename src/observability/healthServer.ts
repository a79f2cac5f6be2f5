/** A process without the API (the worker) answers `/health` and `/ready` on its own small HTTP
 * port, for compose healthchecks and orchestrators, and `/metrics` for Prometheus when given them. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readiness } from './readiness';

export interface HealthServer { port: number; close(): Promise<void> }

/** The Prometheus text format's media type (what prom-client's registry serves). */
const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8';

export async function startHealthServer(opts: {
  host: string;
  port: number;
  readiness: () => Promise<Readiness>;
  /** One scrape in the Prometheus text format (src/observability/metrics.ts); absent: no /metrics. */
  metrics?: () => Promise<string>;
}): Promise<HealthServer> {
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
    if (path === '/metrics' && opts.metrics) {
      opts.metrics().then((text) => {
        response.writeHead(200, { 'content-type': PROMETHEUS_TEXT });
        response.end(text);
      }, (err: unknown) => send(500, { error: { code: 'metrics_failed', message: String(err) } }));
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
