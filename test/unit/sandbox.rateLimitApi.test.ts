/** The running sandbox's rate limit (issue 22 item 3), driven through the official razorpay SDK:
 * past a class's bucket a call is answered 429 exactly as the `rate_limited` fault answers it
 * (Razorpay's documented code and description), before any effect; writes and reads have separate
 * buckets; /_sandbox is never limited; off (the default) nothing changes. The rates are low enough
 * (a token every 2 s) that the few milliseconds a burst takes cannot refill a bucket. */
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../../src/config/config';
import { callSdk, createSdk } from '../../src/gateway/sdkClient';
import { rateLimited } from '../../src/sandbox/errors';
import { sandboxOptionsFrom } from '../../src/sandbox';
import { startTestSandbox, type TestSandbox } from '../support/sandbox';

type Sdk = ReturnType<typeof createSdk>;

/** What the SDK rejected with (its `statusCode` and Razorpay's `error`), or 'ok'. */
async function outcome(call: () => Promise<unknown>): Promise<'ok' | { statusCode: number; error: unknown }> {
  try {
    await call();
    return 'ok';
  } catch (err) {
    const { statusCode, error } = err as { statusCode: number; error: unknown };
    return { statusCode, error };
  }
}

const LIMITED = { statusCode: 429, error: rateLimited().body().error };

function directTransfer(sdk: Sdk, account: string, key: string) {
  return callSdk({ 'X-Transfer-Idempotency': key }, () =>
    sdk.transfers.create({ account, amount: 1_000, currency: 'INR', notes: { transaction_id: key, order_id: 'o1' } } as never)).then((r) => {
    if (!r.ok) throw r.failure;
    return r.value;
  });
}

async function rawResponse(t: TestSandbox, path: string, init: RequestInit = {}) {
  const auth = Buffer.from(`${t.env.RAZORPAY_KEY_ID}:${t.env.RAZORPAY_KEY_SECRET}`).toString('base64');
  const res = await fetch(`${t.sandbox.baseUrl}${path}`, { ...init, headers: { authorization: `Basic ${auth}`, 'content-type': 'application/json', ...init.headers } });
  return { status: res.status, contentType: res.headers.get('content-type'), body: await res.text() };
}

describe('with a small write rate and a separate read rate', () => {
  let t: TestSandbox;
  let sdk: Sdk;
  let account: string;

  beforeAll(async () => {
    t = await startTestSandbox({ rateLimit: { writeRps: 0.5, readRps: 0.5, burst: 3 } });
    sdk = createSdk(t.config);
    account = await t.sandbox.control.createLinkedAccount();
  });
  afterAll(() => t.sandbox.close());

  test('when a burst of transfers.create passes the bucket, then the rest get the documented 429 and make no transfer; reads have their own bucket; a refused key is free to use once the bucket refills', async () => {
    const keys = ['rl-burst-1', 'rl-burst-2', 'rl-burst-3', 'rl-burst-4', 'rl-burst-5'];
    const answers = await Promise.all(keys.map((key) => outcome(() => directTransfer(sdk, account, key))));
    expect(answers.filter((a) => a === 'ok')).toHaveLength(3);
    expect(answers.filter((a) => a !== 'ok')).toEqual([LIMITED, LIMITED]);
    const made = await t.sandbox.control.transfers({ recipient: account });
    expect(made).toHaveLength(3);
    const refusedKeys = keys.filter((_, i) => answers[i] !== 'ok');
    expect(made.map((x) => (x.notes as Record<string, string>).transaction_id).sort()).toEqual(keys.filter((k) => !refusedKeys.includes(k)).sort());

    // Writes spent their bucket; reads still have all of theirs, and then run out on their own.
    const reads = [];
    for (let i = 0; i < 4; i += 1) reads.push(await outcome(() => sdk.transfers.all({ count: 1 })));
    expect(reads).toEqual(['ok', 'ok', 'ok', LIMITED]);
    expect(await outcome(() => sdk.orders.create({ amount: 50_000, currency: 'INR', receipt: 'rl-order', notes: {} }))).toEqual(LIMITED);

    // Control routes are never limited.
    expect((await t.sandbox.control.transfers()).length).toBe(3);
    const control = await fetch(`${t.sandbox.baseUrl}/_sandbox/balance`);
    expect(control.status).toBe(200);

    // Counted: every call reached the sandbox; what the limiter refused is `ratelimit:<class>`.
    expect(await t.sandbox.control.faultsFired()).toEqual({ 'ratelimit:write': 3, 'ratelimit:read': 1 });
    expect(await t.sandbox.control.callCounts()).toMatchObject({ 'transfers.create': 5, 'transfers.list': 4, 'orders.create': 1 });

    // A token every 2 s: a refused call's key was never claimed, so its retry makes the transfer.
    await sleep(2_200);
    expect(await outcome(() => directTransfer(sdk, account, refusedKeys[0]!))).toBe('ok');
    expect(await outcome(() => directTransfer(sdk, account, refusedKeys[1]!))).toEqual(LIMITED);
    expect(await t.sandbox.control.transfers({ recipient: account })).toHaveLength(4);

    // The sandbox's reset fills every bucket again.
    await t.sandbox.control.reset();
    expect(await outcome(() => sdk.orders.create({ amount: 50_000, currency: 'INR', receipt: 'rl-after-reset', notes: {} }))).toBe('ok');
  }, 30_000);
});

