/** One stable address in front of a database server that can change (issue 23, item 3): what a
 * managed PostgreSQL's DNS name is to its clients. node-postgres takes one host, so a failover is
 * the proxy re-pointed: the connections it holds are cut (as the old primary's are when it dies),
 * and new ones reach the new primary. While it points nowhere, connections are refused. */
import net from 'node:net';

export interface TcpProxy {
  readonly port: number;
  /** The port connections are forwarded to now (null: refused). */
  readonly target: number | null;
  /** Cuts every open connection and forwards new ones to `port` (null: refuses them). */
  pointAt(port: number | null): void;
  /** Connections forwarded so far. */
  readonly forwarded: number;
  close(): Promise<void>;
}

export async function startTcpProxy(opts: { target: number | null; host?: string }): Promise<TcpProxy> {
  const host = opts.host ?? '127.0.0.1';
  let target = opts.target;
  let forwarded = 0;
  const open = new Set<net.Socket>();
  const server = net.createServer((client) => {
    if (target === null) { client.destroy(); return; }
    forwarded += 1;
    const upstream = net.connect({ host, port: target });
    open.add(client);
    open.add(upstream);
    const cut = () => { client.destroy(); upstream.destroy(); open.delete(client); open.delete(upstream); };
    client.on('error', cut).on('close', cut);
    upstream.on('error', cut).on('close', cut);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    get target() { return target; },
    get forwarded() { return forwarded; },
    pointAt(next) {
      target = next;
      for (const socket of open) socket.destroy();
      open.clear();
    },
    close: () => new Promise<void>((resolve) => {
      for (const socket of open) socket.destroy();
      server.close(() => resolve());
    }),
  };
}
