/** Throttling in front of every route (@fastify/rate-limit's counters, in this process's memory),
 * answered 429 in the app's envelope with Retry-After:
 * - requests per client address, on every route but the Razorpay webhook (ROUTE_POLICIES);
 * - console sign-in attempts per client, far fewer;
 * - requests per authenticated key (an API key, or the key behind a console session);
 * - refused API keys per key id and per client, counted apart:
 *   - a key id over its limit is refused before the key is looked up, so random secrets for a
 *     known key id cost no database work. A client that authenticated with that key id in the
 *     window keeps its lookups: whoever knows a key id (it is in logs and key lists) cannot lock
 *     its holder out;
 *   - a client over its limit still has every key looked up: a valid one is served, a refused one
 *     is answered 429 instead of 401. Behind a load balancer without TRUST_PROXY every caller is one
 *     client, and one bogus-key loop must not stop every role's valid keys (issue 41). Its lookups
 *     stay bounded by the per-client request limit.
 * Each refusal counts in `payouts_api_throttled_total{reason}`; a key id reaching its failure limit
 * is logged with the key id (alert PayoutsApiKeyUnderAttack). Installed on the root before the
 * route auth hook, so its onRequest check runs before any key lookup. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import rateLimit, { normalizeIP } from '@fastify/rate-limit';
import { Counter } from 'prom-client';
import { AppError } from '../appError';
import { presentedKeyId } from '../auth/apiKeys';
import { bearer } from '../auth/routeAuth';
import type { Config } from '../config/config';

export const THROTTLE_REASONS = ['client', 'sign_in', 'key', 'auth_failures_client', 'auth_failures_key'] as const;
export type ThrottleReason = (typeof THROTTLE_REASONS)[number];

type Policy = 'unthrottled' | 'sign-in';
/** Routes with a policy of their own (`METHOD url` as registered); every other route, unknown
 * URLs included, gets the per-client limit. */
export const ROUTE_POLICIES: Readonly<Record<string, Policy>> = {
  // Razorpay delivers from a handful of addresses, in bursts (about 600/s at the lunch peak:
  // docs/performance.md); a refusal is retried and, repeated for a day, disables the endpoint and so
  // every capture with it. An unsigned request costs one HMAC over a body its route's limit bounds,
  // and no database work (src/webhooks/receive.ts).
  'POST /webhooks/razorpay': 'unthrottled',
  // Each attempt is a key lookup and, when it succeeds, a session row.
  'POST /console/sign-in': 'sign-in',
};

const MESSAGES: Record<ThrottleReason, string> = {
  client: 'too many requests from this client',
  sign_in: 'too many sign-in attempts from this client',
  key: 'too many requests with this API key',
  auth_failures_client: 'too many refused API keys from this client',
  auth_failures_key: 'too many refused attempts with this API key id',
};

/** Limits no test or load run reaches: the tests, the topology (every request through its one
 * load balancer, from 127.0.0.1) and the campaign fire far more from one address than a client
 * should, sign in often and present wrong keys on purpose. The throttling tests set their own. */
export const LOAD_RUN_LIMITS: Readonly<Record<string, string>> = {
  RATE_LIMIT_CLIENT_MAX: '10000000', RATE_LIMIT_KEY_MAX: '10000000', RATE_LIMIT_SIGN_IN_MAX: '100000', RATE_LIMIT_AUTH_FAILURES_MAX: '100000',
};

export interface Throttling {
  /** Refusals by reason; registered by the caller in the process's metrics registry. */
  refusals: Counter<'reason'>;
}

/** Who recently authenticated with which key id (bounded, oldest forgotten first). */
export class RecentKeyHolders {
  private readonly until = new Map<string, number>();
  constructor(private readonly ttlMs: number, private readonly capacity = 10_000, private readonly now: () => number = Date.now) {}

  remember(keyId: string, client: string): void {
    const entry = `${keyId} ${client}`;
    this.until.delete(entry);
    this.until.set(entry, this.now() + this.ttlMs);
    if (this.until.size > this.capacity) this.until.delete(this.until.keys().next().value!);
  }

  holds(keyId: string, client: string): boolean {
    return (this.until.get(`${keyId} ${client}`) ?? 0) > this.now();
  }
}

const policyOf = (request: FastifyRequest): Policy | undefined => ROUTE_POLICIES[`${request.method} ${request.routeOptions.url}`];
const clientOf = (request: FastifyRequest): string => normalizeIP(request.ip);

/** The API key this request presents to a lookup: the bearer on a route that needs a role, the
 * form's key on sign-in (once its body is read). */
function presentedKey(request: FastifyRequest): string | null {
  if (policyOf(request) === 'sign-in') {
    const key = (request.body as { key?: unknown } | undefined)?.key;
    return typeof key === 'string' && key.trim() ? key : null;
  }
  const auth = request.routeOptions.config.auth;
  return auth && 'roles' in auth ? bearer(request) : null;
}

const keyIdOf = (request: FastifyRequest): string | null => {
  const presented = presentedKey(request);
  return presented ? presentedKeyId(presented) : null;
};

