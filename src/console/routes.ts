/** The console at /console: server-rendered pages for finance and ops over the same use cases as the
 * API. Every console route declares `config.console` — who may open it ('anyone', 'signed-in' or a
 * role) — beside `auth: { public: 'console-session' }` (no API key per request: a session cookie,
 * checked here). Forms are url-encoded and parsed in this scope only; every POST carries the
 * session's CSRF token. A missing session sends a page to sign-in and answers a POST 401; a role the
 * page does not allow answers 403 — in the app's error envelope unless a browser asked for HTML. */
import fs from 'node:fs';
import path from 'node:path';
import formbody from '@fastify/formbody';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { AppError } from '../appError';
import { consoleRoute, rolesOf, sendPage, sessionOf, wantsHtml, type ConsoleAccess, type ConsoleDeps } from './access';
import { html } from './html';
import { navFor, page } from './layout';
import { csrfMatches, endSession, readSession, sessionCookie, sessionSetCookie, SESSION_HOURS, signIn } from './session';
import { financePages } from './financePages';
import { opsPages } from './opsPages';
import { settlementPages } from './settlementPages';
import { statementPages } from './statementPages';
import { webhookPages } from './webhookPages';
import { batchPages } from './batchPages';
import { bankDetailPages } from './bankDetailPages';
import { crossSiteSignIn } from './signInOrigin';

const HTMX = path.join(path.dirname(require.resolve('htmx.org/package.json')), 'dist', 'htmx.min.js');
const signInBody = z.object({ key: z.string().trim().min(1, 'paste your API key').max(200), person: z.string().trim().max(100).optional() });

