/** The one place the API enforces who may call what. Every route declares `config.auth`: either
 * the roles it accepts, or why it is public (its credential is a signature the route checks
 * itself). A route registered without a declaration stops the API from starting. */
import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/pool';
import { AppError } from '../appError';
import { authenticateApiKey, type Principal } from './apiKeys';
import { satisfies, type RoleRequirement } from './roles';

export type RouteAuth =
  | { roles: readonly RoleRequirement[] }
  // 'metrics': Prometheus scrapes without credentials; /metrics carries counts, aggregate amounts
  // and ages, no id, secret or personal data; with ADMIN_PORT only there (src/api/operationalRoutes.ts).
  // 'console-session': the browser console (/console) presents no API key per request but a session
  // cookie from signing in with one; src/console/session.ts checks it, re-checks the key and the
  // page's role on every request (the route's `config.console`), and CSRF on every POST.
  | { public: 'health' | 'razorpay-webhook-signature' | 'checkout-signature' | 'docs' | 'metrics' | 'console-session' };

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: RouteAuth;
  }
  interface FastifyRequest {
    principal?: Principal;
    /** Set by the throttling (src/api/rateLimit.ts) when this client is over its limit of refused
     * keys: it throws the 429 a refused key gets instead of 401. A valid key is still served. */
    refusedKeyThrottle?: () => never;
  }
}

/** Route options for a route that needs one of `roles`. */
export const requires = (...roles: RoleRequirement[]) => ({ config: { auth: { roles } satisfies RouteAuth } });
/** Route options for a public route, with the reason it needs no API key. */
export const publicRoute = (why: Extract<RouteAuth, { public: unknown }>['public']) => ({ config: { auth: { public: why } satisfies RouteAuth } });

const REALM = 'Bearer realm="payouts"';

/** The API key a request presents (`Authorization: Bearer …`), if any. */
export function bearer(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (typeof header !== 'string' || !header.startsWith('Bearer ')) return null;
  return header.slice(7).trim() || null;
}

export interface DeclaredRoute { method: string; url: string; auth: RouteAuth; config: FastifyContextConfig }
const declared = new WeakMap<FastifyInstance, DeclaredRoute[]>();

/** Every route of an API built with installRouteAuth, with what it requires (HEAD twins left out). */
export function declaredRoutes(app: FastifyInstance): DeclaredRoute[] {
  return [...(declared.get(app) ?? [])];
}

/** Installs the declaration check and the authenticating hook on the root instance. */
export function installRouteAuth(app: FastifyInstance, db: Pick<Db, 'query'>): void {
  const routes: DeclaredRoute[] = [];
  declared.set(app, routes);
  app.addHook('onRoute', (route) => {
    // The Swagger UI plugin's own routes (/docs/…) are documentation: public.
    if (route.url.startsWith('/docs') && !(route.config as { auth?: RouteAuth } | undefined)?.auth) {
      route.config = { ...(route.config ?? {}), auth: { public: 'docs' } };
    }
    const config = (route.config ?? {}) as FastifyContextConfig;
    const auth = config.auth;
    if (!auth) throw new Error(`route ${String(route.method)} ${route.url} declares no auth (config.auth: roles or public)`);
    for (const method of [route.method].flat()) if (method !== 'HEAD') routes.push({ method, url: route.url, auth, config });
  });
  // onRequest: before the body is read, so an anonymous caller costs no parsing.
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const auth = request.routeOptions.config.auth;
    if (!auth || 'public' in auth) return; // unknown routes fall through to the 404 handler
    const presented = bearer(request);
    const principal = presented ? await authenticateApiKey(db, presented) : null;
    if (!principal) {
      if (presented) request.refusedKeyThrottle?.();
      reply.header('WWW-Authenticate', presented ? `${REALM}, error="invalid_token"` : REALM);
      throw new AppError(401, 'unauthorized', presented ? 'the API key is unknown, revoked or malformed' : 'an API key is required: Authorization: Bearer pk_…');
    }
    if (!auth.roles.some((r) => satisfies(principal.roles, r))) {
      throw new AppError(403, 'forbidden', `this route needs the role ${auth.roles.join(' or ')}; the key ${principal.name} has ${principal.roles.join(', ')}`);
    }
    request.principal = principal;
  });
}

/** The authenticated principal of a route that declared roles (the hook guarantees one). */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error('principalOf called on a route without roles');
  return request.principal;
}

/** Who did it, for audit rows: always the key's name; `X-Actor` may add the person beside it. */
export function auditActor(request: FastifyRequest): string {
  const { name } = principalOf(request);
  const person = request.headers['x-actor'];
  const named = typeof person === 'string' ? person.replace(/[\r\n\t]/g, ' ').trim().slice(0, 100) : '';
  return named ? `key:${name} (${named})` : `key:${name}`;
}
