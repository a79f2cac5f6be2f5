/** Transfer lifecycle with a processing delay (pending → processed / failed, with webhooks),
 * payment-linked transfer limits, and the control surface over HTTP (/_sandbox). */
import { createSdk } from '../../src/gateway/sdkClient';
import type { MoneyOutcome, RzpTransfer } from '../../src/gateway/types';
import { startTestSandbox, type TestSandbox } from '../support/sandbox';

let t: TestSandbox;
const control = () => t.sandbox.control;

beforeAll(async () => {
  t = await startTestSandbox({ transferProcessingDelayMs: 150 });
});
afterAll(() => t.sandbox.close());

function expectAccepted<T>(outcome: MoneyOutcome<T>): T {
  if (outcome.type !== 'accepted') throw new Error(`expected accepted, got ${JSON.stringify(outcome)}`);
  return outcome.entity;
}

async function pendingTransfer(key: string): Promise<RzpTransfer> {
  const account = await control().createLinkedAccount();
  const outcome = await t.gateway.createDirectTransfer({ account, amountPaise: 5_000, idempotencyKey: key, notes: { transaction_id: key, order_id: 'o' } });
  if (outcome.type !== 'accepted') throw new Error(JSON.stringify(outcome));
  return outcome.entity;
}

test('when transfers take time to process, then a direct transfer is pending first and processed after the delay, with transfer.processed', async () => {
  const transfer = await pendingTransfer('lifecycle-1');
  expect(transfer).toMatchObject({ status: 'pending', processed_at: null });
  await new Promise((r) => setTimeout(r, 300));
  expect(await t.gateway.fetchTransfer(transfer.id)).toMatchObject({ status: 'processed', settlement_status: 'pending' });
  const events = (await control().webhookEvents()).filter((e) => e.body.includes(transfer.id));
  expect(events.map((e) => e.event)).toEqual(['transfer.processed']);
});

test('when a pending transfer is failed by control, then it is failed with an error, the balance comes back and transfer.failed is sent', async () => {
  const before = await control().platformBalance();
  const transfer = await pendingTransfer('lifecycle-2');
  await control().processPendingTransfers({ fail: [transfer.id] });
  expect(await t.gateway.fetchTransfer(transfer.id)).toMatchObject({ status: 'failed', error: { code: 'BAD_REQUEST_TRANSFER_INSUFFICIENT_BALANCE', step: 'transfer_processing' } });
  expect(await control().platformBalance()).toBe(before);
  const events = (await control().webhookEvents()).filter((e) => e.body.includes(transfer.id));
  expect(events.map((e) => e.event)).toEqual(['transfer.failed']);
});

test('when payment-linked transfers exceed the payment, then they are rejected; within it, they are created pending', async () => {
  const sdk = createSdk(t.config);
  const account = await control().createLinkedAccount();
  const order = await t.gateway.createOrder({ amountPaise: 1_000, receipt: 'linked', notes: {} });
  const payment = await control().payOrder(order.id);
  const over = await sdk.payments.transfer(payment.id, { transfers: [{ account, amount: 1_001, currency: 'INR' }] } as never).catch((e: unknown) => e);
  expect(over).toMatchObject({ statusCode: 400, error: { code: 'BAD_REQUEST_ERROR', description: 'The sum of amount requested for transfer is greater than the captured amount' } });
  const made = (await sdk.payments.transfer(payment.id, { transfers: [{ account, amount: 600, currency: 'INR' }] } as never)) as unknown as { items: RzpTransfer[] };
  expect(made.items).toEqual([expect.objectContaining({ source: payment.id, recipient: account, amount: 600, status: 'pending' })]);
  const rest = await sdk.payments.transfer(payment.id, { transfers: [{ account, amount: 500, currency: 'INR' }] } as never).catch((e: unknown) => e);
  expect(rest).toMatchObject({ statusCode: 400, error: { description: 'Transfer amount exceeds amount available for transfer.' } });
});

describe('the control surface over HTTP', () => {
  const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> => {
    const res = await fetch(`${t.sandbox.baseUrl}/_sandbox${path}`, { method, headers: body ? { 'content-type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined });
    return { status: res.status, body: res.headers.get('content-type')?.includes('csv') ? await res.text() : await res.json() };
  };

  test('when a linked account, an order payment and a fault are driven over HTTP, then they take effect like the in-process API', async () => {
    const account = (await call('POST', '/linked-accounts', { status: 'activated' })).body as { id: string };
    expect(account.id).toMatch(/^acc_[A-Za-z0-9]{14}$/);
    const order = await t.gateway.createOrder({ amountPaise: 2_000, receipt: 'http-pay', notes: {} });
    const paid = await call('POST', `/orders/${order.id}/pay`, { method: 'upi' });
    expect(paid).toMatchObject({ status: 200, body: { status: 'captured', method: 'upi', order_id: order.id } });
    expect(await call('POST', '/faults', { endpoint: 'transfers.create', fault: { kind: 'rate_limited' }, calls: [1] })).toMatchObject({ status: 200 });
    const outcome = await t.gateway.createDirectTransfer({ account: account.id, amountPaise: 500, idempotencyKey: 'http-fault-1', notes: { transaction_id: 'h', order_id: 'o' } });
    expect(outcome).toMatchObject({ type: 'unknown', reason: 'rate_limited' });
    expect((await call('GET', `/transfers?recipient=${account.id}`)).body).toEqual([]);
    expect(((await call('GET', '/call-counts')).body as Record<string, number>)['transfers.create']).toBeGreaterThan(0);
  });

  test('when a split is failed, retried and reversed over HTTP, then the linked account balance and the reversals follow', async () => {
    const account = (await call('POST', '/linked-accounts', {})).body as { id: string };
    const order = await t.gateway.createOrder({ amountPaise: 2_000, receipt: 'http-split', notes: {}, transfers: [{ account: account.id, amountPaise: 1_500 }] });
    await call('POST', `/orders/${order.id}/pay`, {});
    const transferId = order.transfers![0]!.id;
    await control().processPendingTransfers({ fail: [transferId] });
    expect((await call('GET', `/linked-accounts/${account.id}/balance`)).body).toEqual({ paise: 0 });
    expect((await call('POST', '/transfers/retry-failed', { only: [transferId] })).body).toEqual([expect.objectContaining({ id: transferId, status: 'processed' })]);
    expect((await call('GET', `/linked-accounts/${account.id}/balance`)).body).toEqual({ paise: 1_500 });
    expectAccepted(await t.gateway.reverseTransfer({ transferId, amountPaise: 500 }));
    expect((await call('GET', `/transfers/${transferId}/reversals`)).body).toEqual([expect.objectContaining({ transfer_id: transferId, amount: 500 })]);
    expect(await call('PUT', `/linked-accounts/${account.id}/balance`, { paise: 0 })).toMatchObject({ status: 200 });
    expect(await t.gateway.reverseTransfer({ transferId })).toMatchObject({ type: 'rejected', error: { description: 'The linked account does not have sufficient balance to process a reversal.' } });
  });

  test('when a control request is malformed, then it answers 400 in the error shape and changes nothing', async () => {
    const before = await control().platformBalance();
    expect(await call('PUT', '/balance', { paise: 10.5 })).toMatchObject({ status: 400, body: { error: { code: 'SANDBOX_CONTROL_ERROR' } } });
    expect(await call('POST', '/orders/order_Nope0000000000/pay', {})).toMatchObject({ status: 400, body: { error: { description: 'The id provided does not exist' } } });
    expect(await control().platformBalance()).toBe(before);
  });
});
