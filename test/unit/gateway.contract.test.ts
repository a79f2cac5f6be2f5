/** Contract tests: the official razorpay SDK, through our adapter, against the sandbox over HTTP.
 * Every Gateway call, each documented rejection and each fault kind, checking the classification
 * the workflows branch on; effects are asserted from the sandbox's side. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGateway, ProviderContractError } from '../../src/gateway';
import { GatewayCallError, type DirectTransferInput, type Gateway, type MoneyOutcome, type RzpTransfer } from '../../src/gateway/types';
import { logger } from '../../src/logger';
import { startTestSandbox, type TestSandbox } from '../support/sandbox';

let t: TestSandbox;
let gateway: Gateway;
let control: TestSandbox['sandbox']['control'];
let seq = 0;

beforeAll(async () => {
  t = await startTestSandbox();
  // A short client timeout so held answers become timeouts quickly.
  gateway = createGateway({ ...t.config, GATEWAY_TIMEOUT_MS: 400 });
  control = t.sandbox.control;
});
afterAll(() => t.sandbox.close());
afterEach(() => control.clearFaults());

function transferInput(account: string, amountPaise = 8100, key = `payout-${++seq}`): DirectTransferInput {
  return { account, amountPaise, idempotencyKey: key, notes: { transaction_id: key, order_id: `ord_${seq}` } };
}

function expectAccepted<T>(outcome: MoneyOutcome<T>): T {
  if (outcome.type !== 'accepted') throw new Error(`expected accepted, got ${JSON.stringify(outcome)}`);
  return outcome.entity;
}

async function paidOrder(amountPaise = 10_000) {
  const order = await gateway.createOrder({ amountPaise, receipt: `ord_${++seq}`, notes: { order_id: `ord_${seq}` } });
  const payment = await control.payOrder(order.id);
  return { order, payment };
}

describe('orders and payments', () => {
  test('when an order is created with a receipt and notes, then fetchOrder returns it as created, in paise', async () => {
    const order = await gateway.createOrder({ amountPaise: 12_345, receipt: 'ord_receipt_1', notes: { order_id: 'ord_receipt_1' } });
    expect(order).toMatchObject({ entity: 'order', amount: 12_345, amount_due: 12_345, amount_paid: 0, receipt: 'ord_receipt_1', status: 'created', notes: { order_id: 'ord_receipt_1' } });
    expect(order.id).toMatch(/^order_[A-Za-z0-9]{14}$/);
    expect(await gateway.fetchOrder(order.id)).toMatchObject({ id: order.id, status: 'created' });
  });

  test('when an order carries a split, then the transfers are echoed as created and run to the linked account after capture', async () => {
    const account = await control.createLinkedAccount();
    const order = await gateway.createOrder({ amountPaise: 10_000, receipt: 'ord_split_1', notes: {}, transfers: [{ account, amountPaise: 8_100, notes: { order_id: 'ord_split_1' } }] });
    expect(order.transfers).toEqual([expect.objectContaining({ recipient: account, amount: 8_100, status: 'created', source: order.id })]);
    expect(await control.transfers({ recipient: account })).toEqual([]);
    await control.payOrder(order.id);
    await control.drainWebhooks();
    const transfers = await control.transfers({ recipient: account });
    expect(transfers).toEqual([expect.objectContaining({ id: order.transfers![0]!.id, amount: 8_100, status: 'processed', source: order.id })]);
  });

  test('when an order split exceeds the order amount or goes to an unknown account, then order creation fails with the provider code', async () => {
    const account = await control.createLinkedAccount();
    const over = gateway.createOrder({ amountPaise: 1_000, receipt: 'r', notes: {}, transfers: [{ account, amountPaise: 1_001 }] });
    await expect(over).rejects.toMatchObject({ name: 'GatewayCallError', outcome: { type: 'rejected', error: { code: 'BAD_REQUEST_ERROR' } } });
    const unknown = gateway.createOrder({ amountPaise: 1_000, receipt: 'r', notes: {}, transfers: [{ account: 'acc_Unknown0000000', amountPaise: 500 }] });
    await expect(unknown).rejects.toMatchObject({ outcome: { type: 'rejected', error: { code: 'BAD_REQUEST_TRANSFER_INVALID_ACCOUNT_ID' } } });
  });

  test('when the checkout pays an order, then the order is paid and its one payment is captured with fee and tax', async () => {
    const { order, payment } = await paidOrder(10_000);
    expect(await gateway.fetchOrder(order.id)).toMatchObject({ status: 'paid', amount_paid: 10_000, amount_due: 0, attempts: 1 });
    const payments = await gateway.fetchOrderPayments(order.id);
    expect(payments).toEqual([expect.objectContaining({ id: payment.id, status: 'captured', captured: true, amount: 10_000, fee: 200, tax: 31, order_id: order.id })]);
    expect(await gateway.fetchPayment(payment.id)).toMatchObject({ id: payment.id, status: 'captured' });
  });

  test('when a payment is already captured, then capturePaymentIfNeeded returns it without a capture call', async () => {
    const { payment } = await paidOrder();
    const before = (await control.callCounts())['payments.capture'] ?? 0;
    expect(await gateway.capturePaymentIfNeeded(payment.id, payment.amount)).toMatchObject({ id: payment.id, status: 'captured' });
    expect((await control.callCounts())['payments.capture'] ?? 0).toBe(before);
  });

  test('when a payment is only authorized, then capturePaymentIfNeeded captures it', async () => {
    const order = await gateway.createOrder({ amountPaise: 5_000, receipt: 'ord_auth_1', notes: {} });
    const payment = await control.authorizeOrder(order.id);
    expect(payment.status).toBe('authorized');
    expect(await gateway.capturePaymentIfNeeded(payment.id, 5_000)).toMatchObject({ status: 'captured', captured: true, fee: 100 });
    expect(await gateway.fetchOrder(order.id)).toMatchObject({ status: 'paid' });
  });

  test('when a payment failed and is authorised late, then the same payment id ends captured and the order paid', async () => {
    const order = await gateway.createOrder({ amountPaise: 5_000, receipt: 'ord_late_1', notes: {} });
    const failed = await control.failPayment(order.id);
    expect(await gateway.fetchPayment(failed.id)).toMatchObject({ status: 'failed', error_code: 'BAD_REQUEST_ERROR' });
    expect(await gateway.fetchOrder(order.id)).toMatchObject({ status: 'attempted' });
    await control.lateAuthorize(failed.id);
    expect(await gateway.fetchPayment(failed.id)).toMatchObject({ status: 'captured', error_code: null });
    expect(await gateway.fetchOrder(order.id)).toMatchObject({ status: 'paid' });
  });

  test('when an id does not exist, then a read throws GatewayCallError with the provider rejection', async () => {
    await expect(gateway.fetchPayment('pay_DoesNotExist00')).rejects.toMatchObject({ name: 'GatewayCallError', operation: 'payments.fetch', outcome: { type: 'rejected', httpStatus: 400, error: { code: 'BAD_REQUEST_ERROR', description: 'The id provided does not exist' } } });
  });

  test('when the API keys are wrong, then the call is rejected with 401 and the documented description', async () => {
    const wrong = createGateway({ ...t.config, RAZORPAY_KEY_SECRET: 'not-the-secret' });
    await expect(wrong.fetchOrder('order_Anything000000')).rejects.toMatchObject({ outcome: { type: 'rejected', httpStatus: 401, error: { code: 'BAD_REQUEST_ERROR', description: 'The api key provided is invalid' } } });
  });
});

describe('direct transfers', () => {
  test('when a direct transfer is made, then it is accepted, processed, and the sandbox received X-Transfer-Idempotency', async () => {
    const account = await control.createLinkedAccount();
    const input = transferInput(account, 8_100, 'payout-header-check');
    const transfer = expectAccepted(await gateway.createDirectTransfer(input));
    expect(transfer).toMatchObject({ status: 'processed', recipient: account, amount: 8_100, source: t.config.RAZORPAY_PLATFORM_ACCOUNT_ID, notes: input.notes });
    expect(await control.idempotencyKeyOf(transfer.id)).toBe('payout-header-check');
    expect(await gateway.fetchTransfer(transfer.id)).toMatchObject({ id: transfer.id, status: 'processed' });
  });

  test('when the same key and body are sent again, then the same transfer comes back and only one exists', async () => {
    const account = await control.createLinkedAccount();
    const input = transferInput(account);
    const first = expectAccepted(await gateway.createDirectTransfer(input));
    const again = expectAccepted(await gateway.createDirectTransfer(input));
    expect(again.id).toBe(first.id);
    expect(await control.transfers({ recipient: account })).toHaveLength(1);
  });

  test('when the same key comes with a different body, then it is rejected and nothing new is created', async () => {
    const account = await control.createLinkedAccount();
    const input = transferInput(account);
    expectAccepted(await gateway.createDirectTransfer(input));
    const outcome = await gateway.createDirectTransfer({ ...input, amountPaise: input.amountPaise + 1 });
    expect(outcome).toMatchObject({ type: 'rejected', httpStatus: 400, error: { code: 'BAD_REQUEST_ERROR', description: 'Different request body sent for the same Idempotency Header' } });
    expect(await control.transfers({ recipient: account })).toHaveLength(1);
  });

  test('when a second request arrives while the first with its key is in process, then it is unknown/in_progress (409)', async () => {
    const account = await control.createLinkedAccount();
    const input = transferInput(account);
    await control.injectFault({ endpoint: 'transfers.create', fault: { kind: 'latency', ms: 250 }, calls: [1] });
    const first = gateway.createDirectTransfer(input);
    await new Promise((r) => setTimeout(r, 60));
    const second = await gateway.createDirectTransfer(input);
    expect(second).toMatchObject({ type: 'unknown', reason: 'in_progress', httpStatus: 409 });
    expectAccepted(await first);
    expect(await control.transfers({ recipient: account })).toHaveLength(1);
  });

  test.each([
    ['an amount below ₹1', async () => ({ account: await control.createLinkedAccount(), amount: 99 }), 'BAD_REQUEST_ERROR', 'amount'],
    ['an unknown linked account', async () => ({ account: 'acc_NoSuchAccount0', amount: 500 }), 'BAD_REQUEST_TRANSFER_INVALID_ACCOUNT_ID', 'account'],
    ['a suspended linked account', async () => ({ account: await control.createLinkedAccount({ status: 'suspended' }), amount: 500 }), 'BAD_REQUEST_TRANSFER_NOT_ALLOWED_TO_SUSPENDED_LINKED_ACCOUNT', 'account'],
    ['a linked account not activated', async () => ({ account: await control.createLinkedAccount({ status: 'not_activated' }), amount: 500 }), 'BAD_REQUEST_TRANSFER_ACCOUNT_NOT_ACTIVATED', 'account'],
  ])('when a transfer goes to %s, then it is rejected with the provider code and no transfer exists', async (_case, setup, code, field) => {
    const { account, amount } = await setup();
    const before = (await control.transfers()).length;
    const outcome = await gateway.createDirectTransfer(transferInput(account, amount));
    expect(outcome).toMatchObject({ type: 'rejected', httpStatus: 400, error: { code, field } });
    expect(await control.transfers()).toHaveLength(before);
  });

  test('when the platform balance is short, then the transfer is rejected, the rejection is replayed under its key, and a fresh key succeeds once funded', async () => {
    const account = await control.createLinkedAccount();
    const balance = await control.platformBalance();
    await control.setPlatformBalance(5_000);
    const input = transferInput(account, 8_100);
    const outcome = await gateway.createDirectTransfer(input);
    expect(outcome).toMatchObject({ type: 'rejected', error: { code: 'BAD_REQUEST_TRANSFER_INSUFFICIENT_BALANCE', reason: 'insufficient_account_balance', field: 'amount', description: 'Account does not have sufficient balance to carry out transfer operation' } });
    await control.setPlatformBalance(balance);
    expect(await gateway.createDirectTransfer(input)).toMatchObject({ type: 'rejected', error: { code: 'BAD_REQUEST_TRANSFER_INSUFFICIENT_BALANCE' } });
    expectAccepted(await gateway.createDirectTransfer({ ...input, idempotencyKey: `${input.idempotencyKey}-2` }));
    expect(await control.transfers({ recipient: account })).toHaveLength(1);
    // Transfer fee on ₹81: ceil(0.25%) = 21 paise + 18% GST (4) = 25.
    expect(await control.platformBalance()).toBe(balance - 8_100 - 25);
  });

  test('when a rejection is logged, then the provider error is logged whole, at info (a definite answer, for the caller to say in words), not as an error', async () => {
    const info = jest.spyOn(logger, 'info');
    const error = jest.spyOn(logger, 'error');
    const rejectedIn = (spy: jest.SpyInstance) => spy.mock.calls.map((c) => c[0] as { err?: { statusCode?: number; error?: { code?: string } } }).find((o) => o?.err?.statusCode === 400);
    try {
      await gateway.createDirectTransfer(transferInput('acc_NoSuchAccount0', 500));
      expect(rejectedIn(info)?.err?.error).toMatchObject({ code: 'BAD_REQUEST_TRANSFER_INVALID_ACCOUNT_ID', description: 'Account ID provided for transfer is invalid', source: 'business', step: 'transfer_processing' });
      expect(rejectedIn(error)).toBeUndefined();
    } finally {
      info.mockRestore();
      error.mockRestore();
    }
  });
});

describe('faults on a money-moving call', () => {
  async function attempt(fault: Parameters<typeof control.injectFault>[0]['fault']): Promise<{ outcome: MoneyOutcome<RzpTransfer>; account: string; input: DirectTransferInput }> {
    const account = await control.createLinkedAccount();
    const input = transferInput(account, 8_100);
    await control.injectFault({ endpoint: 'transfers.create', fault, calls: [1] });
    return { outcome: await gateway.createDirectTransfer(input), account, input };
  }

  test('when the provider fails with 5xx before acting, then the outcome is unknown/server_error and no transfer exists', async () => {
    const { outcome, account } = await attempt({ kind: 'server_error_before' });
    expect(outcome).toMatchObject({ type: 'unknown', reason: 'server_error', httpStatus: 500 });
    expect(await control.transfers({ recipient: account })).toEqual([]);
  });

  test('when the provider acts and the connection drops, then the outcome is unknown/connection, the transfer exists, and a retry under the key returns it', async () => {
    const { outcome, account, input } = await attempt({ kind: 'drop_after_commit' });
    expect(outcome).toMatchObject({ type: 'unknown', reason: 'connection', httpStatus: null });
    const [made] = await control.transfers({ recipient: account });
    expect(made).toMatchObject({ amount: 8_100, notes: { transaction_id: input.idempotencyKey } });
    expect(expectAccepted(await gateway.createDirectTransfer(input)).id).toBe(made!.id);
    expect(await control.transfers({ recipient: account })).toHaveLength(1);
  });

  test('when the provider acts and holds the answer past the client timeout, then the outcome is unknown/timeout and the transfer exists', async () => {
    const { outcome, account } = await attempt({ kind: 'delay_after_commit', ms: 1_000 });
    expect(outcome).toMatchObject({ type: 'unknown', reason: 'timeout', httpStatus: null });
    expect(await control.transfers({ recipient: account })).toHaveLength(1);
  });

  test('when the provider throttles, then the outcome is unknown/rate_limited (429) and no transfer exists', async () => {
    const { outcome, account } = await attempt({ kind: 'rate_limited' });
    expect(outcome).toMatchObject({ type: 'unknown', reason: 'rate_limited', httpStatus: 429 });
    expect(await control.transfers({ recipient: account })).toEqual([]);
  });

  test('when the provider is slow but within the timeout, then the transfer is accepted', async () => {
    const { outcome } = await attempt({ kind: 'latency', ms: 100 });
    expect(outcome.type).toBe('accepted');
  });

  test('when nothing listens at the base URL, then the SDK has no response and the outcome is unknown/connection', async () => {
    const server = http.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as AddressInfo).port;
    await new Promise<void>((r) => server.close(() => r()));
    const nowhere = createGateway({ ...t.config, RAZORPAY_BASE_URL: `http://127.0.0.1:${port}` });
    expect(await nowhere.createDirectTransfer(transferInput('acc_NoSuchAccount0'))).toMatchObject({ type: 'unknown', reason: 'connection', httpStatus: null });
  });

  test('when faults are drawn by probability with a seed, then the same seed fails the same calls', async () => {
    const run = async (): Promise<string[]> => {
      await control.clearFaults();
      await control.injectFault({ endpoint: 'transfers.fetch', fault: { kind: 'server_error_before' }, probability: 0.5, seed: 42 });
      const account = await control.createLinkedAccount();
      const transfer = expectAccepted(await gateway.createDirectTransfer(transferInput(account, 500)));
      const results: string[] = [];
      for (let i = 0; i < 8; i++) results.push(await gateway.fetchTransfer(transfer.id).then(() => 'ok', () => 'fail'));
      return results;
    };
    const first = await run();
    expect(first).toContain('ok');
    expect(first).toContain('fail');
    expect(await run()).toEqual(first);
  });
});

describe('a provider that breaks its contract', () => {
  let server: http.Server;
  let stub: Gateway;
  let answer: { status: number; body: string };
  beforeAll(async () => {
    // The sandbox never answers like this, so a minimal stub stands in for a misbehaving provider.
    server = http.createServer((_req, res) => res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    stub = createGateway({ ...t.config, RAZORPAY_BASE_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` });
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  test('when a 4xx carries no provider error code, then the adapter throws instead of guessing', async () => {
    answer = { status: 400, body: '{"error":{"description":"no code"}}' };
    await expect(stub.createDirectTransfer(transferInput('acc_NoSuchAccount0'))).rejects.toBeInstanceOf(ProviderContractError);
  });

  test('when a proxy answers 502 with HTML, then the outcome is unknown/server_error', async () => {
    answer = { status: 502, body: '<html>bad gateway</html>' };
    expect(await stub.createDirectTransfer(transferInput('acc_NoSuchAccount0'))).toMatchObject({ type: 'unknown', reason: 'server_error', httpStatus: 502 });
  });

  test('when a 2xx answer does not parse, then a money call is unknown (the provider acted) and a read throws', async () => {
    answer = { status: 200, body: '{"id":"trf_x"}' };
    expect(await stub.createDirectTransfer(transferInput('acc_NoSuchAccount0'))).toMatchObject({ type: 'unknown', reason: 'no_response' });
    await expect(stub.fetchTransfer('trf_x')).rejects.toBeInstanceOf(GatewayCallError);
  });
});

describe('listing transfers', () => {
  test('when more transfers exist than one page holds, then listTransfers returns every one in the window and none outside', async () => {
    const base = Date.UTC(2031, 0, 5, 6, 0, 0);
    const account = await control.createLinkedAccount();
    try {
      await control.setClock(base - 3_600_000);
      const outside = expectAccepted(await gateway.createDirectTransfer(transferInput(account, 100)));
      await control.setClock(base);
      const made = new Set<string>();
      for (let i = 0; i < 130; i++) made.add(expectAccepted(await gateway.createDirectTransfer(transferInput(account, 100 + i))).id);
      const listed = await gateway.listTransfers({ from: new Date(base - 60_000), to: new Date(base + 600_000) });
      expect(new Set(listed.map((x) => x.id))).toEqual(made);
      expect(listed.map((x) => x.id)).not.toContain(outside.id);
    } finally {
      await control.setClock(null);
    }
  });

  test('when a page larger than 100 is asked for, then the sandbox answers the documented 400', async () => {
    const res = await fetch(`${t.sandbox.baseUrl}/v1/transfers?count=101`, { headers: { authorization: `Basic ${Buffer.from(`${t.config.RAZORPAY_KEY_ID}:${t.config.RAZORPAY_KEY_SECRET}`).toString('base64')}` } });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { code: 'BAD_REQUEST_ERROR', description: 'The count may not be greater than 100.' } });
  });
});

describe('refunds', () => {
  const refundKey = () => `rfr_contract_${++seq}`;

  test('when a refund is made with a receipt, then it is accepted pending, processed later, and the sandbox saw X-Refund-Idempotency', async () => {
    const { payment } = await paidOrder(10_000);
    const receipt = refundKey();
    const refund = expectAccepted(await gateway.createRefund({ paymentId: payment.id, amountPaise: 4_000, receipt }));
    expect(refund).toMatchObject({ entity: 'refund', amount: 4_000, payment_id: payment.id, receipt, status: 'pending' });
    await control.drainWebhooks();
    expect(await gateway.fetchRefund(refund.id)).toMatchObject({ status: 'processed' });
    expect((await control.refunds()).filter((r) => r.payment_id === payment.id)).toHaveLength(1);
  });

  test('when the same idempotency key and body are sent again, then the same refund comes back and only one exists', async () => {
    const { payment } = await paidOrder(10_000);
    const input = { paymentId: payment.id, amountPaise: 4_000, receipt: refundKey() };
    const before = await control.platformBalance();
    const first = expectAccepted(await gateway.createRefund(input));
    const again = expectAccepted(await gateway.createRefund(input));
    expect(again.id).toBe(first.id);
    expect((await control.refunds()).filter((r) => r.payment_id === payment.id)).toHaveLength(1);
    expect(await control.platformBalance()).toBe(before - 4_000);
  });

  test('when the same idempotency key comes with a different body, then it is the documented 400 and nothing new is refunded', async () => {
    const { payment } = await paidOrder(10_000);
    const input = { paymentId: payment.id, amountPaise: 4_000, receipt: refundKey() };
    expectAccepted(await gateway.createRefund(input));
    expect(await gateway.createRefund({ ...input, amountPaise: 5_000 })).toMatchObject({
      type: 'rejected', httpStatus: 400, error: { code: 'BAD_REQUEST_ERROR', description: 'Different request with the same idempotency key has already been processed.' },
    });
    expect((await control.refunds()).filter((r) => r.payment_id === payment.id).map((r) => r.amount)).toEqual([4_000]);
  });

  test('when a fresh idempotency key carries a receipt already used, then the duplicate receipt is rejected', async () => {
    const { payment } = await paidOrder(10_000);
    const receipt = refundKey();
    expectAccepted(await gateway.createRefund({ paymentId: payment.id, amountPaise: 4_000, receipt }));
    expect(await gateway.createRefund({ paymentId: payment.id, amountPaise: 4_000, receipt, idempotencyKey: `${receipt}_r1` })).toMatchObject({
      type: 'rejected', error: { code: 'BAD_REQUEST_REFUND_RECEIPT_ALREADY_PRESENT', description: 'Duplicate receipt found for this refund request.' },
    });
    expect((await control.refunds()).filter((r) => r.payment_id === payment.id)).toHaveLength(1);
  });

  test('when a payment has refunds, then listPaymentRefunds returns each with its receipt and status, and none of another payment', async () => {
    const { payment } = await paidOrder(10_000);
    const { payment: other } = await paidOrder(10_000);
    const receipts = [refundKey(), refundKey()];
    const made = [];
    for (const receipt of receipts) made.push(expectAccepted(await gateway.createRefund({ paymentId: payment.id, amountPaise: 3_000, receipt, notes: { refund_request_id: receipt } })));
    expectAccepted(await gateway.createRefund({ paymentId: other.id, amountPaise: 1_000, receipt: refundKey() }));
    await control.drainWebhooks();
    const listed = await gateway.listPaymentRefunds(payment.id);
    expect(listed.map((r) => r.id).sort()).toEqual(made.map((r) => r.id).sort());
    expect(listed).toEqual(expect.arrayContaining(receipts.map((receipt) => expect.objectContaining({ receipt, payment_id: payment.id, status: 'processed', notes: { refund_request_id: receipt } }))));
    expect(await gateway.listPaymentRefunds((await paidOrder(10_000)).payment.id)).toEqual([]);
  });

  test('when a refund is rejected, then the rejection is replayed under its key and a fresh key succeeds once it can', async () => {
    const { payment } = await paidOrder(10_000);
    const balance = await control.platformBalance();
    const input = { paymentId: payment.id, amountPaise: 6_000, receipt: refundKey() };
    try {
      await control.setPlatformBalance(100);
      const short = { type: 'rejected', error: { code: 'BAD_REQUEST_ERROR', reason: 'insufficient_balance' } };
      expect(await gateway.createRefund(input)).toMatchObject(short);
      await control.setPlatformBalance(balance);
      expect(await gateway.createRefund(input)).toMatchObject(short);
      expect(expectAccepted(await gateway.createRefund({ ...input, idempotencyKey: `${input.receipt}_r1` }))).toMatchObject({ amount: 6_000, receipt: input.receipt });
    } finally {
      await control.setPlatformBalance(balance);
    }
  });

  test('when the idempotency key is shorter than documented, then the adapter refuses to send it', async () => {
    const { payment } = await paidOrder(10_000);
    await expect(gateway.createRefund({ paymentId: payment.id, amountPaise: 1_000, receipt: 'rf_1' })).rejects.toThrow(/idempotency key/);
    expect((await control.refunds()).filter((r) => r.payment_id === payment.id)).toEqual([]);
  });

  test('when a refund exceeds what is left of the payment, then it is rejected', async () => {
    const { payment } = await paidOrder(10_000);
    expect(await gateway.createRefund({ paymentId: payment.id, amountPaise: 10_001, receipt: refundKey() })).toMatchObject({ type: 'rejected', error: { code: 'BAD_REQUEST_ERROR', description: 'The refund amount provided is greater than amount captured' } });
  });

  test('when the refund answer is lost after the effect, then the outcome is unknown and a retry under the same key returns the same refund', async () => {
    const { payment } = await paidOrder(10_000);
    await control.injectFault({ endpoint: 'refunds.create', fault: { kind: 'drop_after_commit' }, calls: [1] });
    const input = { paymentId: payment.id, amountPaise: 10_000, receipt: refundKey() };
    expect(await gateway.createRefund(input)).toMatchObject({ type: 'unknown', reason: 'connection' });
    const [made] = (await control.refunds()).filter((r) => r.payment_id === payment.id);
    expect(expectAccepted(await gateway.createRefund(input)).id).toBe(made!.id);
    expect((await control.refunds()).filter((r) => r.payment_id === payment.id)).toHaveLength(1);
  });

  test('when the refund endpoint fails before acting, then the outcome is unknown/server_error and no refund exists', async () => {
    const { payment } = await paidOrder(10_000);
    await control.injectFault({ endpoint: 'refunds.create', fault: { kind: 'server_error_before' }, calls: [1] });
    expect(await gateway.createRefund({ paymentId: payment.id, amountPaise: 1_000, receipt: refundKey() })).toMatchObject({ type: 'unknown', reason: 'server_error', httpStatus: 500 });
    expect((await control.refunds()).filter((r) => r.payment_id === payment.id)).toEqual([]);
  });
});

describe('Route splits: payment transfers, reversals, refunds with reverse_all', () => {
  async function paidSplit(amountPaise = 10_000, splitPaise = 8_100) {
    const account = await control.createLinkedAccount();
    const order = await gateway.createOrder({ amountPaise, receipt: `ord_${++seq}`, notes: {}, transfers: [{ account, amountPaise: splitPaise, notes: { order_id: `ord_${seq}` } }] });
    const payment = await control.payOrder(order.id);
    return { account, order, payment };
  }

  test('when a split order is paid, then the payment lists its order transfer and the linked account holds the split', async () => {
    const { account, order, payment } = await paidSplit();
    const listed = await gateway.listPaymentTransfers(payment.id);
    expect(listed).toEqual([expect.objectContaining({ id: order.transfers![0]!.id, source: order.id, recipient: account, amount: 8_100, status: 'processed' })]);
    expect(await control.linkedAccountBalance(account)).toBe(8_100);
  });

  test('when a transfer is reversed in part and then in full, then its status, amount_reversed, reversals and both balances follow', async () => {
    const { account, order } = await paidSplit();
    const transferId = order.transfers![0]!.id;
    const platform = await control.platformBalance();
    const part = expectAccepted(await gateway.reverseTransfer({ transferId, amountPaise: 1_000, notes: { reason: 'part' } }));
    expect(part).toMatchObject({ entity: 'reversal', transfer_id: transferId, amount: 1_000, fee: 0, tax: 0, currency: 'INR', customer_refund_id: null, notes: { reason: 'part' } });
    expect(part.id).toMatch(/^rvrsl_[A-Za-z0-9]{14}$/);
    expect(await gateway.fetchTransfer(transferId)).toMatchObject({ status: 'partially_reversed', amount_reversed: 1_000 });
    const rest = expectAccepted(await gateway.reverseTransfer({ transferId }));
    expect(rest.amount).toBe(7_100);
    expect(await gateway.fetchTransfer(transferId)).toMatchObject({ status: 'reversed', amount_reversed: 8_100 });
    expect((await gateway.listTransferReversals(transferId)).map((r) => r.id)).toEqual([part.id, rest.id]);
    expect(await control.linkedAccountBalance(account)).toBe(0);
    expect(await control.platformBalance()).toBe(platform + 8_100);
    expect(await gateway.reverseTransfer({ transferId, amountPaise: 100 })).toMatchObject({ type: 'rejected', error: { code: 'BAD_REQUEST_ERROR', description: 'Only processed transfers can be reversed' } });
  });

  test('when a reversal asks for more than is left, then it is the documented rejection and nothing moves', async () => {
    const { account, order } = await paidSplit();
    const transferId = order.transfers![0]!.id;
    expect(await gateway.reverseTransfer({ transferId, amountPaise: 9_000 })).toMatchObject({ type: 'rejected', error: { description: 'The reversal amount provided is greater than amount transferred' } });
    expectAccepted(await gateway.reverseTransfer({ transferId, amountPaise: 8_000 }));
    expect(await gateway.reverseTransfer({ transferId, amountPaise: 200 })).toMatchObject({ type: 'rejected', error: { description: 'The reversal amount provided is greater than the amount not reversed' } });
    expect(await control.linkedAccountBalance(account)).toBe(100);
  });

  test('when a split payment is refunded with reverse_all, then the split comes back from the linked account first and the refund is made once', async () => {
    const { account, order, payment } = await paidSplit();
    const platform = await control.platformBalance();
    const refund = expectAccepted(await gateway.createRefund({ paymentId: payment.id, amountPaise: 10_000, receipt: `rfr_reverse_${++seq}`, reverseAll: true }));
    const transferId = order.transfers![0]!.id;
    expect(await gateway.fetchTransfer(transferId)).toMatchObject({ status: 'reversed', amount_reversed: 8_100 });
    expect(await gateway.listTransferReversals(transferId)).toEqual([expect.objectContaining({ amount: 8_100, customer_refund_id: refund.id })]);
    expect(await control.linkedAccountBalance(account)).toBe(0);
    expect(await control.platformBalance()).toBe(platform + 8_100 - 10_000);
  });

  test('when a split payment is refunded without reverse_all, then the linked account keeps the split', async () => {
    const { account, payment } = await paidSplit();
    expectAccepted(await gateway.createRefund({ paymentId: payment.id, amountPaise: 10_000, receipt: `rfr_keep_${++seq}` }));
    expect(await control.linkedAccountBalance(account)).toBe(8_100);
  });

  test('when the linked account no longer holds the split, then a reverse_all refund is rejected and nothing is refunded', async () => {
    const { account, payment } = await paidSplit();
    await control.setLinkedAccountBalance(account, 5_000); // the rest went out in the account's own settlement
    const outcome = await gateway.createRefund({ paymentId: payment.id, amountPaise: 10_000, receipt: `rfr_short_${++seq}`, reverseAll: true });
    expect(outcome).toMatchObject({ type: 'rejected', error: { description: 'The linked account does not have sufficient balance to process a reversal.' } });
    expect((await control.refunds()).filter((r) => r.payment_id === payment.id)).toEqual([]);
  });

  test('when a failed order transfer is retried by Razorpay, then it processes later, with transfer.processed, and at most 3 times', async () => {
    const slow = await startTestSandbox({ transferProcessingDelayMs: 600_000 });
    try {
      const account = await slow.sandbox.control.createLinkedAccount();
      const order = await slow.gateway.createOrder({ amountPaise: 10_000, receipt: 'ord_retry', notes: {}, transfers: [{ account, amountPaise: 8_100 }] });
      const payment = await slow.sandbox.control.payOrder(order.id);
      const [transfer] = await slow.gateway.listPaymentTransfers(payment.id);
      expect(transfer).toMatchObject({ status: 'created' });
      await slow.sandbox.control.processPendingTransfers({ fail: [transfer!.id] });
      expect(await slow.gateway.fetchTransfer(transfer!.id)).toMatchObject({ status: 'failed', error: { code: 'BAD_REQUEST_TRANSFER_INSUFFICIENT_BALANCE' } });
      for (let i = 0; i < 2; i++) await slow.sandbox.control.retryFailedTransfers({ fail: [transfer!.id] });
      expect(await slow.sandbox.control.linkedAccountBalance(account)).toBe(0);
      expect(await slow.sandbox.control.retryFailedTransfers()).toHaveLength(1);
      expect(await slow.gateway.fetchTransfer(transfer!.id)).toMatchObject({ status: 'processed', error: { code: null } });
      expect(await slow.sandbox.control.linkedAccountBalance(account)).toBe(8_100);
      const events = (await slow.sandbox.control.webhookEvents()).filter((e) => e.event.startsWith('transfer.') && e.body.includes(transfer!.id)).map((e) => e.event);
      expect(events).toEqual(['transfer.failed', 'transfer.failed', 'transfer.failed', 'transfer.processed']);
      expect(await slow.sandbox.control.retryFailedTransfers()).toEqual([]);
    } finally {
      await slow.sandbox.close();
    }
  });
});

describe('faults on read calls', () => {
  test.each([
    ['server_error_before', { kind: 'server_error_before' as const }, 'server_error'],
    ['rate_limited', { kind: 'rate_limited' as const }, 'rate_limited'],
    ['drop_after_commit', { kind: 'drop_after_commit' as const }, 'connection'],
    ['delay_after_commit', { kind: 'delay_after_commit' as const, ms: 1_000 }, 'timeout'],
  ])('when fetchPayment meets %s, then it throws GatewayCallError with unknown/%s', async (_name, fault, reason) => {
    const { payment } = await paidOrder();
    await control.injectFault({ endpoint: 'payments.fetch', fault, calls: [1] });
    const err = await gateway.fetchPayment(payment.id).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayCallError);
    expect((err as GatewayCallError).outcome).toMatchObject({ type: 'unknown', reason });
  });
});

describe('settlements', () => {
  test('when more than 1000 recon rows settle on a day, then settlementReconRows returns all of them over two pages', async () => {
    for (let i = 0; i < 1_005; i++) await control.injectAdjustment({ amountPaise: 100 + i, description: `adj ${i}`, date: '2031-03-03' });
    const [settlement] = await control.runSettlements({ date: '2031-03-03' });
    const before = (await control.callCounts())['settlements.recon'] ?? 0;
    const rows = await gateway.settlementReconRows({ year: 2031, month: 3, day: 3 });
    // Earlier tests' captures are due by then too and settle in the same run.
    expect(rows.filter((r) => r.type === 'adjustment')).toHaveLength(1_005);
    expect(rows.length).toBeGreaterThan(1_000);
    expect((await control.callCounts())['settlements.recon']).toBe(before + 2);
    expect(rows.every((r) => r.settlement_id === settlement!.id)).toBe(true);
    expect(await gateway.fetchSettlement(settlement!.id)).toMatchObject({ id: settlement!.id, amount: rows.reduce((s, r) => s + r.credit - r.debit, 0), status: 'processed', utr: settlement!.utr });
  });
});
