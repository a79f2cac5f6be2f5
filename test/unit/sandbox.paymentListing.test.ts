/** GET /v1/payments as the sandbox serves it (issue 37) and our gateway reads it: payments created at
 * or after `from` (and up to `to`), newest first, `count` ≤ 100 from `skip`, through the official SDK,
 * counted as `payments.list` and refused past the read limit like any read. */
import { createGateway } from '../../src/gateway';
import { createSdk } from '../../src/gateway/sdkClient';
import { GatewayCallError, type Gateway } from '../../src/gateway/types';
import { startTestSandbox, type TestSandbox } from '../support/sandbox';

describe('the payment listing', () => {
  let t: TestSandbox;
  let gateway: Gateway;
  const made: Array<{ id: string; at: number }> = [];
  const T0 = Date.parse('2026-12-07T06:00:00Z');

  beforeAll(async () => {
    t = await startTestSandbox();
    gateway = createGateway(t.config);
    // 130 payments, one a second from T0, so `from`, `to` and the pages have edges to find.
    for (let i = 0; i < 130; i++) {
      await t.sandbox.control.setClock(T0 + i * 1000);
      const order = await gateway.createOrder({ amountPaise: 1_000 + i, receipt: `list-${i}`, notes: {} });
      made.push({ id: (await t.sandbox.control.payOrder(order.id)).id, at: T0 / 1000 + i });
    }
  });
  afterAll(async () => {
    await t?.sandbox.close();
  });

  test('when the listing is read from a time, then it gives the payments made since, newest first, 100 a page, and the next page from skip', async () => {
    const from = T0 / 1000 + 20; // the 110 payments made at or after it
    const first = await gateway.paymentsPage({ fromSec: from, skip: 0 });
    expect(first.size).toBe(100);
    expect(first.items.map((p) => p.id)).toEqual(made.slice(30).reverse().map((m) => m.id));
    const second = await gateway.paymentsPage({ fromSec: from, skip: 100 });
    expect(second.items.map((p) => p.id)).toEqual(made.slice(20, 30).reverse().map((m) => m.id));
    expect(second.items.every((p) => p.status === 'captured' && p.created_at >= from)).toBe(true);
    expect((await t.sandbox.control.callCounts())['payments.list']).toBeGreaterThanOrEqual(2);
  });

  test('when `to` and `count` are given through the SDK, then only that window is listed, and a count over 100 is refused with the documented error', async () => {
    const sdk = createSdk(t.config);
    const window = await sdk.payments.all({ from: T0 / 1000 + 5, to: T0 / 1000 + 9, count: 3 }) as { count: number; items: Array<{ id: string }> };
    expect(window.items.map((p) => p.id)).toEqual([made[9]!.id, made[8]!.id, made[7]!.id]);
    await expect(sdk.payments.all({ count: 101 })).rejects.toMatchObject({ statusCode: 400, error: { description: 'The count may not be greater than 100.' } });
  });

  test('when the read limit is spent, then the listing is refused 429 like any read and our gateway says so', async () => {
    await t.sandbox.control.setRateLimit({ writeRps: 100, readRps: 0.5, burst: 1 });
    try {
      await gateway.paymentsPage({ fromSec: T0 / 1000, skip: 0 });
      await expect(gateway.paymentsPage({ fromSec: T0 / 1000, skip: 0 })).rejects.toBeInstanceOf(GatewayCallError);
    } finally {
      await t.sandbox.control.setRateLimit({ writeRps: 0, readRps: 0, burst: 0 });
    }
  });
});
