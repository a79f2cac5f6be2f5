/** The API's own Razorpay budget (issue 22 item 1): order creates at checkout and for a top-up pass a
 * token bucket per API process (API_RAZORPAY_RPS, API_RAZORPAY_BURST). Here one token comes back
 * every 20 s and three fit at once, so the test spends them deliberately: a refused request answers
 * 503 with Retry-After in the error envelope and records nothing; a retry whose Razorpay order
 * already exists spends no token; a cash order needs none. Real HTTP, PostgreSQL and the sandbox. */
import { http, seedPair, startMoneyInHarness, topUp, uniqueRef, type MoneyInHarness } from './moneyinHarness';

const EMPLOYER = 'emp_budget';
const VENDOR = 'ven_budget';

describe('money in: the API process keeps to its Razorpay budget', () => {
  let h: MoneyInHarness;

  beforeAll(async () => {
    h = await startMoneyInHarness({ config: { API_RAZORPAY_RPS: 0.05, API_RAZORPAY_BURST: 3 } });
    await seedPair(h, { employerId: EMPLOYER, vendorId: VENDOR, commissionBps: 1_900 });
    await topUp(h, 'employer', EMPLOYER, 1_000_000); // spends the first of the three tokens
  });

  afterAll(async () => {
    await h?.close();
  });

  const order = (paymentMethod = 'online') => ({
    clientReference: uniqueRef('ord'), employerId: EMPLOYER, vendorId: VENDOR, employeeId: 'emp-1',
    totalPaise: 10_000, subsidyPaise: 9_900, customerSharePaise: 100, paymentMethod,
  });
  const post = (path: string, body: unknown) => fetch(`${h.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...h.keys.ordering }, body: JSON.stringify(body) });
  const ordersWithReference = async (ref: string) => Number((await h.db.query('SELECT count(*) FROM orders WHERE client_reference = $1', [ref])).rows[0].count);

  test('when the budget is spent, then an online order is refused with 503 and Retry-After and nothing is recorded; a retry of a placed order and a cash order still go through', async () => {
    const first = order();
    expect((await http(h, 'POST', '/v1/orders', first)).status).toBe(201);
    // The retry finds its Razorpay order recorded: no call, so its token goes back.
    const retried = await http(h, 'POST', '/v1/orders', first);
    expect(retried.status).toBe(200);
    expect((await http(h, 'POST', '/v1/orders', order())).status).toBe(201); // the last token

    const refused = order();
    const answer = await post('/v1/orders', refused);
    expect(answer.status).toBe(503);
    const retryAfter = Number(answer.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(20);
    const body = await answer.json();
    expect(body.error).toMatchObject({ code: 'provider_budget_exhausted', details: { retryAfterSeconds: retryAfter } });
    expect(body.error.message).toContain('nothing was recorded');
    expect(await ordersWithReference(refused.clientReference)).toBe(0);

    const cash = await http(h, 'POST', '/v1/orders', order('cash'));
    expect(cash.status).toBe(201);

    const metrics = await (await fetch(`${h.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/payouts_api_provider_budget_refused_total\{call="order"\} 1\b/);
  });

  test('when the budget is spent, then a wallet top-up is refused the same way and no top-up row is written', async () => {
    const before = Number((await h.db.query('SELECT count(*) FROM wallet_topups').then((r) => r.rows[0].count)));
    const answer = await post(`/v1/wallets/employer/${EMPLOYER}/top-ups`, { amountPaise: 50_000 });
    expect(answer.status).toBe(503);
    expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await answer.json()).error.code).toBe('provider_budget_exhausted');
    expect(Number((await h.db.query('SELECT count(*) FROM wallet_topups').then((r) => r.rows[0].count)))).toBe(before);
  });
});