test('when the limiter refuses a call, then the answer is byte for byte the one the rate_limited fault gives', async () => {
  const limited = await startTestSandbox({ rateLimit: { writeRps: 0.5, readRps: 0, burst: 1 } });
  const faulted = await startTestSandbox();
  try {
    const order = JSON.stringify({ amount: 50_000, currency: 'INR', receipt: 'rl-raw', notes: {} });
    expect((await rawResponse(limited, '/v1/orders', { method: 'POST', body: order })).status).toBe(200);
    const refused = await rawResponse(limited, '/v1/orders', { method: 'POST', body: order });
    await faulted.sandbox.control.injectFault({ endpoint: 'orders.create', fault: { kind: 'rate_limited' }, calls: [1] });
    const fault = await rawResponse(faulted, '/v1/orders', { method: 'POST', body: order });
    expect(fault.status).toBe(429);
    expect(refused).toEqual(fault);
    expect(JSON.parse(refused.body)).toEqual(rateLimited().body());
  } finally {
    await Promise.all([limited.sandbox.close(), faulted.sandbox.close()]);
  }
});

test('when the limit is off (the default), then a burst of writes and reads is answered as before', async () => {
  const t = await startTestSandbox();
  try {
    const sdk = createSdk(t.config);
    const account = await t.sandbox.control.createLinkedAccount();
    const keys = Array.from({ length: 30 }, (_, i) => `rl-off-${i}`);
    const answers = await Promise.all(keys.map((key) => outcome(() => directTransfer(sdk, account, key))));
    expect(answers.every((a) => a === 'ok')).toBe(true);
    const reads = await Promise.all(keys.map(() => outcome(() => sdk.transfers.all({ count: 1 }))));
    expect(reads.every((a) => a === 'ok')).toBe(true);
    expect(await t.sandbox.control.transfers({ recipient: account })).toHaveLength(30);
    expect(Object.keys(await t.sandbox.control.faultsFired()).filter((k) => k.startsWith('ratelimit:'))).toEqual([]);
  } finally {
    await t.sandbox.close();
  }
});

test('when the limit is set at run time through /_sandbox/rate-limit, then it holds from then on; set to 0 it is off again; a bad body is refused and changes nothing', async () => {
  const t = await startTestSandbox();
  try {
    const sdk = createSdk(t.config);
    const account = await t.sandbox.control.createLinkedAccount();
    const put = (body: unknown) => fetch(`${t.sandbox.baseUrl}/_sandbox/rate-limit`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect((await Promise.all(['rt-1', 'rt-2', 'rt-3'].map((k) => outcome(() => directTransfer(sdk, account, k))))).every((a) => a === 'ok')).toBe(true);

    expect((await put({ writeRps: 0.5, readRps: 0, burst: 2 })).status).toBeLessThan(300);
    const limited = await Promise.all(['rt-4', 'rt-5', 'rt-6', 'rt-7'].map((k) => outcome(() => directTransfer(sdk, account, k))));
    expect(limited.filter((a) => a === 'ok')).toHaveLength(2);
    expect(limited.filter((a) => a !== 'ok')).toEqual([LIMITED, LIMITED]);
    expect((await Promise.all(Array.from({ length: 5 }, () => outcome(() => sdk.transfers.all({ count: 1 }))))).every((a) => a === 'ok')).toBe(true);

    expect((await put({ writeRps: -1, readRps: 0, burst: 2 })).status).toBe(400);
    expect(await outcome(() => directTransfer(sdk, account, 'rt-8'))).toEqual(LIMITED);

    expect((await put({ writeRps: 0, readRps: 0, burst: 0 })).status).toBeLessThan(300);
    expect((await Promise.all(['rt-9', 'rt-10', 'rt-11'].map((k) => outcome(() => directTransfer(sdk, account, k))))).every((a) => a === 'ok')).toBe(true);
    expect(await t.sandbox.control.transfers({ recipient: account })).toHaveLength(8);
  } finally {
    await t.sandbox.close();
  }
});

test('when SANDBOX_RATE_LIMIT_* are set, then the sandbox is configured with them; unset, the limit is off; a bad value is refused', () => {
  const base = { ...process.env, SANDBOX_RATE_LIMIT_WRITE_RPS: undefined, SANDBOX_RATE_LIMIT_READ_RPS: undefined, SANDBOX_RATE_LIMIT_BURST: undefined };
  expect(sandboxOptionsFrom(loadConfig(base)).rateLimit).toEqual({ writeRps: 0, readRps: 0, burst: 0 });
  const on = loadConfig({ ...base, SANDBOX_RATE_LIMIT_WRITE_RPS: '20', SANDBOX_RATE_LIMIT_READ_RPS: '40', SANDBOX_RATE_LIMIT_BURST: '10' });
  expect(sandboxOptionsFrom(on).rateLimit).toEqual({ writeRps: 20, readRps: 40, burst: 10 });
  expect(() => loadConfig({ ...base, SANDBOX_RATE_LIMIT_WRITE_RPS: '-1' })).toThrow(/SANDBOX_RATE_LIMIT_WRITE_RPS/);
  expect(() => loadConfig({ ...base, SANDBOX_RATE_LIMIT_BURST: 'many' })).toThrow(/SANDBOX_RATE_LIMIT_BURST/);
});
