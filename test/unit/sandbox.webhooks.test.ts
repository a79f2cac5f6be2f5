/** Sandbox webhooks: signed over the exact raw body (checked with the razorpay SDK's own
 * validateWebhookSignature), unique event ids, at-least-once delivery with retries, and the
 * webhook faults. A real HTTP receiver records what arrives. */
import http from 'node:http';
import Razorpay from 'razorpay';
import { validateWebhookSignature } from '../../src/gateway';
import type { Gateway } from '../../src/gateway/types';
import { startTestSandbox, type TestSandbox } from '../support/sandbox';
import { TestReceiver } from '../support/httpServer';

interface Received { body: string; signature: string; eventId: string; event: string }

/** A webhook endpoint whose answers the test chooses (status per arrival, or a silent hang). */
class Receiver extends TestReceiver {
  received: Received[] = [];
  arrivals = 0;
  respond: (arrival: number) => number | 'hang' = () => 200;
  protected readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const arrival = ++this.arrivals;
      const answer = this.respond(arrival);
      if (answer === 'hang') return;
      this.received.push({ body, signature: String(req.headers['x-razorpay-signature']), eventId: String(req.headers['x-razorpay-event-id']), event: JSON.parse(body).event });
      res.writeHead(answer).end();
    });
  });
  reset(): void {
    this.received = [];
    this.arrivals = 0;
    this.respond = () => 200;
  }
}

let t: TestSandbox;
let gateway: Gateway;
const receiver = new Receiver();
const secret = () => t.config.RAZORPAY_WEBHOOK_SECRET;

beforeAll(async () => {
  await receiver.start();
  t = await startTestSandbox({ webhookUrl: receiver.url, webhookRetryBaseMs: 20, webhookTimeoutMs: 300 });
  gateway = t.gateway;
});
afterAll(async () => {
  await t.sandbox.close();
  await receiver.stop();
});
beforeEach(() => receiver.reset());

async function paidOrder(): Promise<string> {
  const order = await gateway.createOrder({ amountPaise: 10_000, receipt: 'ord_webhooks', notes: {} });
  await t.sandbox.control.payOrder(order.id);
  await t.sandbox.control.drainWebhooks();
  return order.id;
}

test('when a payment is captured, then payment.authorized, payment.captured and order.paid arrive, each signed over its raw body', async () => {
  await paidOrder();
  expect(receiver.received.map((r) => r.event)).toEqual(['payment.authorized', 'payment.captured', 'order.paid']);
  for (const r of receiver.received) {
    expect(Razorpay.validateWebhookSignature(r.body, r.signature, secret())).toBe(true);
    expect(validateWebhookSignature(r.body, r.signature, secret())).toBe(true);
  }
  expect(new Set(receiver.received.map((r) => r.eventId)).size).toBe(3);
});

test('when one byte of the body changes, then the signature no longer verifies', async () => {
  await paidOrder();
  const { body, signature } = receiver.received[0]!;
  const bytes = Buffer.from(body);
  bytes[10] = bytes[10]! ^ 0x01;
  expect(Razorpay.validateWebhookSignature(bytes.toString(), signature, secret())).toBe(false);
  expect(validateWebhookSignature(bytes, signature, secret())).toBe(false);
  expect(validateWebhookSignature(body, signature, 'another_secret_1')).toBe(false);
});

test('when the endpoint answers 500 twice, then the same event (same id, same body) is retried until it is acknowledged', async () => {
  receiver.respond = (n) => (n <= 2 ? 500 : 200);
  const account = await t.sandbox.control.createLinkedAccount();
  await gateway.createDirectTransfer({ account, amountPaise: 500, idempotencyKey: 'webhook-retry-1', notes: { transaction_id: 'webhook-retry-1', order_id: 'o' } });
  await t.sandbox.control.drainWebhooks();
  expect(receiver.received.map((r) => r.event)).toEqual(['transfer.processed', 'transfer.processed', 'transfer.processed']);
  expect(new Set(receiver.received.map((r) => r.eventId)).size).toBe(1);
  expect(new Set(receiver.received.map((r) => r.body)).size).toBe(1);
  const record = (await t.sandbox.control.webhookEvents()).find((e) => e.id === receiver.received[0]!.eventId)!;
  expect(record).toMatchObject({ attempts: 3, event: 'transfer.processed' });
  expect(record.deliveredAt).not.toBeNull();
});

