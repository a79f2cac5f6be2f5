/** The sandbox's pure parts: fee models, the idempotency store and the fault injector. */
import { paymentFee, transferFee } from '../../src/sandbox/entities';
import { RazorpayApiError } from '../../src/sandbox/errors';
import { FaultInjector, seededRandom } from '../../src/sandbox/faults';
import { IdempotencyStore } from '../../src/sandbox/idempotency';

test('when fees are charged, then a payment pays 2% including 18% GST and a transfer 0.25% + GST, at least 1 paisa', () => {
  expect(paymentFee(10_000)).toEqual({ fee: 200, tax: 31 });
  expect(transferFee(100)).toEqual({ fees: 1, tax: 0 });
  expect(transferFee(100_000)).toEqual({ fees: 295, tax: 45 });
});

describe('idempotency store', () => {
  const body = { account: 'acc_A', amount: 8100, notes: { transaction_id: 'p1' } };

  test('when a key is reused with the same body (any key order) after an answer, then that answer is replayed', () => {
    const store = new IdempotencyStore();
    const claim = store.claim('payout-1', body);
    if (claim.kind !== 'new') throw new Error('expected a new claim');
    claim.complete({ status: 400, body: { error: { code: 'BAD_REQUEST_TRANSFER_INSUFFICIENT_BALANCE' } } });
    expect(store.claim('payout-1', { notes: { transaction_id: 'p1' }, amount: 8100, account: 'acc_A' })).toEqual({ kind: 'replay', answer: { status: 400, body: { error: { code: 'BAD_REQUEST_TRANSFER_INSUFFICIENT_BALANCE' } } } });
  });

  test('when a key is reused while the first request is in process, then 409; with another body, then 400', () => {
    const store = new IdempotencyStore();
    store.claim('payout-2', body);
    expect(() => store.claim('payout-2', body)).toThrow(expect.objectContaining({ httpStatus: 409 }));
    expect(() => store.claim('payout-2', { ...body, amount: 1 })).toThrow(expect.objectContaining({ httpStatus: 400, description: 'Different request body sent for the same Idempotency Header' }));
  });

  test('when a claim is abandoned (the sandbox failed), then the key is free again', () => {
    const store = new IdempotencyStore();
    const claim = store.claim('payout-3', body);
    if (claim.kind === 'new') claim.abandon();
    expect(store.claim('payout-3', body).kind).toBe('new');
  });

  test.each(['abc', 'x'.repeat(37), 'bad/key'])('when the key is %s, then it is refused as malformed', (key) => {
    expect(() => new IdempotencyStore().claim(key, body)).toThrow(RazorpayApiError);
  });
});

describe('fault injector', () => {
  test('when a rule names call numbers, then exactly those calls of its endpoint fault, counted from when it was added', () => {
    const faults = new FaultInjector();
    faults.onCall('transfers.create');
    faults.add({ endpoint: 'transfers.create', fault: { kind: 'rate_limited' }, calls: [2] });
    expect([faults.onCall('transfers.fetch'), faults.onCall('transfers.create'), faults.onCall('transfers.create'), faults.onCall('transfers.create')]).toEqual([null, null, { kind: 'rate_limited' }, null]);
    expect(faults.callCounts()).toEqual({ 'transfers.create': 4, 'transfers.fetch': 1 });
  });

  test('when a rule is for every endpoint, then it counts calls across endpoints', () => {
    const faults = new FaultInjector();
    faults.add({ endpoint: '*', fault: { kind: 'server_error_before' }, calls: [2] });
    expect([faults.onCall('orders.create'), faults.onCall('payments.fetch')]).toEqual([null, { kind: 'server_error_before' }]);
  });

  test('when a probability rule has a seed, then the same seed gives the same sequence', () => {
    const draw = (seed: number) => Array.from({ length: 20 }, seededRandom(seed));
    expect(draw(7)).toEqual(draw(7));
    expect(draw(7)).not.toEqual(draw(8));
  });

  test('when a rule has neither calls nor probability, then it is refused', () => {
    expect(() => new FaultInjector().add({ endpoint: '*', fault: { kind: 'rate_limited' } })).toThrow();
  });
});
