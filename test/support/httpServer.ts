/** A test's own HTTP server (a webhook receiver): listen on a free loopback port, close it for sure. */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Resolves with the webhook URL on the server's port. */
export async function listenOnFreePort(server: Server, path = '/webhooks/razorpay'): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
}

export function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** A test's webhook receiver: `server` answers; `start` listens on a free port and sets `url`. */
export abstract class TestReceiver {
  url = '';
  protected abstract readonly server: Server;
  async start(): Promise<void> {
    this.url = await listenOnFreePort(this.server);
  }
  stop(): Promise<void> {
    return closeServer(this.server);
  }
}
