/** Every route a caller reaches without an API key (the route table's public routes that need no
 * console session), hit with a body over its limit, a media type it does not take and a burst past
 * the rate limit from one client: each is answered in the app's envelope, and no row of any table
 * changes. Then signed webhooks the receiver refuses to apply (stale, from the future): answered
 * 2xx, kept only in quarantined_webhooks. The table must name every public route, so a new one
 * cannot ship without its row here (issue 21, item 6). */
import { declaredRoutes } from '../../src/auth/routeAuth';
import { WEBHOOK_BODY_LIMIT_BYTES } from '../../src/api/routes/webhooks';
import { hmacSha256Hex } from '../../src/gateway/signatures';
import type { Db } from '../../src/db/pool';
import { startMoneyInHarness, type MoneyInHarness } from './moneyinHarness';

const LIMITS = { TRUST_PROXY: ['127.0.0.1'], RATE_LIMIT_CLIENT_MAX: 6, RATE_LIMIT_SIGN_IN_MAX: 3, RATE_LIMIT_AUTH_FAILURES_MAX: 50, RATE_LIMIT_WINDOW_MS: 60_000, API_BODY_LIMIT_BYTES: 64 * 1024 };
/** A well-formed key whose id and secret no row has. */
const UNKNOWN_KEY = `pk_key_000000000000_${'A'.repeat(43)}`;

interface PublicRow {
  method: 'GET' | 'POST';
  url: string;
  path: string;
  /** For routes that read a body: a request the route answers without writing (unsigned, bad key…). */
  send?: { type: string; body: string; status: number };
  /** The route's largest body. */
  bodyLimit?: number;
  /** What a body of a media type the route does not parse gets (415, or the route's own refusal
   * where it reads every type as raw bytes). */
  badType?: { status: number; code: string };
  /** Which limit a burst from one client meets. */
  burst: 'client' | 'sign_in' | 'unthrottled';
}

/** A GET route called at its own URL, held to the per-client limit. */
const plainGet = (url: string, path = url): PublicRow => ({ method: 'GET', url, path, burst: 'client' });

const ROWS: PublicRow[] = [
  ...['/health', '/ready', '/metrics', '/openapi.json'].map((url) => plainGet(url)),
  // The Swagger UI (@fastify/swagger-ui) and its files.
  ...['/docs', '/docs/json', '/docs/yaml', '/docs/static/index.html', '/docs/static/swagger-initializer.js'].map((url) => plainGet(url)),
  plainGet('/docs/static/*', '/docs/static/index.css'),
  // The console's pages open to anyone (the others need a session: console.*.test.ts).
  ...['/console/assets/htmx.min.js', '/console', '/console/sign-in'].map((url) => plainGet(url)),
  {
    method: 'POST', url: '/console/sign-in', path: '/console/sign-in', burst: 'sign_in', bodyLimit: LIMITS.API_BODY_LIMIT_BYTES,
    send: { type: 'application/x-www-form-urlencoded', body: `key=${UNKNOWN_KEY}&person=Mallory`, status: 401 },
    badType: { status: 415, code: 'unsupported_media_type' },
  },
  {
    method: 'POST', url: '/v1/orders/:orderId/payment-callback', path: '/v1/orders/ord_AAAAAAAAAAAAAA/payment-callback', burst: 'client', bodyLimit: LIMITS.API_BODY_LIMIT_BYTES,
    send: { type: 'application/json', body: JSON.stringify({ razorpay_payment_id: 'pay_AAAAAAAAAAAAAA', razorpay_order_id: 'order_AAAAAAAAAAAAAA', razorpay_signature: '0'.repeat(64) }), status: 404 },
    badType: { status: 415, code: 'unsupported_media_type' },
  },
  {
    method: 'POST', url: '/webhooks/razorpay', path: '/webhooks/razorpay', burst: 'unthrottled', bodyLimit: WEBHOOK_BODY_LIMIT_BYTES,
    send: { type: 'application/json', body: JSON.stringify({ entity: 'event', event: 'payment.captured' }), status: 401 },
    // The webhook reads any media type as the raw bytes it verifies: an unsigned body is refused by its signature.
    badType: { status: 401, code: 'invalid_signature' },
  },
];

