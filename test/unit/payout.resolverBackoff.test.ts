import { resolverDelayMs } from '../../src/payouts/resolverBackoff';

describe('the resolver backs off after refused listings', () => {
  const policy = { resolverRetryMs: 1_000, resolverRetryMaxMs: 30_000 };

  test('when no listing was refused, then it asks again after the configured retry', () => {
    expect(resolverDelayMs(policy, 0, 0.9)).toBe(1_000);
  });

  test('when listings keep being refused, then the wait doubles within equal jitter up to the cap', () => {
    expect(resolverDelayMs(policy, 1, 0)).toBe(1_000);
    expect(resolverDelayMs(policy, 1, 1)).toBe(2_000);
    expect(resolverDelayMs(policy, 3, 0)).toBe(4_000);
    expect(resolverDelayMs(policy, 3, 1)).toBe(8_000);
    expect(resolverDelayMs(policy, 10, 1)).toBe(30_000);
    expect(resolverDelayMs(policy, 10, 0)).toBe(15_000);
  });

  test('when the policy was recorded before the cap existed, then the configured retry is the cap', () => {
    expect(resolverDelayMs({ resolverRetryMs: 1_000 }, 5, 1)).toBe(1_000);
  });
});
