/** Throttling of credentials and input limits behind the public edge (issue 21, items 6 and 12): a
 * key id presented with wrong secrets is refused before any lookup once over its failure limit
 * (from the API and the console sign-in alike); a client presenting many refused keys has its next
 * refused key answered 429 while its valid keys are still served (issue 41); a busy key by its own
 * limit; a malformed cursor is a 400; the file routes keep their larger body limit while every other
 * route has the small one. Clients are told apart by X-Forwarded-For from
 * the harness's trusted loopback proxy. */
import { csrfToken } from '../../src/console/session';
import { mintKey, type AuthHeader } from '../support/apiKeys';
import { startMoneyInHarness, type MoneyInHarness } from './moneyinHarness';

const LIMITS = {
  TRUST_PROXY: ['127.0.0.1'], RATE_LIMIT_WINDOW_MS: 60_000, RATE_LIMIT_CLIENT_MAX: 1_000, RATE_LIMIT_SIGN_IN_MAX: 100,
  RATE_LIMIT_AUTH_FAILURES_MAX: 3, RATE_LIMIT_KEY_MAX: 8, API_BODY_LIMIT_BYTES: 64 * 1024, API_FILE_BODY_LIMIT_BYTES: 2 * 1024 * 1024,
};

let clients = 0;
const freshClient = () => `10.22.${Math.floor(++clients / 250)}.${clients % 250 + 1}`;
/** The same key id with another secret (well-formed: it costs a lookup today). */
const wrongSecret = (key: AuthHeader, n: number): AuthHeader => ({ authorization: `${key.authorization.slice(0, -4)}${String(n).padStart(4, 'Z')}` });

