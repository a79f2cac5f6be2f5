/** The replay window's pure rule (src/webhooks/eventAge.ts) and its two config keys. */
import { loadConfig } from '../../src/config/config';
import { eventAgeVerdict } from '../../src/webhooks/eventAge';

describe('eventAgeVerdict', () => {
  const window = { maxAgeSeconds: 86_400, clockSkewSeconds: 300 };
  const now = Date.parse('2026-12-02T03:00:00Z');
  const sec = now / 1000;

  const cases: Array<{ name: string; createdAt: number; verdict: string }> = [
    { name: 'created now', createdAt: sec, verdict: 'fresh' },
    { name: '24 h old', createdAt: sec - 86_400, verdict: 'fresh' },
    { name: '24 h and the skew old (the last edge taken)', createdAt: sec - 86_700, verdict: 'fresh' },
    { name: 'one second past that', createdAt: sec - 86_701, verdict: 'too_old' },
    { name: 'a year old', createdAt: sec - 365 * 86_400, verdict: 'too_old' },
    { name: 'the skew ahead', createdAt: sec + 300, verdict: 'fresh' },
    { name: 'one second more ahead', createdAt: sec + 301, verdict: 'from_future' },
    { name: 'created at 0 (1970)', createdAt: 0, verdict: 'too_old' },
  ];
  test.each(cases)('when an event was $name, then it is $verdict', ({ createdAt, verdict }) => {
    expect(eventAgeVerdict(createdAt, now, window)).toBe(verdict);
  });

  test('when the window is configured, then it is the configured one; by default 24 h and 5 min', () => {
    const defaults = loadConfig({});
    expect([defaults.RAZORPAY_WEBHOOK_MAX_AGE_SECONDS, defaults.RAZORPAY_WEBHOOK_CLOCK_SKEW_SECONDS]).toEqual([86_400, 300]);
    const tight = loadConfig({ RAZORPAY_WEBHOOK_MAX_AGE_SECONDS: '3600', RAZORPAY_WEBHOOK_CLOCK_SKEW_SECONDS: '0' });
    expect(eventAgeVerdict(sec - 7_200, now, { maxAgeSeconds: tight.RAZORPAY_WEBHOOK_MAX_AGE_SECONDS, clockSkewSeconds: tight.RAZORPAY_WEBHOOK_CLOCK_SKEW_SECONDS })).toBe('too_old');
    expect(() => loadConfig({ RAZORPAY_WEBHOOK_MAX_AGE_SECONDS: '0' })).toThrow(/RAZORPAY_WEBHOOK_MAX_AGE_SECONDS/);
  });
});