export async function consoleRoutes(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  // The instance's body limit; the pages that take a file raise it on their route.
  await app.register(formbody);

  app.addHook('onRoute', (route) => {
    if (!(route.config as { console?: ConsoleAccess } | undefined)?.console) throw new Error(`console route ${String(route.method)} ${route.url} declares no console access`);
  });

  app.addHook('onRequest', async (request, reply) => {
    const access = request.routeOptions.config.console;
    if (!access) return;
    // The person typed at sign-in is the X-Actor of every audited action; never the browser's header.
    delete request.headers['x-actor'];
    const session = await readSession(deps.db, sessionCookie(request.headers.cookie));
    if (session) {
      request.consoleSession = session;
      request.principal = session.principal;
      if (session.person) request.headers['x-actor'] = session.person;
    }
    if (access === 'anyone') return;
    if (!session) {
      if (request.method === 'GET') return reply.redirect('/console/sign-in', 303);
      throw new AppError(401, 'unauthorized', 'sign in to the console first');
    }
    const roles = rolesOf(access);
    if (roles.length > 0 && !roles.some((r) => session.principal.roles.includes(r))) {
      throw new AppError(403, 'forbidden', `this console page needs the role ${roles.join(' or ')}; the key ${session.principal.name} has ${session.principal.roles.join(', ')}`);
    }
  });

  // After the role check (onRequest) and the body: every POST but sign-in carries the token.
  app.addHook('preHandler', async (request) => {
    if (request.method !== 'POST' || request.routeOptions.config.console === 'anyone') return;
    const body = (request.body ?? {}) as Record<string, unknown>;
    if (!csrfMatches(sessionOf(request), body._csrf)) throw new AppError(403, 'csrf_token_invalid', 'the form is stale or forged: reload the page and try again');
  });

  // A browser gets a page it can read and a way back; anything else the app's error envelope.
  app.setErrorHandler((err, request, reply) => {
    if (!wantsHtml(request)) throw err;
    const status = err instanceof AppError ? err.httpStatus : err instanceof z.ZodError ? 400 : 500;
    const message = err instanceof AppError ? err.message : err instanceof z.ZodError ? err.issues.map((i) => `${i.path.join('.') || 'input'}: ${i.message}`).join('; ') : 'something went wrong; the error is logged';
    if (status === 500) request.log.error({ err }, 'console error');
    return reply.status(status).type('text/html; charset=utf-8').send(page({
      title: status === 403 ? 'Not allowed' : status === 404 ? 'Not found' : 'That did not work', session: request.consoleSession ?? null,
      body: html`<p class="error" role="alert">${message}</p><p><a href="/console">Back to the console</a></p>`,
    }));
  });

  app.get('/console/assets/htmx.min.js', consoleRoute('anyone', 'Console: htmx (served from the htmx.org package)'), async (_request, reply) =>
    reply.type('application/javascript; charset=utf-8').header('cache-control', 'public, max-age=86400').send(fs.createReadStream(HTMX)));

  app.get('/console', consoleRoute('anyone', 'Console: the first page the signed-in role may use'), async (request, reply) => {
    const first = request.consoleSession ? navFor(request.consoleSession)[0] : undefined;
    return reply.redirect(first?.href ?? (request.consoleSession ? '/console/home' : '/console/sign-in'), 303);
  });

  app.get('/console/home', consoleRoute('signed-in', 'Console: a signed-in key with no console role'), async (request, reply) => sendPage(reply, page({
    title: 'Nothing here for this key', session: sessionOf(request),
    body: html`<p>The console has pages for the roles finance, ops and admin; this key has ${sessionOf(request).principal.roles.join(', ')}.</p>`,
  })));

  const signInPage = (error?: string) => page({
    title: 'Sign in', session: null,
    body: html`${error ? html`<p class="error" role="alert" id="sign-in-error">${error}</p>` : ''}
<form method="post" action="/console/sign-in" aria-describedby="sign-in-help">
<p id="sign-in-help" class="muted">Use the same API key as the API (<code>pk_…</code>); the console shows what its role may see and do.</p>
<div class="field"><label for="key">API key</label><input id="key" name="key" type="password" autocomplete="off" required size="70" autofocus></div><br>
<div class="field"><label for="person">Your name (recorded beside the key in the audit trail)</label><input id="person" name="person" autocomplete="name" size="40" maxlength="100"></div><br>
<button type="submit">Sign in</button></form>`,
  });

  app.get('/console/sign-in', consoleRoute('anyone', 'Console: the sign-in form'), async (_request, reply) => sendPage(reply, signInPage()));

  // Secure in production (always behind TLS), or when the browser came over HTTPS to us or to a
  // trusted proxy (TRUST_PROXY: request.protocol reads its X-Forwarded-Proto).
  const secure = (request: FastifyRequest) => deps.config.NODE_ENV === 'production' || request.protocol === 'https';

  app.post('/console/sign-in', consoleRoute('anyone', 'Console: sign in with an API key (sets the session cookie)'), async (request, reply) => {
    const crossSite = crossSiteSignIn(request.headers, { publicOrigin: deps.config.PUBLIC_URL, host: request.host });
    if (crossSite) throw new AppError(403, 'cross_site_sign_in', `this sign-in form was posted from another site (${crossSite}); open the console's own sign-in page and sign in there`);
    const parsed = signInBody.safeParse(request.body ?? {});
    const signed = parsed.success ? await signIn(deps.db, parsed.data.key, parsed.data.person || null) : null;
    if (!signed) {
      request.refusedKeyThrottle?.(); // a client over its limit of refused keys: 429, not the page
      return sendPage(reply.status(401), signInPage('That API key is unknown, revoked or malformed.'));
    }
    reply.header('set-cookie', sessionSetCookie(signed.token, { secure: secure(request), maxAgeSeconds: SESSION_HOURS * 3600 }));
    return reply.redirect('/console', 303);
  });

  app.post('/console/sign-out', consoleRoute('signed-in', 'Console: sign out (ends the session)'), async (request, reply) => {
    await endSession(deps.db, sessionOf(request).token);
    reply.header('set-cookie', sessionSetCookie('', { secure: secure(request), maxAgeSeconds: 0 }));
    return reply.redirect('/console/sign-in', 303);
  });

  await financePages(app, deps);
  await opsPages(app, deps);
  await statementPages(app, deps);
  await settlementPages(app, deps);
  await webhookPages(app, deps);
  await batchPages(app, deps);
  await bankDetailPages(app, deps);
}