describe('throttling credentials, cursors and body limits', () => {
  let h: MoneyInHarness;
  beforeAll(async () => { h = await startMoneyInHarness({ config: LIMITS }); });
  afterAll(async () => { await h?.close(); });

  const get = async (path: string, client: string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${h.baseUrl}${path}`, { headers: { 'x-forwarded-for': client, ...headers } });
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json().catch(() => null)) as { error?: { code: string; details?: { reason?: string } } } | null };
  };
  const signIn = async (key: string, client: string) => {
    const res = await fetch(`${h.baseUrl}/console/sign-in`, { method: 'POST', redirect: 'manual', headers: { 'x-forwarded-for': client, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ key }).toString() });
    return { status: res.status, body: (await res.json().catch(() => null)) as { error?: { code: string; details?: { reason?: string } } } | null };
  };
  const refusal = (reason: string) => ({ status: 429, body: { error: expect.objectContaining({ code: 'rate_limited', details: { reason, retryAfterSeconds: expect.any(Number) } }) } });
  const throttled = async (reason: string): Promise<number> => {
    const text = await (await fetch(`${h.baseUrl}/metrics`, { headers: { 'x-forwarded-for': freshClient() } })).text();
    return Number(new RegExp(`^payouts_api_throttled_total\\{reason="${reason}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
  };

  test('when a key id is presented with wrong secrets from many clients past its failure limit, then it is refused before any lookup (its right secret too), the client that uses it keeps working, and the refusals are counted', async () => {
    const key = await mintKey(h.db, ['ops'], 'ops-under-attack');
    const holder = freshClient();
    expect((await get('/ops/payouts/counters', holder, key)).status).toBe(200);
    const countedBefore = await throttled('auth_failures_key');

    for (let n = 0; n < LIMITS.RATE_LIMIT_AUTH_FAILURES_MAX; n++) {
      expect((await get('/ops/payouts/counters', freshClient(), wrongSecret(key, n))).status).toBe(401);
    }
    const refused = await get('/ops/payouts/counters', freshClient(), wrongSecret(key, 99));
    expect({ status: refused.status, body: refused.body }).toEqual(refusal('auth_failures_key'));
    expect(Number(refused.retryAfter)).toBeGreaterThan(0);
    // A lookup would have let the right secret in: it is refused before one.
    const rightSecretElsewhere = await get('/ops/payouts/counters', freshClient(), key);
    expect({ status: rightSecretElsewhere.status, body: rightSecretElsewhere.body }).toEqual(refusal('auth_failures_key'));
    // Whoever knows the key id cannot lock out the client that holds the key.
    expect((await get('/ops/payouts/counters', holder, key)).status).toBe(200);
    expect(await throttled('auth_failures_key')).toBe(countedBefore + 2);
  });

  const bogusKey = (n: number): AuthHeader => ({ authorization: `Bearer pk_key_${String(n).padStart(12, '0')}_${'B'.repeat(43)}` });

  test('when one client presents refused keys past the failure limit, then its next refused key is 429 (on the API and at the console sign-in), while a valid key from it is still looked up and served; another client is not held back', async () => {
    const client = freshClient();
    for (let n = 0; n < LIMITS.RATE_LIMIT_AUTH_FAILURES_MAX; n++) {
      expect((await get('/ops/payouts/counters', client, bogusKey(n))).status).toBe(401);
    }
    const refused = await get('/ops/payouts/counters', client, bogusKey(99));
    expect({ status: refused.status, body: refused.body }).toEqual(refusal('auth_failures_client'));
    expect(await signIn(bogusKey(98).authorization.slice(7), client)).toEqual(refusal('auth_failures_client'));
    expect((await get('/ops/payouts/counters', client, h.keys.ops)).status).toBe(200);
    expect((await signIn(h.keys.finance.authorization.slice(7), client)).status).toBe(303);
    expect((await get('/ops/payouts/counters', freshClient(), bogusKey(97))).status).toBe(401);
    // Without a key it costs no lookup and is not held back: the public routes still answer.
    expect((await get('/health', client)).status).toBe(200);
  });

  test('when 25 bogus keys come from one address (one load balancer for everyone), then every real role\'s key from that address is served, even one never used before, and a bogus key is still throttled', async () => {
    const shared = freshClient();
    const countedBefore = await throttled('auth_failures_client');
    const answers = [];
    for (let n = 0; n < 25; n++) answers.push((await get('/ops/payouts/counters', shared, bogusKey(1_000 + n))).status);
    expect(answers).toEqual([...Array<number>(LIMITS.RATE_LIMIT_AUTH_FAILURES_MAX).fill(401), ...Array<number>(25 - LIMITS.RATE_LIMIT_AUTH_FAILURES_MAX).fill(429)]);

    const vendor = await mintKey(h.db, ['vendor:ven_shared_lb'], 'vendor-behind-lb');
    const fresh = { ordering: await mintKey(h.db, ['ordering'], 'ordering-behind-lb'), ops: await mintKey(h.db, ['ops'], 'ops-behind-lb'), admin: await mintKey(h.db, ['admin'], 'admin-behind-lb'), finance: await mintKey(h.db, ['finance'], 'finance-behind-lb') };
    const served = async (path: string, key: AuthHeader) => {
      const answered = await get(path, shared, key);
      return { path, status: answered.status, code: answered.body?.error?.code ?? null };
    };
    // Each answered by its route's handler (a 404 is the handler's: the key was looked up and let in).
    const wallet = { status: 404, code: 'wallet_not_found' };
    const counters = { status: 200, code: null };
    const noVendor = { status: 404, code: 'vendor_not_found' };
    const calls: Array<[string, AuthHeader, { status: number; code: string | null }]> = [
      ['/v1/wallets/employer/emp_behind_lb', fresh.ordering, wallet], ['/v1/wallets/employer/emp_behind_lb', h.keys.ordering, wallet],
      ['/ops/payouts/counters', fresh.ops, counters], ['/ops/payouts/counters', h.keys.ops, counters],
      ['/v1/admin/vendors/ven_shared_lb/bank-details', fresh.admin, noVendor], ['/v1/admin/vendors/ven_shared_lb/bank-details', h.keys.admin, noVendor],
      ['/finance/recon/exceptions', fresh.finance, counters], ['/finance/recon/exceptions', h.keys.finance, counters],
      ['/v1/vendors/ven_shared_lb/statement?from=2026-08-01&to=2026-08-31', vendor, noVendor],
    ];
    for (const [path, key, expected] of calls) expect(await served(path, key)).toEqual({ path, ...expected });
    const stillBogus = await get('/ops/payouts/counters', shared, bogusKey(2_000));
    expect({ status: stillBogus.status, body: stillBogus.body }).toEqual(refusal('auth_failures_client'));
    expect(await throttled('auth_failures_client')).toBe(countedBefore + 25 - LIMITS.RATE_LIMIT_AUTH_FAILURES_MAX + 1);
  });

  test('when the API trusts its proxy, then X-Forwarded-For is not counted as untrusted (the series is served, at 0)', async () => {
    const text = await (await fetch(`${h.baseUrl}/metrics`, { headers: { 'x-forwarded-for': freshClient() } })).text();
    expect(text).toMatch(/^payouts_api_untrusted_forwarded_total 0$/m);
  });

  test('when sign-in is tried with a key id and wrong secrets, then the failures count against that key id as the API\'s do', async () => {
    const key = await mintKey(h.db, ['finance'], 'finance-guessed-at-sign-in');
    for (let n = 0; n < LIMITS.RATE_LIMIT_AUTH_FAILURES_MAX; n++) {
      expect((await signIn(wrongSecret(key, n).authorization.slice(7), freshClient())).status).toBe(401);
    }
    const refused = await get('/finance/recon/exceptions', freshClient(), key);
    expect({ status: refused.status, body: refused.body }).toEqual(refusal('auth_failures_key'));
    expect(await signIn(key.authorization.slice(7), freshClient())).toEqual(refusal('auth_failures_key'));
  });

  test('when one key makes more requests than its limit, from any clients, then the next is refused 429 for the key', async () => {
    const key = await mintKey(h.db, ['ops'], 'ops-busy');
    for (let n = 0; n < LIMITS.RATE_LIMIT_KEY_MAX; n++) expect((await get('/ops/payouts/counters', freshClient(), key)).status).toBe(200);
    const refused = await get('/ops/payouts/counters', freshClient(), key);
    expect({ status: refused.status, body: refused.body }).toEqual(refusal('key'));
    expect((await get('/ops/payouts/counters', freshClient(), h.keys.ops)).status).toBe(200);
  });

  test.each([
    ['a month 13, day 45 and hour 99', '/ops/payouts?after=2026-13-45T99:99:99Z%7C0b7e6c8e-3f0a-4d5e-9c1b-2a3b4c5d6e7f'],
    ['a time of colons', '/ops/payouts?after=2026-08-01T::::Z%7C0b7e6c8e-3f0a-4d5e-9c1b-2a3b4c5d6e7f'],
    ['an id of dashes', `/ops/payouts?after=2026-08-01T10:00:00Z%7C${'-'.repeat(36)}`],
    ['a recon exception cursor that is not a number', '/finance/recon/exceptions?after=abc'],
    ['a recon exception cursor past any id', '/finance/recon/exceptions?after=1e400'],
  ])('when a listing is asked for the page after %s, then 400 invalid_request in the envelope', async (_what, path) => {
    const key = path.startsWith('/ops') ? h.keys.ops : h.keys.finance;
    const answered = await get(path, freshClient(), key);
    expect([answered.status, answered.body?.error?.code]).toEqual([400, 'invalid_request']);
  });

  test('when a cursor the queue handed out is passed back, then the next page follows it', async () => {
    const answered = await get(`/ops/payouts?after=${encodeURIComponent('2026-08-01T10:00:00.123456Z|0b7e6c8e-3f0a-4d5e-9c1b-2a3b4c5d6e7f')}`, freshClient(), h.keys.ops);
    expect(answered.status).toBe(200);
  });

  test('when a JSON body is over the small limit, then 413 before any handler; a bank statement file of a few hundred kB is read (the file routes keep theirs)', async () => {
    const post = async (path: string, type: string, body: string, key: AuthHeader) => {
      const res = await fetch(`${h.baseUrl}${path}`, { method: 'POST', headers: { 'x-forwarded-for': freshClient(), 'content-type': type, ...key }, body });
      return { status: res.status, code: ((await res.json()) as { error?: { code: string } }).error?.code };
    };
    const order = JSON.stringify({ clientReference: 'big', note: 'x'.repeat(LIMITS.API_BODY_LIMIT_BYTES) });
    expect(await post('/v1/orders', 'application/json', order, h.keys.ordering)).toEqual({ status: 413, code: 'body_too_large' });
    const lines = Array.from({ length: 8_000 }, (_, i) => `UTR${String(i).padStart(9, '0')},not-an-amount,2026-08-01,refused line ${i}`);
    const csv = ['utr,amount,value_date,narration', ...lines].join('\n');
    expect(csv.length).toBeGreaterThan(4 * LIMITS.API_BODY_LIMIT_BYTES);
    // Read and refused line by line (nothing imported), not refused for its size.
    expect(await post('/finance/bank-statements', 'text/csv', csv, h.keys.finance)).toEqual({ status: 400, code: 'invalid_bank_statement' });
    expect(await post('/finance/bank-statements', 'text/csv', csv.padEnd(LIMITS.API_FILE_BODY_LIMIT_BYTES + 1, '\n'), h.keys.finance)).toEqual({ status: 413, code: 'body_too_large' });
  });

  test('when a console form is over the small limit, then 413; the bank statement page reads a file of a few hundred kB', async () => {
    const signedIn = await fetch(`${h.baseUrl}/console/sign-in`, {
      method: 'POST', redirect: 'manual', headers: { 'x-forwarded-for': freshClient(), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ key: h.keys.finance.authorization.slice(7) }).toString(),
    });
    expect(signedIn.status).toBe(303);
    const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
    const _csrf = csrfToken({ token: cookie.split('=')[1]! });
    const post = async (path: string, form: Record<string, string>) => {
      const res = await fetch(`${h.baseUrl}${path}`, { method: 'POST', redirect: 'manual', headers: { 'x-forwarded-for': freshClient(), cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ ...form, _csrf }).toString() });
      return { status: res.status, code: ((await res.json().catch(() => ({}))) as { error?: { code: string } }).error?.code };
    };
    expect(await post('/console/recon/runs', { from: '2026-08-01', to: '2026-08-02', note: 'x'.repeat(LIMITS.API_BODY_LIMIT_BYTES) })).toEqual({ status: 413, code: 'body_too_large' });
    const csv = ['utr,amount,value_date,narration', ...Array.from({ length: 8_000 }, (_, i) => `UTR${String(i).padStart(9, '0')},not-an-amount,2026-08-01,refused line ${i}`)].join('\n');
    const statement = await post('/console/bank-statements', { csv });
    expect(statement.status).not.toBe(413);
    expect(statement.status).toBeLessThan(500);
  });
});
