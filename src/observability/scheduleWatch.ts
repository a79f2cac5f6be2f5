/** One process's view of the Temporal Schedules it depends on, shared by /ready and /metrics.
 *
 * Describing a Schedule is a query the server answers by running the scheduler workflow, so a
 * server busy with a capture burst can take seconds per describe. Asking four of them on every
 * readiness probe and every scrape adds to that load, and a restarted worker stayed "not ready" for
 * minutes although its own start-up had just created or confirmed every Schedule (found by the
 * 1,000-order campaign, seed 20261209). So: one describe per Schedule in flight at a time, a fresh
 * answer reused for `freshMs`, a slow one awaited for `timeoutMs` and then left to land in the
 * background, and only "not found" taken as proof that a Schedule is gone. */
import { ScheduleNotFoundError, type Client, type ScheduleDescription } from '@temporalio/client';

export type ScheduleAnswer =
  | { kind: 'described'; description: Pick<ScheduleDescription, 'spec' | 'state' | 'info'> }
  | { kind: 'missing' }
  | { kind: 'unanswered'; error: string };

export interface ScheduleSighting {
  id: string;
  answer: ScheduleAnswer;
  /** When the Schedule was last known to exist (ms since the epoch), or null. */
  lastSeenAt: number | null;
}

export interface ScheduleWatch {
  readonly ids: readonly string[];
  look(): Promise<ScheduleSighting[]>;
}

export interface ScheduleWatchOptions {
  timeoutMs?: number;
  freshMs?: number;
  /** The caller has just seen every Schedule exist (the worker's start-up ensured them). */
  seenAt?: number;
  now?: () => number;
}

/** How long a Schedule seen present stays "ready" while Temporal does not answer a describe. */
export const SCHEDULE_SEEN_GRACE_MS = 5 * 60_000;

export function watchSchedules(client: Pick<Client, 'schedule'>, ids: readonly string[], opts: ScheduleWatchOptions = {}): ScheduleWatch {
  const timeoutMs = opts.timeoutMs ?? 2_000;
  const freshMs = opts.freshMs ?? 5_000;
  const now = opts.now ?? Date.now;
  const state = new Map(ids.map((id) => [id, {
    lastSeenAt: opts.seenAt ?? null as number | null,
    last: null as { answer: ScheduleAnswer; at: number } | null,
    inFlight: null as Promise<ScheduleAnswer> | null,
  }]));

  const describe = (id: string): Promise<ScheduleAnswer> => {
    const s = state.get(id)!;
    s.inFlight ??= client.schedule.getHandle(id).describe()
      .then((description): ScheduleAnswer => ({ kind: 'described', description }))
      .catch((err: unknown): ScheduleAnswer => (err instanceof ScheduleNotFoundError
        ? { kind: 'missing' }
        : { kind: 'unanswered', error: err instanceof Error ? err.message : String(err) }))
      .then((answer) => {
        s.last = { answer, at: now() };
        if (answer.kind === 'described') s.lastSeenAt = s.last.at;
        if (answer.kind === 'missing') s.lastSeenAt = null;
        s.inFlight = null;
        return answer;
      });
    return s.inFlight;
  };

  const lookAt = async (id: string): Promise<ScheduleSighting> => {
    const s = state.get(id)!;
    const answer = s.last && now() - s.last.at < freshMs ? s.last.answer : await withinTimeout(describe(id), timeoutMs);
    return { id, answer, lastSeenAt: s.lastSeenAt };
  };

  return { ids, look: () => Promise.all(ids.map(lookAt)) };
}

async function withinTimeout(answer: Promise<ScheduleAnswer>, ms: number): Promise<ScheduleAnswer> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<ScheduleAnswer>((resolve) => {
    timer = setTimeout(() => resolve({ kind: 'unanswered', error: `no answer within ${ms} ms` }), ms);
  });
  try {
    return await Promise.race([answer, late]);
  } finally {
    clearTimeout(timer);
  }
}
