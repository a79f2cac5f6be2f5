/** Issue 37, the `daily` goal: when a batched order's capture waits for the once-more look's window
 * (captureWindow.ts), and when it takes a capture listing pass instead. */
import { captureWindowPlan, WINDOW_POLL_MIN_MS } from '../../src/payouts/captureWindow';

const MIN = 60_000;
const HOUR = 60 * MIN;
const createdS = 1_800_000_000;
const created = createdS * 1000;
const production = { recheckMs: HOUR, sweepEveryMs: 10 * MIN };

describe('a batched order\'s capture and the once-more look\'s window', () => {
  test('when the window is due well before the cutoff, then it waits until about recheck + one sweep after the payment', () => {
    expect(captureWindowPlan({ createdS, nowMs: created + 5_000, cutoffMs: created + 8 * HOUR, ...production }))
      .toEqual({ kind: 'await', ms: HOUR + 10 * MIN - 5_000 });
  });

  test('when the window is due but not listed yet, then it asks again every half sweep (5 s at least), the last ask just past the two late runs', () => {
    expect(captureWindowPlan({ createdS, nowMs: created + HOUR + 11 * MIN, cutoffMs: created + 8 * HOUR, ...production })).toEqual({ kind: 'await', ms: 5 * MIN });
    expect(captureWindowPlan({ createdS, nowMs: created + HOUR + 28 * MIN, cutoffMs: created + 8 * HOUR, ...production })).toEqual({ kind: 'await', ms: 2 * MIN + 1 });
    expect(captureWindowPlan({ createdS, nowMs: created + 8_000, cutoffMs: created + HOUR, recheckMs: 3_000, sweepEveryMs: 3_000 })).toEqual({ kind: 'await', ms: WINDOW_POLL_MIN_MS });
    // From the expected listing to the late limit: five asks at most, not twenty.
    let asks = 0;
    for (let now = created + HOUR + 10 * MIN; ; asks++) {
      const plan = captureWindowPlan({ createdS, nowMs: now, cutoffMs: created + 8 * HOUR, ...production });
      if (plan.kind === 'pass') break;
      now += plan.ms;
    }
    expect(asks).toBeLessThanOrEqual(5);
  });

  test('when the window would come less than a sweep before the cutoff, then a capture pass (the order keeps its batch)', () => {
    // Hourly pairs with the default hour of recheck: never by window.
    expect(captureWindowPlan({ createdS, nowMs: created + 1_000, cutoffMs: created + HOUR, ...production })).toEqual({ kind: 'pass', why: 'cutoff' });
    expect(captureWindowPlan({ createdS, nowMs: created + 1_000, cutoffMs: created + HOUR + 20 * MIN - 1, ...production })).toEqual({ kind: 'pass', why: 'cutoff' });
    expect(captureWindowPlan({ createdS, nowMs: created + 1_000, cutoffMs: created + HOUR + 20 * MIN, ...production }).kind).toBe('await');
  });

  test('when the sweep is two runs late, or the cutoff is less than a sweep away, then it stops waiting', () => {
    expect(captureWindowPlan({ createdS, nowMs: created + HOUR + 30 * MIN + 1, cutoffMs: created + 8 * HOUR, ...production })).toEqual({ kind: 'pass', why: 'sweep_late' });
    expect(captureWindowPlan({ createdS, nowMs: created + HOUR + 30 * MIN, cutoffMs: created + 8 * HOUR, ...production }).kind).toBe('await');
    expect(captureWindowPlan({ createdS, nowMs: created + 3 * HOUR, cutoffMs: created + 3 * HOUR + 5 * MIN, ...production })).toEqual({ kind: 'pass', why: 'cutoff' });
  });
});
