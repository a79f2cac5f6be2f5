/** The Schedule watch behind /ready and /metrics: one describe in flight per Schedule, a fresh
 * answer reused, a slow one not taken as "missing", and only "not found" taken as proof. */
import { ScheduleNotFoundError, type Client } from '@temporalio/client';
import { scheduleReadiness } from '../../src/observability/readiness';
import { SCHEDULE_SEEN_GRACE_MS, watchSchedules } from '../../src/observability/scheduleWatch';

const present = { spec: {}, state: { paused: false }, info: { recentActions: [], createdAt: new Date(0), nextActionTimes: [] } };

/** A client whose describe answers when the test says so. */
function scriptedClient() {
  const calls: string[] = [];
  const pending: Array<{ resolve: (v: unknown) => void; reject: (e: unknown) => void }> = [];
  const client = {
    schedule: {
      getHandle: (id: string) => ({
        describe: () => {
          calls.push(id);
          return new Promise((resolve, reject) => { pending.push({ resolve, reject }); });
        },
      }),
    },
  } as unknown as Pick<Client, 'schedule'>;
  return { client, calls, pending };
}

describe('watchSchedules', () => {
  test('when Temporal does not answer a describe in time, then the look says unanswered, no second describe is sent while the first is out, and its late answer is used', async () => {
    const { client, calls, pending } = scriptedClient();
    const watch = watchSchedules(client, ['payout-sweep'], { timeoutMs: 20, seenAt: Date.now() });
    const [first] = await watch.look();
    expect(first!.answer).toEqual({ kind: 'unanswered', error: 'no answer within 20 ms' });
    expect(scheduleReadiness(first!, Date.now())).toEqual({ ok: true, detail: expect.stringMatching(/^present \d+ s ago; Temporal did not answer now \(no answer within 20 ms\)$/) });
    await watch.look();
    expect(calls).toEqual(['payout-sweep']);
    pending[0]!.resolve({ ...present, state: { paused: true } });
    await new Promise((r) => setImmediate(r));
    const [later] = await watch.look();
    expect(later!.answer.kind).toBe('described');
    expect(scheduleReadiness(later!, Date.now())).toEqual({ ok: true, detail: 'present (paused)' });
    expect(calls).toHaveLength(1);
  });

  test('when a Schedule was never seen and Temporal does not answer, then it is not ready, with the reason', async () => {
    const { client } = scriptedClient();
    const [s] = await watchSchedules(client, ['recon-daily'], { timeoutMs: 10 }).look();
    expect(scheduleReadiness(s!, Date.now())).toEqual({ ok: false, detail: 'no answer within 10 ms' });
  });

  test('when the last sighting is older than the grace, then an unanswered describe is not ready', async () => {
    const { client } = scriptedClient();
    const seenAt = Date.now() - SCHEDULE_SEEN_GRACE_MS - 1_000;
    const [s] = await watchSchedules(client, ['recon-daily'], { timeoutMs: 10, seenAt }).look();
    expect(scheduleReadiness(s!, Date.now()).ok).toBe(false);
  });

  test('when Temporal says the Schedule is not found, then it is missing and not ready even just after start-up saw it', async () => {
    const { client, pending } = scriptedClient();
    const watch = watchSchedules(client, ['payout-sweep'], { timeoutMs: 1_000, seenAt: Date.now() });
    const look = watch.look();
    pending[0]!.reject(new ScheduleNotFoundError('schedule not found', 'payout-sweep'));
    const [s] = await look;
    expect(s).toEqual({ id: 'payout-sweep', answer: { kind: 'missing' }, lastSeenAt: null });
    expect(scheduleReadiness(s!, Date.now())).toEqual({ ok: false, detail: expect.stringMatching(/^missing/) });
  });

  test('when answers are fresh, then they are reused; past freshMs the Schedule is described again', async () => {
    const { client, calls, pending } = scriptedClient();
    let now = 1_000_000;
    const watch = watchSchedules(client, ['a', 'b'], { timeoutMs: 1_000, freshMs: 5_000, now: () => now });
    const first = watch.look();
    for (const p of pending.splice(0)) p.resolve(present);
    await first;
    now += 4_999;
    await watch.look();
    expect(calls).toEqual(['a', 'b']);
    now += 1;
    const third = watch.look();
    for (const p of pending.splice(0)) p.resolve(present);
    expect((await third).map((s) => [s.id, s.answer.kind, s.lastSeenAt])).toEqual([['a', 'described', now], ['b', 'described', now]]);
    expect(calls).toEqual(['a', 'b', 'a', 'b']);
  });

  test('when a describe fails with another error, then the sighting is unanswered with its message, and the Schedule last seen stays', async () => {
    const { client, pending } = scriptedClient();
    const seenAt = Date.now() - 1_000;
    const look = watchSchedules(client, ['a'], { timeoutMs: 1_000, seenAt }).look();
    pending[0]!.reject(new Error('14 UNAVAILABLE: connection refused'));
    const [s] = await look;
    expect(s).toEqual({ id: 'a', answer: { kind: 'unanswered', error: '14 UNAVAILABLE: connection refused' }, lastSeenAt: seenAt });
    expect(scheduleReadiness(s!, Date.now()).ok).toBe(true);
  });
});
