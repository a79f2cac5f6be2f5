/** Start-up connection retry: backoff, deadline, the final error; on a fake clock (no real waiting). */
import { backoffDelay, retryUntilDeadline, waitForDatabase, type RetryLogLine } from '../../src/startup/retry';
import type { Db } from '../../src/db/pool';

/** A clock that only moves when the code under test sleeps. */
function fakeClock(start = 1_000_000) {
  let t = start;
  const sleeps: number[] = [];
  return {
    now: () => t,
    sleep: async (ms: number) => { sleeps.push(ms); t += ms; },
    advance: (ms: number) => { t += ms; },
    sleeps,
  };
}

/** Fails `failures` times, then resolves with `value`. */
function flaky<T>(failures: number, value: T) {
  let calls = 0;
  const fn = async () => {
    calls++;
    if (calls <= failures) throw new Error(`ECONNREFUSED (try ${calls})`);
    return value;
  };
  return { fn, calls: () => calls };
}

describe('retryUntilDeadline', () => {
  test('when the first attempt succeeds, then nothing is logged and nobody sleeps', async () => {
    const clock = fakeClock();
    const log = jest.fn();
    await expect(retryUntilDeadline('PostgreSQL', async () => 42, { deadlineMs: 1000, log, ...clock })).resolves.toBe(42);
    expect(log).not.toHaveBeenCalled();
    expect(clock.sleeps).toEqual([]);
  });

  test('when it fails N times and then succeeds, then it returns the value with one log line per failure', async () => {
    const clock = fakeClock();
    const lines: RetryLogLine[] = [];
    const attempt = flaky(3, 'connected');
    const result = await retryUntilDeadline('Temporal at t:7233', attempt.fn, { deadlineMs: 60_000, log: (l) => lines.push(l), ...clock, random: () => 1 });
    expect(result).toBe('connected');
    expect(attempt.calls()).toBe(4);
    expect(lines.map((l) => [l.what, l.attempt, l.nextInMs])).toEqual([
      ['Temporal at t:7233', 1, 250], ['Temporal at t:7233', 2, 500], ['Temporal at t:7233', 3, 1000],
    ]);
    expect((lines[0]!.err as Error).message).toBe('ECONNREFUSED (try 1)');
    expect(clock.sleeps).toEqual([250, 500, 1000]);
  });

  test('backoff doubles from the initial delay and is capped at the max', async () => {
    const clock = fakeClock();
    const lines: RetryLogLine[] = [];
    await expect(retryUntilDeadline('x', flaky(10, 'ok').fn, { deadlineMs: 600_000, log: (l) => lines.push(l), ...clock, random: () => 1 })).resolves.toBe('ok');
    expect(lines.map((l) => l.nextInMs)).toEqual([250, 500, 1000, 2000, 4000, 5000, 5000, 5000, 5000, 5000]);
    // Custom bounds.
    const custom: number[] = [];
    await retryUntilDeadline('x', flaky(4, 'ok').fn, { deadlineMs: 600_000, log: (l) => custom.push(l.nextInMs), initialDelayMs: 100, maxDelayMs: 300, ...fakeClock(), random: () => 1 });
    expect(custom).toEqual([100, 200, 300, 300]);
  });

  test('jitter keeps each delay between half the step and the step', () => {
    for (let attempt = 1; attempt <= 12; attempt++) {
      const step = Math.min(5000, 250 * 2 ** (attempt - 1));
      expect(backoffDelay(attempt, 250, 5000, () => 0)).toBe(step / 2);
      expect(backoffDelay(attempt, 250, 5000, () => 1)).toBe(step);
      const d = backoffDelay(attempt, 250, 5000, Math.random);
      expect(d).toBeGreaterThanOrEqual(step / 2);
      expect(d).toBeLessThanOrEqual(step);
    }
    expect(backoffDelay(1000, 250, 5000, () => 1)).toBe(5000);
  });

  test('when it never succeeds, then it gives up at the deadline with the last error as cause', async () => {
    const clock = fakeClock();
    const lines: RetryLogLine[] = [];
    const attempt = flaky(Infinity, 'never');
    let error: unknown;
    try {
      await retryUntilDeadline('PostgreSQL', attempt.fn, { deadlineMs: 10_000, log: (l) => lines.push(l), ...clock, random: () => 1 });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(Error);
    const calls = attempt.calls();
    expect((error as Error).message).toBe(`could not connect to PostgreSQL within 10s: ECONNREFUSED (try ${calls})`);
    expect(((error as Error).cause as Error).message).toBe(`ECONNREFUSED (try ${calls})`);
    // 250+500+1000+2000+4000 = 7750, then the last sleep is cut to the 2250 ms left; one last try at the deadline.
    expect(clock.sleeps).toEqual([250, 500, 1000, 2000, 4000, 2250]);
    expect(clock.sleeps.reduce((a, b) => a + b, 0)).toBe(10_000);
    expect(calls).toBe(7);
    expect(lines).toHaveLength(6);
  });

  test('when attempts themselves take time, then that time counts against the deadline', async () => {
    const clock = fakeClock();
    let calls = 0;
    const slow = async () => { calls++; clock.advance(3000); throw new Error('timeout'); };
    await expect(retryUntilDeadline('Temporal', slow, { deadlineMs: 5000, log: () => undefined, ...clock, random: () => 1 }))
      .rejects.toThrow('could not connect to Temporal within 5s: timeout');
    // try 1 (0→3000), sleep 250, try 2 (3250→6250) past the deadline: stop.
    expect(calls).toBe(2);
    expect(clock.sleeps).toEqual([250]);
  });

  test('each attempt is told its number and the time left, to bound its own connect timeout', async () => {
    const clock = fakeClock();
    const seen: Array<[number, number]> = [];
    await retryUntilDeadline('x', async ({ attempt, remainingMs }) => { seen.push([attempt, remainingMs]); if (attempt < 3) throw new Error('no'); }, { deadlineMs: 1000, log: () => undefined, ...clock, random: () => 1 });
    expect(seen).toEqual([[1, 1000], [2, 750], [3, 250]]);
  });

  test('when the rejection is not an Error, then the message still shows it', async () => {
    await expect(retryUntilDeadline('Temporal', () => Promise.reject({ code: 14 }), { deadlineMs: 1, log: () => undefined, ...fakeClock() }))
      .rejects.toThrow('could not connect to Temporal within 0.001s: {"code":14}');
  });
});

describe('waitForDatabase', () => {
  afterEach(() => jest.useRealTimers());

  test('runs SELECT 1 until it answers, logging through logger.warn', async () => {
    jest.useFakeTimers();
    let calls = 0;
    const db = { query: jest.fn(async (sql: string) => { calls++; if (calls < 2) throw new Error('the database system is starting up'); return { rows: [{ '?column?': 1 }], sql }; }) };
    const logger = { warn: jest.fn() };
    const ready = waitForDatabase(db as unknown as Db, { STARTUP_CONNECT_DEADLINE_MS: 60_000 }, logger as never);
    await jest.advanceTimersByTimeAsync(250);
    await ready;
    expect(db.query).toHaveBeenCalledWith('SELECT 1');
    expect(db.query).toHaveBeenCalledTimes(2);
    expect(logger.warn).toHaveBeenCalledTimes(1);
    const [fields, message] = logger.warn.mock.calls[0] as [RetryLogLine, string];
    expect(message).toBe('waiting for PostgreSQL');
    expect(fields).toMatchObject({ what: 'PostgreSQL', attempt: 1 });
    expect(fields.nextInMs).toBeGreaterThanOrEqual(125);
    expect(fields.nextInMs).toBeLessThanOrEqual(250);
    expect((fields.err as Error).message).toBe('the database system is starting up');
  });
});
