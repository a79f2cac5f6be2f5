/** The API's Razorpay budget as logic (src/moneyin/providerBudget.ts): a full bucket admits its burst,
 * the next request is refused with a 503 that says when to come back, a token admitted but not spent
 * returns on close (once), and a spent one does not. The clock is the test's. */
import { AppError } from '../../src/appError';
import { ApiProviderBudget } from '../../src/moneyin/providerBudget';

function budget(settings = { ratePerSecond: 0.5, burst: 2 }) {
  let now = 1_000;
  return { budget: new ApiProviderBudget(settings, () => now), advance: (ms: number) => { now += ms; } };
}

const refusal = (fn: () => unknown): AppError => {
  try { fn(); } catch (err) { return err as AppError; }
  throw new Error('admitted');
};

test('when the burst is spent, then the next call is refused with 503 and the seconds until a token', () => {
  const { budget: b } = budget();
  b.admit('order').spend();
  b.admit('top-up').spend();
  const err = refusal(() => b.admit('order'));
  expect(err).toBeInstanceOf(AppError);
  expect(err).toMatchObject({ httpStatus: 503, code: 'provider_budget_exhausted', details: { retryAfterSeconds: 2 } });
});

test('when an admitted request makes no call, then closing it (even twice) gives exactly one token back', () => {
  const { budget: b } = budget({ ratePerSecond: 0.5, burst: 1 });
  const unused = b.admit('order');
  unused.close();
  unused.close();
  const spent = b.admit('order');
  spent.spend();
  spent.close();
  expect(refusal(() => b.admit('order')).code).toBe('provider_budget_exhausted');
});

test('when time passes, then the budget refills at its rate', () => {
  const { budget: b, advance } = budget({ ratePerSecond: 0.5, burst: 1 });
  b.admit('order').spend();
  advance(1_500);
  expect(refusal(() => b.admit('order')).details).toEqual({ retryAfterSeconds: 1 });
  advance(500);
  expect(() => b.admit('order').spend()).not.toThrow();
});
