/** The topology's load balancer (src/devstack/topology.ts): a round-robin reverse proxy in this
 * process, standing in for the one in front of the APIs in production. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RoundRobinProxy {
  url: string;
  /** Requests answered by each upstream, in the order given. */
  served(): number[];
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'proxy-authorization', 'proxy-authenticate']);

function forwardableHeaders(headers: http.IncomingHttpHeaders | http.OutgoingHttpHeaders): http.OutgoingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([k, v]) => v !== undefined && !HOP_BY_HOP.has(k.toLowerCase())));
}

/** A round-robin HTTP reverse proxy standing in for the load balancer: each request goes to the
 * next upstream; one that refuses the connection (a stopped API) is skipped for the next. Bodies
 * are forwarded byte for byte (webhook signatures are over the raw body). */
export async function startRoundRobinProxy(opts: { upstreams: string[]; host?: string; port?: number }): Promise<RoundRobinProxy> {
  if (opts.upstreams.length === 0) throw new Error('a proxy needs at least one upstream');
  const upstreams = opts.upstreams.map((u) => new URL(u));
  const served = upstreams.map(() => 0);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  let next = 0;

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', () => res.destroy());
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const first = next++ % upstreams.length;
      const attempt = (tried: number) => {
        const index = (first + tried) % upstreams.length;
        const target = upstreams[index]!;
        const headers: http.OutgoingHttpHeaders = {
          ...forwardableHeaders(req.headers),
          host: target.host,
          'x-forwarded-for': req.socket.remoteAddress ?? '',
          'x-forwarded-host': req.headers.host ?? '',
          'x-forwarded-proto': 'http',
        };
        if (body.length > 0 || req.headers['content-length'] !== undefined) headers['content-length'] = String(body.length);
        const upstream = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers, agent }, (answer) => {
          served[index]! += 1;
          res.writeHead(answer.statusCode ?? 502, forwardableHeaders(answer.headers));
          answer.pipe(res);
          answer.on('error', () => res.destroy());
        });
        upstream.on('error', (err: NodeJS.ErrnoException) => {
          if (res.headersSent) return void res.destroy();
          // Nothing was sent to an upstream that refused the connection: the next one may take it.
          if (err.code === 'ECONNREFUSED' && tried + 1 < upstreams.length) return attempt(tried + 1);
          res.writeHead(502, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { code: 'bad_gateway', message: `upstream ${target.host}: ${err.message}` } }));
        });
        upstream.end(body);
      };
      attempt(0);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    served: () => [...served],
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
      agent.destroy();
    }),
  };
}
