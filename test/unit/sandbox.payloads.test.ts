/** Every entity, error and webhook payload the sandbox produces has every field the documented
 * examples have (copied with their sources from shared/razorpay-examples into test/fixtures): key sets compared
 * recursively through nested objects. */
import fs from 'node:fs';
import path from 'node:path';
import { createSdk } from '../../src/gateway/sdkClient';
import { startTestSandbox, type TestSandbox } from '../support/sandbox';

const EXAMPLES = process.env.RAZORPAY_EXAMPLES_DIR ?? path.resolve(__dirname, '../fixtures/razorpay-examples');
const example = (name: string): Record<string, unknown> => JSON.parse(fs.readFileSync(path.join(EXAMPLES, name), 'utf8'));

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Paths of keys in `documented` that `actual` lacks; `except` lists documented keys we leave out on purpose. */
function missingKeys(documented: unknown, actual: unknown, except: string[] = [], at = ''): string[] {
  if (!isObject(documented)) return [];
  if (!isObject(actual)) return [`${at || '(root)'} is not an object`];
  return Object.keys(documented).flatMap((k) => {
    const p = at ? `${at}.${k}` : k;
    if (except.includes(p)) return [];
    if (!(k in actual)) return [p];
    // Notes hold the merchant's own keys, not the schema's.
    if (k === 'notes') return [];
    return missingKeys(documented[k], actual[k], except, p);
  });
}

let t: TestSandbox;
let sdk: ReturnType<typeof createSdk>;
let events: Array<{ event: string; body: string }>;
const eventBody = (name: string): Record<string, unknown> => {
  const found = events.find((e) => e.event === name);
  if (!found) throw new Error(`the sandbox produced no ${name}`);
  return JSON.parse(found.body);
};
const raw: Record<string, unknown> = {};

beforeAll(async () => {
  t = await startTestSandbox();
  sdk = createSdk(t.config);
  const { control } = t.sandbox;
  const account = await control.createLinkedAccount();
  const order = await sdk.orders.create({ amount: 50_000, currency: 'INR', receipt: 'Receipt #20', notes: { key1: 'value1' } });
  raw.order = await sdk.orders.fetch(order.id);
  await control.payOrder(order.id, { method: 'card' });
  // The documented refund.processed sample refunds a netbanking payment.
  const nbOrder = await sdk.orders.create({ amount: 50_000, currency: 'INR', receipt: 'netbanking', notes: {} });
  const payment = await control.payOrder(nbOrder.id, { method: 'netbanking' });
  const failedOrder = await sdk.orders.create({ amount: 100, currency: 'INR', receipt: 'failing', notes: {} });
  await control.failPayment(failedOrder.id);
  // Route forbids transfers from a payment once a refund has started: transfer first.
  raw.paymentTransfers = await sdk.payments.transfer(payment.id, { transfers: [{ account, amount: 300, currency: 'INR', notes: { name: 'x', roll_no: 'y' }, linked_account_notes: ['roll_no'], on_hold: false }] } as never);
  const refund = await sdk.payments.refund(payment.id, { amount: 10_000, receipt: 'rfnd_receipt_1', notes: { comment: 'x' } });
  await control.drainWebhooks();
  raw.refund = await sdk.refunds.fetch(refund.id);
  raw.directTransfer = await sdk.transfers.create({ account, amount: 100, currency: 'INR', notes: { transaction_id: 'p1', order_id: 'o1' } } as never);
  await control.injectAdjustment({ amountPaise: 1_012, description: 'test reason', date: '2031-06-10' });
  const [settlement] = await control.runSettlements({ date: '2031-06-10' });
  raw.settlement = await sdk.settlements.fetch(settlement!.id);
  raw.recon = await sdk.settlements.reports({ year: 2031, month: 6, day: 10, count: 1000, skip: 0 });
  events = await control.webhookEvents();
});
afterAll(() => t.sandbox.close());

test.each([
  ['entity.order.json', () => raw.order],
  ['entity.refund.json', () => raw.refund],
  ['entity.settlement.json', () => raw.settlement],
  ['entity.transfer.direct.processed.json', () => raw.directTransfer],
])('when the sandbox returns the entity of %s, then it has every documented field', (file, actual) => {
  expect(missingKeys(example(file), actual())).toEqual([]);
});

test('when transfers are created from a payment, then each has every field of the documented answer', () => {
  const documented = (example('response.payment_transfers.create.json').items as unknown[])[0];
  const answer = raw.paymentTransfers as { entity: string; items: unknown[] };
  expect(answer.entity).toBe('collection');
  expect(missingKeys(documented, answer.items[0])).toEqual([]);
});

test('when the recon report is pulled, then each row type has every documented field, and adjustments have no credit_type', () => {
  const documentedRows = example('response.settlements.recon_combined.json').items as Array<Record<string, unknown>>;
  const rows = (raw.recon as { items: Array<Record<string, unknown>> }).items;
  for (const documented of documentedRows) {
    const ours = rows.find((r) => r.type === documented.type);
    expect({ type: documented.type, missing: missingKeys(documented, ours) }).toEqual({ type: documented.type, missing: [] });
  }
  expect(rows.find((r) => r.type === 'adjustment')).not.toHaveProperty('credit_type');
});

test.each([
  ['webhook.payment.captured.card.json', 'payment.captured', []],
  ['webhook.payment.failed.card.json', 'payment.failed', []],
  ['webhook.order.paid.card.json', 'order.paid', []],
  ['webhook.refund.processed.json', 'refund.processed', []],
  ['webhook.settlement.processed.json', 'settlement.processed', []],
  // account_code appears only where the Route account-code feature is enabled (reference §1.3).
  ['webhook.transfer.processed.json', 'transfer.processed', ['payload.transfer.entity.account_code']],
])('when the sandbox sends %s, then the envelope and payload have every documented field', (file, event, except) => {
  const documented = example(file);
  const ours = eventBody(event);
  expect(missingKeys(documented, ours, except)).toEqual([]);
  expect(ours.contains).toEqual(documented.contains);
});

test('when a card payment is captured, then its card and acquirer data have the documented fields', async () => {
  const order = await sdk.orders.create({ amount: 100, currency: 'INR', receipt: 'card', notes: {} });
  const payment = await t.sandbox.control.payOrder(order.id, { method: 'card' });
  const documented = (example('webhook.payment.captured.card.json').payload as { payment: { entity: unknown } }).payment.entity;
  expect(missingKeys(documented, await sdk.payments.fetch(payment.id))).toEqual([]);
});

test.each([
  ['error.amount_min_inr_1.json', async () => sdk.transfers.create({ account: 'acc_Unknown0000000', amount: 99, currency: 'INR' } as never).catch((e: { error: unknown }) => ({ error: e.error }))],
  ['error.invalid_api_key.json', async () => (await fetch(`${t.sandbox.baseUrl}/v1/orders/order_X`, { headers: { authorization: 'Basic eDp5' } })).json()],
])('when the sandbox answers an error like %s, then it has the documented shape and text', async (file, produce) => {
  const documented = example(file);
  const ours = (await produce()) as { error: Record<string, unknown> };
  expect(missingKeys(documented, ours)).toEqual([]);
  const { code, description } = documented.error as Record<string, unknown>;
  expect(ours.error).toMatchObject({ code, description });
});
