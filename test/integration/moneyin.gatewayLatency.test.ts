/** A slow gateway must not starve the API: no row lock is held while Razorpay creates an order,
 * concurrent retries of one order agree on one Razorpay order, and a pool that is exhausted fails a
 * request after the connect timeout instead of queueing it for ever. */
import { createPool } from '../../src/db/pool';
import { http, startHarnessWithPair, uniqueRef, type MoneyInHarness } from './moneyinHarness';

const EMPLOYER = 'emp_slow';
const VENDOR = 'ven_slow';

describe('money in: a slow gateway', () => {
  let h: MoneyInHarness;

  beforeAll(async () => {
    h = await startHarnessWithPair({ employerId: EMPLOYER, vendorId: VENDOR });
  });

  afterAll(async () => {
    await h?.close();
  });

  const order = (clientReference: string) => ({ clientReference, employerId: EMPLOYER, vendorId: VENDOR, employeeId: 'e1', totalPaise: 10_000, subsidyPaise: 9_900, customerSharePaise: 100, paymentMethod: 'online' });

  test('when Razorpay takes 1.5 s to create the order, then the order row is not locked meanwhile, and two concurrent retries answer with one Razorpay order', async () => {
    await h.sandbox.control.injectFault({ endpoint: 'orders.create', fault: { kind: 'latency', ms: 1_500 }, calls: [1, 2] });
    const ref = uniqueRef('slow');
    const first = http(h, 'POST', '/v1/orders', order(ref));
    const second = http(h, 'POST', '/v1/orders', order(ref));
    // While both requests wait on the gateway, another transaction can lock the row at once.
    const row = await (async () => {
      for (let i = 0; i < 40; i++) {
        const found = await h.db.query('SELECT id FROM orders WHERE client_reference = $1', [ref]);
        if (found.rows[0]) return found.rows[0].id as string;
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error('order row never appeared');
    })();
    const tx = await h.db.connect();
    try {
      await tx.query('BEGIN');
      await tx.query('SET LOCAL lock_timeout = 100');
      const locked = await tx.query('SELECT id FROM orders WHERE id = $1 FOR UPDATE', [row]);
      expect(locked.rows).toHaveLength(1);
      await tx.query('ROLLBACK');
    } finally {
      tx.release();
    }
    const [a, b] = await Promise.all([first, second]);
    expect([a.status, b.status].sort()).toEqual([200, 201]);
    expect(a.body.order.gatewayOrderId).toBe(b.body.order.gatewayOrderId);
    expect((await h.db.query('SELECT gateway_order_id FROM orders WHERE id = $1', [row])).rows[0].gateway_order_id).toBe(a.body.order.gatewayOrderId);
    await h.sandbox.control.clearFaults();
  });

  test('when every pooled connection is taken, then a query fails after the connect timeout instead of waiting for ever', async () => {
    const url = process.env.DATABASE_URL!;
    const pool = createPool(url, { max: 1, connectTimeoutMs: 300 });
    const held = await pool.connect();
    try {
      const started = Date.now();
      await expect(pool.query('SELECT 1')).rejects.toThrow(/timeout/i);
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      held.release();
      await pool.end();
    }
  });
});