export async function installThrottling(app: FastifyInstance, config: Pick<Config, 'RATE_LIMIT_WINDOW_MS' | 'RATE_LIMIT_CLIENT_MAX' | 'RATE_LIMIT_KEY_MAX' | 'RATE_LIMIT_SIGN_IN_MAX' | 'RATE_LIMIT_AUTH_FAILURES_MAX'>): Promise<Throttling> {
  const timeWindow = config.RATE_LIMIT_WINDOW_MS;
  // global: false: no route hooks of the plugin's own; the hooks below decide what counts where.
  await app.register(rateLimit, { global: false, timeWindow });
  const counter = (max: number, keyGenerator: (request: FastifyRequest) => string) => app.createRateLimit({ max, timeWindow, keyGenerator });
  const requests = counter(config.RATE_LIMIT_CLIENT_MAX, clientOf);
  const signIns = counter(config.RATE_LIMIT_SIGN_IN_MAX, clientOf);
  const keyRequests = counter(config.RATE_LIMIT_KEY_MAX, (request) => request.principal?.keyId ?? '');
  const clientFailures = counter(config.RATE_LIMIT_AUTH_FAILURES_MAX, clientOf);
  const keyFailures = counter(config.RATE_LIMIT_AUTH_FAILURES_MAX, (request) => keyIdOf(request) ?? '');
  const holders = new RecentKeyHolders(timeWindow);

  const refusals = new Counter({ name: 'payouts_api_throttled_total', help: 'Requests the API refused with 429, by reason (client, sign_in, key, auth_failures_client, auth_failures_key)', labelNames: ['reason'], registers: [] });
  // Series exist from the start, so increase() and alerts see a 0 before the first refusal.
  for (const reason of THROTTLE_REASONS) refusals.inc({ reason }, 0);

  // The error handler sets Retry-After from details.retryAfterSeconds (src/api/errors.ts).
  const refuse = (reason: ThrottleReason, retryAfterSeconds: number): never => {
    refusals.inc({ reason });
    const seconds = Math.max(1, retryAfterSeconds);
    throw new AppError(429, 'rate_limited', `${MESSAGES[reason]}; retry in ${seconds} s`, { reason, retryAfterSeconds: seconds });
  };
  const count = async (check: typeof requests, request: FastifyRequest, reason: ThrottleReason) => {
    const state = await check(request);
    if (!state.isAllowed && state.isExceeded) refuse(reason, state.ttlInSeconds);
  };
  // A peek: the limit is reached once `max` failures are counted, so the next attempt is no lookup.
  const reached = async (check: typeof requests, request: FastifyRequest) => {
    const state = await check(request, { increment: false });
    return !state.isAllowed && state.remaining === 0 ? state.ttlInSeconds : null;
  };
  const refuseIfFailing = async (request: FastifyRequest) => {
    if (!presentedKey(request)) return;
    const clientWait = await reached(clientFailures, request);
    if (clientWait !== null) request.refusedKeyThrottle = () => refuse('auth_failures_client', clientWait);
    const keyId = keyIdOf(request);
    if (!keyId || holders.holds(keyId, clientOf(request))) return;
    const keyWait = await reached(keyFailures, request);
    if (keyWait !== null) refuse('auth_failures_key', keyWait);
  };

  app.addHook('onRequest', async (request) => {
    const policy = policyOf(request);
    if (policy === 'unthrottled') return;
    await count(requests, request, 'client');
    if (policy === 'sign-in') await count(signIns, request, 'sign_in');
    else await refuseIfFailing(request); // sign-in's key is in its body: checked in preHandler
  });
  // After every onRequest hook (the route auth's, the console session's): the principal is known.
  app.addHook('preParsing', async (request, _reply, payload) => {
    if (request.principal) await count(keyRequests, request, 'key');
    return payload;
  });
  app.addHook('preHandler', async (request) => {
    if (policyOf(request) === 'sign-in') await refuseIfFailing(request);
  });
  // The outcome of a lookup: sign-in answers 401 for a refused key and redirects (3xx) once signed
  // in; a route that needs a role answers 401 for a refused key and has a principal otherwise.
  app.addHook('onSend', async (request, reply, payload) => {
    const presented = presentedKey(request);
    if (!presented || reply.statusCode === 429) return payload;
    const keyId = presentedKeyId(presented);
    const client = clientOf(request);
    if (reply.statusCode === 401) {
      await clientFailures(request);
      if (keyId) {
        const state = await keyFailures(request);
        if (!state.isAllowed && state.remaining === 0 && !state.isExceeded) {
          request.log.warn({ keyId, client }, 'API key id reached its limit of failed authentications: refused before lookup for the rest of the window');
        }
      }
    } else if (keyId && (request.principal?.keyId === keyId || (policyOf(request) === 'sign-in' && reply.statusCode >= 300 && reply.statusCode < 400))) {
      holders.remember(keyId, client);
    }
    return payload;
  });
  return { refusals };
}
