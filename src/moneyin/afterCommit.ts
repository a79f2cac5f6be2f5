/** Work that must happen only after a transaction has committed (start a payout, ask the gateway
 * for a refund). It never undoes the commit: a failure is logged, and a sweep (or the outbox
 * drainer) finds what is left. */
import { logger } from '../logger';

export interface AfterCommit {
  /** What it does, for the log line when it fails. */
  what: string;
  run: () => Promise<void>;
  /** Set when a durable row written in the same transaction already guarantees the work (the
   * payouts outbox): the step is only the first, fastest try, so a webhook need not wait for it —
   * it runs after the reply, and a process that dies first loses nothing. `skipped` hands the row
   * over at once when the step is not run at all (too many already in flight). */
  detachable?: { skipped: () => Promise<void> };
}

export async function runAfterCommit(actions: AfterCommit[]): Promise<void> {
  for (const action of actions) {
    try {
      await action.run();
    } catch (err) {
      logger.error({ err, what: action.what }, 'after-commit step failed; the sweep will pick it up');
    }
  }
}

/** Runs the steps but waits at most `budgetMs` for them (a webhook must answer within 5 s); the
 * rest carries on in the background. */
export async function runAfterCommitWithin(actions: AfterCommit[], budgetMs: number): Promise<void> {
  if (actions.length === 0) return;
  let timer: NodeJS.Timeout | undefined;
  const budget = new Promise<void>((resolve) => { timer = setTimeout(resolve, budgetMs); });
  try {
    await Promise.race([runAfterCommit(actions), budget]);
  } finally {
    clearTimeout(timer);
  }
}

/** Detached steps in flight in this process; past the cap a step is not run but handed over. */
export const MAX_DETACHED_IN_FLIGHT = 32;
let detachedInFlight = 0;

/** Starts every detachable step without waiting for it (each is called before this returns, so
 * its first synchronous part has run), and returns the others for the caller to run. */
export function detachAfterCommit(actions: AfterCommit[], maxInFlight: number = MAX_DETACHED_IN_FLIGHT): AfterCommit[] {
  const rest: AfterCommit[] = [];
  for (const action of actions) {
    if (!action.detachable) { rest.push(action); continue; }
    const onFailure = (err: unknown) => logger.warn({ err, what: action.what }, 'detached after-commit step failed; its outbox row stays for the drainer');
    if (detachedInFlight >= maxInFlight) {
      action.detachable.skipped().catch(onFailure);
      continue;
    }
    detachedInFlight += 1;
    let running: Promise<void>;
    try {
      running = action.run();
    } catch (err) {
      running = Promise.reject(err);
    }
    running.catch(onFailure).finally(() => { detachedInFlight -= 1; });
  }
  return rest;
}