test('when the endpoint does not answer in time, then the delivery counts as failed and is retried', async () => {
  receiver.respond = (n) => (n === 1 ? 'hang' : 200);
  const account = await t.sandbox.control.createLinkedAccount();
  await gateway.createDirectTransfer({ account, amountPaise: 500, idempotencyKey: 'webhook-hang-1', notes: { transaction_id: 'webhook-hang-1', order_id: 'o' } });
  await t.sandbox.control.drainWebhooks();
  expect(receiver.arrivals).toBe(2);
  expect(receiver.received).toHaveLength(1);
});

test('when a duplicate fault is injected, then the event arrives twice with one event id', async () => {
  await t.sandbox.control.injectWebhookFault('duplicate', { events: ['order.paid'] });
  await paidOrder();
  const paid = receiver.received.filter((r) => r.event === 'order.paid');
  expect(paid).toHaveLength(2);
  expect(paid[0]!.eventId).toBe(paid[1]!.eventId);
});

test('when an out-of-order fault is injected, then the held event arrives after the one that followed it', async () => {
  await t.sandbox.control.injectWebhookFault('out_of_order', { events: ['payment.captured'] });
  await paidOrder();
  expect(receiver.received.map((r) => r.event)).toEqual(['payment.authorized', 'order.paid', 'payment.captured']);
});

test('when the first try is dropped, then the event is delivered once, on the second attempt', async () => {
  await t.sandbox.control.injectWebhookFault('drop_first_try', { events: ['payment.authorized'] });
  await paidOrder();
  const authorized = receiver.received.filter((r) => r.event === 'payment.authorized');
  expect(authorized).toHaveLength(1);
  const record = (await t.sandbox.control.webhookEvents()).find((e) => e.id === authorized[0]!.eventId)!;
  expect(record.attempts).toBe(2);
});

test('when a lose fault names a body, then only that event is recorded and never delivered; the same event of another order arrives', async () => {
  const order = await gateway.createOrder({ amountPaise: 10_000, receipt: 'ord_lose', notes: {} });
  await t.sandbox.control.injectWebhookFault('lose', { events: ['payment.captured'], bodyIncludes: order.id });
  const other = await paidOrder();
  await t.sandbox.control.payOrder(order.id);
  await t.sandbox.control.drainWebhooks();
  const captured = receiver.received.filter((r) => r.event === 'payment.captured');
  expect(captured.map((r) => JSON.parse(r.body).payload.payment.entity.order_id)).toEqual([other]);
  const lost = (await t.sandbox.control.webhookEvents()).find((e) => e.event === 'payment.captured' && e.body.includes(order.id))!;
  expect(lost).toMatchObject({ deliveredAt: null, attempts: 0 });
  expect((await t.sandbox.control.faultsFired())['webhook:lose']).toBe(1);
});

test('when an API fault names a path, then only calls on that path count and take it', async () => {
  const a = await gateway.createOrder({ amountPaise: 10_000, receipt: 'ord_path_a', notes: {} });
  const b = await gateway.createOrder({ amountPaise: 10_000, receipt: 'ord_path_b', notes: {} });
  await t.sandbox.control.injectFault({ endpoint: 'orders.fetch', fault: { kind: 'server_error_before' }, calls: [1], pathIncludes: b.id });
  await expect(gateway.fetchOrder(a.id)).resolves.toMatchObject({ id: a.id });
  await expect(gateway.fetchOrder(b.id)).rejects.toBeDefined();
  await expect(gateway.fetchOrder(b.id)).resolves.toMatchObject({ id: b.id });
  await t.sandbox.control.clearFaults();
});

test('when delivery is off, then events are recorded but not delivered, and turning it on delivers them', async () => {
  await t.sandbox.control.setWebhookDelivery(false);
  const orderId = await paidOrder();
  expect(receiver.received).toEqual([]);
  const events = await t.sandbox.control.webhookEvents();
  const mine = events.filter((e) => e.body.includes(orderId));
  expect(mine.map((e) => [e.event, e.deliveredAt])).toEqual([['payment.authorized', null], ['payment.captured', null], ['order.paid', null]]);
  await t.sandbox.control.setWebhookDelivery(true);
  await t.sandbox.control.drainWebhooks();
  expect(receiver.received.map((r) => r.event)).toEqual(['payment.authorized', 'payment.captured', 'order.paid']);
});