/** Every table's row count: "nothing written" is all of them unchanged. */
async function rowCounts(db: Db): Promise<Record<string, number>> {
  const { rows: tables } = await db.query<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1`);
  const counts: Record<string, number> = {};
  for (const { name } of tables) counts[name] = (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${name}"`)).rows[0]!.n;
  return counts;
}

let clients = 0;
/** A client address of its own per call, so one row's burst does not spend another's budget. */
const freshClient = () => `10.21.${Math.floor(++clients / 250)}.${clients % 250 + 1}`;

/** Over HTTP; the harness trusts its own loopback proxy, so X-Forwarded-For names the client. */
async function call(h: MoneyInHarness, row: Pick<PublicRow, 'method' | 'path'>, opts: { client?: string; type?: string; body?: string; headers?: Record<string, string> }) {
  const res = await fetch(`${h.baseUrl}${row.path}`, {
    method: row.method, body: opts.body, redirect: 'manual',
    headers: { ...(opts.type ? { 'content-type': opts.type } : {}), ...(opts.client ? { 'x-forwarded-for': opts.client } : {}), ...opts.headers },
  });
  const text = await res.text();
  let body: unknown = null;
  try { body = JSON.parse(text); } catch { /* a page or a script */ }
  return { status: res.status, headers: res.headers, body: body as { error?: { code: string; message: string; details?: unknown } } | null };
}

const envelope = (code: string) => ({ error: expect.objectContaining({ code, message: expect.any(String) }) });

