/** The sandbox's rate limiter as logic (issue 22 item 3): a token bucket per API key and per call
 * class, refilled at the configured rate up to the burst size, on a clock the test moves. */
import { callClassOf, TokenBuckets } from '../../src/sandbox/rateLimit';

function clock(startMs = 1_000) {
  let now = startMs;
  return { now: () => now, advance: (ms: number) => { now += ms; } };
}

/** How many of `n` calls in a row the bucket lets through. */
function admitted(buckets: TokenBuckets, key: string, callClass: 'write' | 'read', n: number): number {
  let through = 0;
  for (let i = 0; i < n; i += 1) if (buckets.take(key, callClass)) through += 1;
  return through;
}

test.each([
  ['the burst size', { writeRps: 2, readRps: 5, burst: 3 }, 3, 3],
  ['one second at the class rate when burst is 0 (at least one call)', { writeRps: 3, readRps: 0.5, burst: 0 }, 3, 1],
])('when a burst arrives at full buckets, then %s goes through and the rest is refused', (_what, settings, writes, reads) => {
  const buckets = new TokenBuckets(settings, clock().now);
  expect([admitted(buckets, 'rzp_test_a', 'write', 10), admitted(buckets, 'rzp_test_a', 'read', 10)]).toEqual([writes, reads]);
});

test('when time passes, then the bucket refills at the class rate, never past the burst size', () => {
  const c = clock();
  const buckets = new TokenBuckets({ writeRps: 2, readRps: 0, burst: 4 }, c.now);
  expect(admitted(buckets, 'k', 'write', 4)).toBe(4);
  c.advance(499);
  expect(buckets.take('k', 'write')).toBe(false);
  c.advance(1);
  // 500 ms at 2/s is one token (the refused call above did not spend the part-token it had).
  expect(admitted(buckets, 'k', 'write', 5)).toBe(1);
  c.advance(1_250);
  expect(admitted(buckets, 'k', 'write', 5)).toBe(2);
  // A long quiet spell fills the bucket to the burst size, no further.
  c.advance(60_000);
  expect(admitted(buckets, 'k', 'write', 10)).toBe(4);
});

test('when one key or one class has spent its bucket, then another key and the other class are not affected', () => {
  const c = clock();
  const buckets = new TokenBuckets({ writeRps: 1, readRps: 1, burst: 2 }, c.now);
  expect(admitted(buckets, 'key_a', 'write', 5)).toBe(2);
  expect(admitted(buckets, 'key_b', 'write', 5)).toBe(2);
  expect(admitted(buckets, 'key_a', 'read', 5)).toBe(2);
  expect(admitted(buckets, 'key_b', 'read', 5)).toBe(2);
  c.advance(1_000);
  expect(admitted(buckets, 'key_a', 'write', 5)).toBe(1);
});

test('when a class rate is 0, then that class is not limited while the other one is', () => {
  const buckets = new TokenBuckets({ writeRps: 1, readRps: 0, burst: 1 }, clock().now);
  expect(admitted(buckets, 'k', 'read', 1_000)).toBe(1_000);
  expect(admitted(buckets, 'k', 'write', 3)).toBe(1);
  expect(buckets.enabled).toBe(true);
  expect(new TokenBuckets({ writeRps: 0, readRps: 0, burst: 10 }, clock().now).enabled).toBe(false);
});

test('when the buckets are reset, then every bucket is full again', () => {
  const buckets = new TokenBuckets({ writeRps: 1, readRps: 1, burst: 2 }, clock().now);
  expect(admitted(buckets, 'k', 'write', 5)).toBe(2);
  buckets.reset();
  expect(admitted(buckets, 'k', 'write', 5)).toBe(2);
});

test('when an endpoint is classified, then the calls that create or move something are writes and every other call is a read', () => {
  const writes = ['orders.create', 'payments.capture', 'payments.transfers', 'refunds.create', 'transfers.create', 'transfers.reverse'] as const;
  const reads = [
    'orders.fetch', 'orders.payments', 'payments.fetch', 'payments.refunds', 'refunds.fetch', 'transfers.fetch', 'transfers.list',
    'transfers.reversals', 'settlements.fetch', 'settlements.list', 'settlements.recon',
  ] as const;
  expect(writes.map(callClassOf)).toEqual(writes.map(() => 'write'));
  expect(reads.map(callClassOf)).toEqual(reads.map(() => 'read'));
});
