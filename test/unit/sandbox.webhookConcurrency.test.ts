/** Sandbox webhooks are delivered concurrently, like Razorpay's: up to `webhookConcurrency` in flight
 * at once to a slow receiver, never more; events about the same order still go one at a time in
 * emission order (and the out_of_order fault still reorders them); drainWebhooks waits for every
 * delivery in flight. A real HTTP receiver that takes its time measures the overlap. */
import http from 'node:http';
import { orderingKey } from '../../src/sandbox/webhooks';
import { startTestSandbox, type TestSandbox } from '../support/sandbox';
import { TestReceiver } from '../support/httpServer';

/** Answers every delivery 200 after `holdMs`, counting how many requests it holds at once. */
class SlowReceiver extends TestReceiver {
  events: string[] = [];
  inFlight = 0;
  maxInFlight = 0;
  /** Most requests held at once per order id (from the payload). */
  maxPerOrder = new Map<string, number>();
  private perOrder = new Map<string, number>();
  holdMs = 150;
  protected readonly server = http.createServer((req, res) => {
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const orderId: string | undefined = body.payload.order?.entity.id ?? body.payload.payment?.entity.order_id;
      if (orderId) {
        const now = (this.perOrder.get(orderId) ?? 0) + 1;
        this.perOrder.set(orderId, now);
        this.maxPerOrder.set(orderId, Math.max(this.maxPerOrder.get(orderId) ?? 0, now));
      }
      this.events.push(body.event);
      setTimeout(() => {
        this.inFlight -= 1;
        if (orderId) this.perOrder.set(orderId, this.perOrder.get(orderId)! - 1);
        res.writeHead(200).end();
      }, this.holdMs);
    });
  });
  reset(): void {
    this.events = [];
    this.inFlight = 0;
    this.maxInFlight = 0;
    this.maxPerOrder.clear();
    this.perOrder.clear();
  }
}

const receiver = new SlowReceiver();
const started: TestSandbox[] = [];

async function sandboxWith(webhookConcurrency?: number): Promise<TestSandbox> {
  const t = await startTestSandbox({ webhookUrl: receiver.url, webhookRetryBaseMs: 20, webhookTimeoutMs: 5000, ...(webhookConcurrency === undefined ? {} : { webhookConcurrency }) });
  started.push(t);
  return t;
}

/** N transfers to N linked accounts: N transfer.processed events about N different entities. */
async function transfers(t: TestSandbox, n: number, tag: string): Promise<void> {
  for (let i = 0; i < n; i++) {
    const account = await t.sandbox.control.createLinkedAccount();
    await t.gateway.createDirectTransfer({ account, amountPaise: 500, idempotencyKey: `${tag}-${i}`, notes: { transaction_id: `${tag}-${i}`, order_id: 'o' } });
  }
}

beforeAll(() => receiver.start());
afterAll(async () => {
  for (const t of started) await t.sandbox.close();
  await receiver.stop();
});
beforeEach(() => receiver.reset());

test('when 12 events go to a slow receiver with webhookConcurrency 3, then deliveries overlap, never more than 3 at once, and drain waits for all', async () => {
  const t = await sandboxWith(3);
  await t.sandbox.control.setWebhookDelivery(false);
  await transfers(t, 12, 'conc-3');
  const startedAt = Date.now();
  await t.sandbox.control.setWebhookDelivery(true);
  await t.sandbox.control.drainWebhooks();
  const took = Date.now() - startedAt;
  expect(receiver.events.filter((e) => e === 'transfer.processed')).toHaveLength(12);
  expect(receiver.inFlight).toBe(0);
  expect(receiver.maxInFlight).toBeGreaterThan(1);
  expect(receiver.maxInFlight).toBeLessThanOrEqual(3);
  // One at a time would take 12 × 150 ms; three at a time about 4 × 150 ms.
  expect(took).toBeLessThan(12 * receiver.holdMs);
  const events = await t.sandbox.control.webhookEvents();
  expect(events.every((e) => e.deliveredAt !== null && e.attempts === 1)).toBe(true);
});

test('when webhookConcurrency is not set, then up to 8 deliveries are in flight at once', async () => {
  const t = await sandboxWith();
  await t.sandbox.control.setWebhookDelivery(false);
  await transfers(t, 12, 'conc-default');
  await t.sandbox.control.setWebhookDelivery(true);
  await t.sandbox.control.drainWebhooks();
  expect(receiver.events).toHaveLength(12);
  expect(receiver.maxInFlight).toBeGreaterThan(1);
  expect(receiver.maxInFlight).toBeLessThanOrEqual(8);
});

test('when webhookConcurrency is 1, then deliveries go one at a time', async () => {
  const t = await sandboxWith(1);
  receiver.holdMs = 30;
  try {
    await transfers(t, 4, 'conc-1');
    await t.sandbox.control.drainWebhooks();
    expect(receiver.events).toHaveLength(4);
    expect(receiver.maxInFlight).toBe(1);
  } finally {
    receiver.holdMs = 150;
  }
});

test('when several orders are paid at once, then their events overlap across orders but each order\'s events arrive one at a time, in order', async () => {
  const t = await sandboxWith(8);
  await t.sandbox.control.setWebhookDelivery(false);
  const orders: string[] = [];
  for (let i = 0; i < 4; i++) {
    const order = await t.gateway.createOrder({ amountPaise: 10_000 + i, receipt: `ord_conc_${i}`, notes: {} });
    await t.sandbox.control.payOrder(order.id);
    orders.push(order.id);
  }
  await t.sandbox.control.setWebhookDelivery(true);
  await t.sandbox.control.drainWebhooks();
  expect(receiver.events).toHaveLength(12);
  expect(receiver.maxInFlight).toBeGreaterThan(1);
  for (const id of orders) expect(receiver.maxPerOrder.get(id)).toBe(1);
});

test('when an out-of-order fault is injected, then the held event still arrives after the one that followed it', async () => {
  const t = await sandboxWith(8);
  receiver.holdMs = 20;
  try {
    await t.sandbox.control.injectWebhookFault('out_of_order', { events: ['payment.captured'] });
    const order = await t.gateway.createOrder({ amountPaise: 10_000, receipt: 'ord_conc_ooo', notes: {} });
    await t.sandbox.control.payOrder(order.id);
    await t.sandbox.control.drainWebhooks();
    expect(receiver.events).toEqual(['payment.authorized', 'order.paid', 'payment.captured']);
  } finally {
    receiver.holdMs = 150;
  }
});

test('the ordering key is the order, else the payment, else the entity itself', () => {
  expect(orderingKey({ payment: { id: 'pay_1', order_id: 'order_1' } }, 'evt')).toBe('order:order_1');
  expect(orderingKey({ payment: { id: 'pay_1', order_id: 'order_1' }, order: { id: 'order_1' } }, 'evt')).toBe('order:order_1');
  expect(orderingKey({ refund: { id: 'rfnd_1', payment_id: 'pay_2' } }, 'evt')).toBe('payment:pay_2');
  expect(orderingKey({ payment: { id: 'pay_3', order_id: null } }, 'evt')).toBe('payment:pay_3');
  expect(orderingKey({ transfer: { id: 'trf_1' } }, 'evt')).toBe('transfer:trf_1');
  expect(orderingKey({ settlement: { id: 'setl_1' } }, 'evt')).toBe('settlement:setl_1');
  expect(orderingKey({}, 'evt_9')).toBe('event:evt_9');
});
