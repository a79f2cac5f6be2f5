/** The token bucket as logic (src/domain/tokenBucket.ts): full at the start, refilled at its rate up
 * to its size, a refused take spends nothing, a returned token is one to spend again, and the wait
 * for the next token is what Retry-After says. The clock is the test's. */
import { TokenBucket } from '../../src/domain/tokenBucket';

function clock(startMs = 5_000) {
  let now = startMs;
  return { now: () => now, advance: (ms: number) => { now += ms; } };
}

const takes = (bucket: TokenBucket, n: number): number => Array.from({ length: n }).filter(() => bucket.take()).length;

test('when a burst arrives at a full bucket, then its size goes through and the rest is refused', () => {
  expect(takes(new TokenBucket({ ratePerSecond: 2, size: 3 }, clock().now), 10)).toBe(3);
});

test('when time passes, then it refills at its rate, a refused take keeps the part-token, and it never holds more than its size', () => {
  const c = clock();
  const bucket = new TokenBucket({ ratePerSecond: 4, size: 2 }, c.now);
  expect(takes(bucket, 2)).toBe(2);
  c.advance(249);
  expect(bucket.take()).toBe(false);
  c.advance(1);
  expect(takes(bucket, 3)).toBe(1);
  c.advance(60_000);
  expect(takes(bucket, 10)).toBe(2);
});

test('when the bucket is empty, then msUntilNextToken is the time to refill one token, and 0 when one is there', () => {
  const c = clock();
  const bucket = new TokenBucket({ ratePerSecond: 0.5, size: 1 }, c.now);
  expect(bucket.msUntilNextToken()).toBe(0);
  expect(bucket.take()).toBe(true);
  expect(bucket.msUntilNextToken()).toBeCloseTo(2_000, 6);
  c.advance(1_500);
  expect(bucket.msUntilNextToken()).toBeCloseTo(500, 6);
  c.advance(500);
  expect(bucket.msUntilNextToken()).toBe(0);
  expect(bucket.take()).toBe(true);
});

test('when a taken token is given back, then it can be spent again, but the bucket never passes its size', () => {
  const c = clock();
  const bucket = new TokenBucket({ ratePerSecond: 1, size: 2 }, c.now);
  expect(takes(bucket, 2)).toBe(2);
  bucket.giveBack();
  expect(takes(bucket, 3)).toBe(1);
  c.advance(10_000);
  bucket.giveBack();
  expect(takes(bucket, 5)).toBe(2);
});

test('when the clock goes backwards (it should not), then no tokens are made up', () => {
  const c = clock();
  const bucket = new TokenBucket({ ratePerSecond: 1, size: 1 }, c.now);
  expect(bucket.take()).toBe(true);
  c.advance(-5_000);
  expect(bucket.take()).toBe(false);
});

test('when the rate or size is not positive, then the bucket refuses to exist', () => {
  expect(() => new TokenBucket({ ratePerSecond: 0, size: 1 })).toThrow(/rate/);
  expect(() => new TokenBucket({ ratePerSecond: 1, size: 0 })).toThrow(/size/);
});
