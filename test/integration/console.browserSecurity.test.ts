/** Issue 21, items 3–5: what the API tells a browser, over real HTTP against real PostgreSQL. The
 * console's session cookie is `Secure` in production, or when a trusted proxy says the browser came
 * over HTTPS (never on an untrusted X-Forwarded-Proto), with HSTS in production; every answer carries
 * helmet's headers (no framing, nosniff, a CSP whose script-src admits the console's inline script by
 * hash only); a sign-in posted from another site is refused and starts no session. */
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../src/api/server';
import { loadConfig, type Config } from '../../src/config/config';
import type { Db } from '../../src/db/pool';
import { mintRoleKeys, type RoleKeys } from '../support/apiKeys';
import { isolatedPool } from '../support/db';

describe('the console and the API in a browser\'s eyes', () => {
  let db: Db;
  let keys: RoleKeys;
  let base: Config;
  const servers: FastifyInstance[] = [];

  beforeAll(async () => {
    ({ db } = await isolatedPool());
    keys = await mintRoleKeys(db);
    base = loadConfig({ ...process.env, NODE_ENV: 'development' });
  });
  afterAll(async () => {
    for (const s of servers) await s.close();
    await db?.end();
  });

  /** A real API on a loopback port, with `config` over the development defaults. */
  async function serve(config: Partial<Config>): Promise<string> {
    const api = await buildApi({ config: { ...base, ...config }, db });
    servers.push(api);
    return api.listen({ port: 0, host: '127.0.0.1' });
  }

  const keyOf = (role: keyof RoleKeys) => keys[role].authorization.replace(/^Bearer /, '');
  const sessions = async () => Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM console_sessions')).rows[0]!.n);
  /** A sign-in form post as a browser on `url`'s own page sends it (Origin: url); a header given as
   * '' is left out. */
  const signIn = (url: string, headers: Record<string, string> = {}, role: keyof RoleKeys = 'finance') => fetch(`${url}/console/sign-in`, {
    method: 'POST', redirect: 'manual',
    headers: Object.fromEntries(Object.entries({ 'content-type': 'application/x-www-form-urlencoded', origin: url, ...headers }).filter(([, v]) => v !== '')),
    body: new URLSearchParams({ key: keyOf(role), person: 'Fiona' }).toString(),
  });
  const cookieFlags = (res: Response) => (res.headers.get('set-cookie') ?? '').split(';').map((p) => p.trim().split('=')[0]!);

  describe('3. the session cookie and HSTS', () => {
    test('when the API runs in production, then the sign-in cookie is Secure and every answer carries HSTS', async () => {
      const url = await serve({ NODE_ENV: 'production', ADMIN_PORT: 0, ADMIN_HOST: '127.0.0.1' });
      const res = await signIn(url);
      expect(res.status).toBe(303);
      expect(cookieFlags(res)).toEqual(expect.arrayContaining(['payouts_console', 'HttpOnly', 'SameSite', 'Secure']));
      for (const answer of [res, await fetch(`${url}/health`), await fetch(`${url}/console/sign-in`)]) {
        expect(answer.headers.get('strict-transport-security')).toBe('max-age=31536000; includeSubDomains');
      }
    });

    test('when a trusted proxy says the browser came over HTTPS, then the cookie is Secure outside production; over plain HTTP it is not, and no HSTS is sent', async () => {
      const url = await serve({ TRUST_PROXY: ['127.0.0.1'] });
      const overTls = await signIn(url, { 'x-forwarded-proto': 'https' });
      expect([overTls.status, cookieFlags(overTls).includes('Secure')]).toEqual([303, true]);
      const plain = await signIn(url);
      expect([plain.status, cookieFlags(plain).includes('Secure')]).toEqual([303, false]);
      expect(plain.headers.get('strict-transport-security')).toBeNull();
    });

    test('when no proxy is trusted (the default), then an X-Forwarded-Proto from the client is ignored', async () => {
      const url = await serve({ TRUST_PROXY: false });
      const res = await signIn(url, { 'x-forwarded-proto': 'https' });
      expect([res.status, cookieFlags(res).includes('Secure')]).toEqual([303, false]);
    });
  });

  describe('4. security headers', () => {
    let url: string;
    beforeAll(async () => { url = await serve({}); });

    const directives = (res: Response) => Object.fromEntries((res.headers.get('content-security-policy') ?? '').split(';').map((d) => d.trim()).filter(Boolean)
      .map((d) => { const [name, ...values] = d.split(/\s+/); return [name!, values]; }));

    test('when a console page is opened, then it may not be framed, is not sniffed, and its CSP admits only our own scripts', async () => {
      const res = await fetch(`${url}/console/sign-in`);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('referrer-policy')).toBe('same-origin');
      const csp = directives(res);
      expect(csp['frame-ancestors']).toEqual(["'none'"]);
      expect(csp['default-src']).toEqual(["'self'"]);
      expect(csp['object-src']).toEqual(["'none'"]);
      expect(csp['form-action']).toEqual(["'self'"]);
      expect(csp['script-src-attr']).toEqual(["'none'"]);
      expect(csp['script-src']![0]).toBe("'self'");
      expect(csp['script-src']!.slice(1).every((s) => /^'sha256-[A-Za-z0-9+/]+=*'$/.test(s))).toBe(true);
    });

    test('when a page carries an inline script, then the CSP admits it by its hash', async () => {
      const signedIn = await signIn(url);
      const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
      for (const page of ['/console/bank-statements', '/console/recon']) {
        const res = await fetch(`${url}${page}`, { headers: { cookie, accept: 'text/html' } });
        expect([page, res.status]).toEqual([page, 200]);
        const body = await res.text();
        expect(body).not.toMatch(/\son[a-z]+="/i);
        const allowed = directives(res)['script-src']!;
        for (const [, script] of body.matchAll(/<script>([\s\S]*?)<\/script>/g)) {
          expect(allowed).toContain(`'sha256-${createHash('sha256').update(script!).digest('base64')}'`);
        }
      }
      expect((await fetch(`${url}/console/bank-statements`, { headers: { cookie } }).then((r) => r.text()))).toContain('<script>');
    });

    test('when an API route answers JSON, then it carries nosniff and no-framing too', async () => {
      const res = await fetch(`${url}/health`);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(directives(res)['frame-ancestors']).toEqual(["'none'"]);
    });
  });

  describe('5. sign-in from another site', () => {
    let url: string;
    beforeAll(async () => { url = await serve({}); });

    test.each([
      ['an Origin of another site', { origin: 'https://evil.example' }],
      ['an opaque Origin (null)', { origin: 'null' }],
      ['no Origin and a Referer of another site', { origin: '', referer: 'https://evil.example/login.html' }],
      ['a same-host Origin on another port', { origin: 'http://127.0.0.1:1' }],
      ['Sec-Fetch-Site cross-site', { 'sec-fetch-site': 'cross-site' }],
    ])('when a sign-in form is posted with %s, then it is refused in the error envelope and no session starts', async (_what, headers) => {
      const before = await sessions();
      const res = await signIn(url, headers);
      expect(res.status).toBe(403);
      expect(res.headers.get('set-cookie')).toBeNull();
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('cross_site_sign_in');
      expect(await sessions()).toBe(before);
    });

    test('when a browser posts it cross-site, then it gets a page that says why and how to sign in', async () => {
      const res = await signIn(url, { origin: 'https://evil.example', accept: 'text/html' });
      expect(res.status).toBe(403);
      expect(res.headers.get('content-type')).toContain('text/html');
      expect(await res.text()).toContain('another site');
    });

    test('when the sign-in comes from the console\'s own page (Origin or, without it, Referer), then it signs in', async () => {
      const byOrigin = await signIn(url);
      expect([byOrigin.status, byOrigin.headers.get('location')]).toEqual([303, '/console']);
      const byReferer = await signIn(url, { origin: '', referer: `${url}/console/sign-in` }, 'ops');
      expect(byReferer.status).toBe(303);
      // Neither header: not a browser's cross-site form (browsers send Origin on every POST), e.g. a script.
      expect((await signIn(url, { origin: '' })).status).toBe(303);
    });

    test('when PUBLIC_URL is set, then the Origin must be exactly it (scheme too)', async () => {
      const pinned = await serve({ PUBLIC_URL: 'https://payouts.example.com' });
      expect((await signIn(pinned)).status).toBe(403);
      expect((await signIn(pinned, { origin: 'http://payouts.example.com' })).status).toBe(403);
      expect((await signIn(pinned, { origin: 'https://payouts.example.com' })).status).toBe(303);
    });
  });
});
