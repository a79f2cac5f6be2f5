/** A production API behind a proxy it does not trust (issue 41): `X-Forwarded-For` arrives while
 * TRUST_PROXY is unset, so every caller is the proxy's address to the throttling and to the logs.
 * It cannot be seen at start-up, only on a request: each such request is counted in
 * `payouts_api_untrusted_forwarded_total` (alert on it), and an error is logged at most once per
 * interval, so a misconfigured balancer does not write a line per request. */
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { Counter } from 'prom-client';
import type { Config } from '../config/config';

export const UNTRUSTED_FORWARDED_LOG_INTERVAL_MS = 5 * 60_000;

export interface UntrustedProxyWatch {
  /** Registered by the caller in the process's metrics registry. */
  forwarded: Counter;
}

export function watchUntrustedProxy(
  app: FastifyInstance,
  config: Pick<Config, 'NODE_ENV' | 'TRUST_PROXY'>,
  opts: { log?: Pick<FastifyBaseLogger, 'error'>; intervalMs?: number; now?: () => number } = {},
): UntrustedProxyWatch {
  const forwarded = new Counter({ name: 'payouts_api_untrusted_forwarded_total', help: 'Production requests that carried X-Forwarded-For while TRUST_PROXY is unset (the API sees the proxy as every client: set TRUST_PROXY)', registers: [] });
  forwarded.inc(0);
  if (config.NODE_ENV !== 'production' || config.TRUST_PROXY !== false) return { forwarded };
  const log = opts.log ?? app.log;
  const intervalMs = opts.intervalMs ?? UNTRUSTED_FORWARDED_LOG_INTERVAL_MS;
  const now = opts.now ?? Date.now;
  let lastLogged = -Infinity;
  app.addHook('onRequest', async (request) => {
    if (request.headers['x-forwarded-for'] === undefined) return;
    forwarded.inc();
    if (now() - lastLogged < intervalMs) return;
    lastLogged = now();
    log.error({ peer: request.ip }, 'X-Forwarded-For arrived but TRUST_PROXY is unset: every client behind this proxy counts as one address (throttling, logs); set TRUST_PROXY to the proxy addresses (docs/production.md)');
  });
  return { forwarded };
}