describe('public routes: body limits, media types and bursts', () => {
  let h: MoneyInHarness;
  beforeAll(async () => { h = await startMoneyInHarness({ config: LIMITS }); });
  afterAll(async () => { await h?.close(); });

  test('when the routes are listed, then every one reachable without a key or session has a row here', () => {
    const publicRoutes = declaredRoutes(h.app)
      .filter((r) => 'public' in r.auth && (r.auth.public !== 'console-session' || r.config.console === 'anyone'))
      .map((r) => `${r.method} ${r.url}`).sort();
    expect(publicRoutes).toEqual(ROWS.map((r) => `${r.method} ${r.url}`).sort());
  });

  const bodyRows = ROWS.filter((r) => r.send);

  test.each(bodyRows.map((r) => [`${r.method} ${r.url}`, r] as const))('%s: a body one byte over its limit → 413 body_too_large, nothing written', async (_name, row) => {
    const before = await rowCounts(h.db);
    const answered = await call(h, row, { client: freshClient(), type: row.send!.type, body: 'a'.repeat(row.bodyLimit! + 1) });
    expect([answered.status, answered.body]).toEqual([413, envelope('body_too_large')]);
    // At its limit the body is read, and the route answers as it does any request it refuses.
    const atLimit = await call(h, row, { client: freshClient(), type: row.send!.type, body: row.send!.body.padEnd(row.bodyLimit!, ' ') });
    expect(atLimit.status).not.toBe(413);
    expect(await rowCounts(h.db)).toEqual(before);
  });

  test.each(bodyRows.map((r) => [`${r.method} ${r.url}`, r] as const))('%s: a media type it does not parse → refused in the envelope, nothing written', async (_name, row) => {
    const before = await rowCounts(h.db);
    const answered = await call(h, row, { client: freshClient(), type: 'application/xml', body: '<event/>' });
    expect([answered.status, answered.body]).toEqual([row.badType!.status, envelope(row.badType!.code)]);
    expect(await rowCounts(h.db)).toEqual(before);
  });

  test.each(ROWS.map((r) => [`${r.method} ${r.url}`, r] as const))('%s: a burst from one client past its limit → 429 rate_limited with Retry-After, nothing written', async (_name, row) => {
    const before = await rowCounts(h.db);
    const client = freshClient();
    const limit = row.burst === 'sign_in' ? LIMITS.RATE_LIMIT_SIGN_IN_MAX : LIMITS.RATE_LIMIT_CLIENT_MAX;
    const send = () => call(h, row, { client, type: row.send?.type, body: row.send?.body });
    for (let i = 0; i < limit; i++) expect((await send()).status).not.toBe(429);
    const past = await send();
    if (row.burst === 'unthrottled') {
      // Razorpay delivers from a few addresses in bursts; a refusal would be retried and at length disable the endpoint.
      for (let i = 0; i < 2 * limit; i++) expect((await send()).status).toBe(row.send!.status);
      expect(past.status).toBe(row.send!.status);
    } else {
      expect([past.status, past.body]).toEqual([429, envelope('rate_limited')]);
      expect(past.body!.error!.details).toEqual({ reason: row.burst, retryAfterSeconds: expect.any(Number) });
      expect(Number(past.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(Number(past.headers.get('retry-after'))).toBeLessThanOrEqual(LIMITS.RATE_LIMIT_WINDOW_MS / 1000);
      // Another client is not held back by this one.
      expect((await call(h, row, { client: freshClient(), type: row.send?.type, body: row.send?.body })).status).not.toBe(429);
    }
    expect(await rowCounts(h.db)).toEqual(before);
  });

  test('when a burst past the limit comes over a real connection, then it is counted by the peer address and refused 429 with Retry-After', async () => {
    // Every earlier request named a client of its own: 127.0.0.1 itself has its whole budget.
    const answers: Response[] = [];
    for (let i = 0; i <= LIMITS.RATE_LIMIT_CLIENT_MAX; i++) answers.push(await fetch(`${h.baseUrl}/health`));
    expect(answers.map((a) => a.status)).toEqual([...Array(LIMITS.RATE_LIMIT_CLIENT_MAX).fill(200), 429]);
    expect(Number(answers.at(-1)!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await answers.at(-1)!.json()).toEqual(envelope('rate_limited'));
  });

  /** Signed webhooks the receiver sets aside instead of applying (src/webhooks/receive.ts): 2xx,
   * kept in quarantined_webhooks, no other row written. Add a row per reason the receiver gains. */
  const SIGNED_SET_ASIDE: { what: string; createdAt: () => number; reason: string }[] = [
    { what: 'older than the replay window (a captured body replayed under a fresh event id)', createdAt: () => Math.floor(Date.now() / 1000) - 2 * 86_400, reason: 'too_old' },
    { what: 'dated ahead of our clock by more than the skew', createdAt: () => Math.floor(Date.now() / 1000) + 3_600, reason: 'from_future' },
  ];

  test.each(SIGNED_SET_ASIDE.map((r) => [r.what, r] as const))('POST /webhooks/razorpay: a signed event %s → 2xx set aside, only quarantined_webhooks gains a row', async (_what, row) => {
    const before = await rowCounts(h.db);
    const body = JSON.stringify({
      entity: 'event', account_id: 'acc_PlatformMeals1', event: 'payment.captured', contains: ['payment'], created_at: row.createdAt(),
      payload: { payment: { entity: { id: 'pay_StaleReplay0001', entity: 'payment', amount: 10_000, currency: 'INR', status: 'captured', order_id: 'order_StaleReplay001' } } },
    });
    const answered = await call(h, { method: 'POST', path: '/webhooks/razorpay' }, {
      client: freshClient(), type: 'application/json', body,
      headers: { 'x-razorpay-signature': hmacSha256Hex(body, h.config.RAZORPAY_WEBHOOK_SECRET), 'x-razorpay-event-id': `evt_stale_${row.reason}_${Date.now()}` },
    });
    expect(answered.status).toBe(200);
    expect(answered.body).toMatchObject({ setAside: row.reason, actedOn: false });
    expect(await rowCounts(h.db)).toEqual({ ...before, quarantined_webhooks: before.quarantined_webhooks! + 1 });
  });
});
