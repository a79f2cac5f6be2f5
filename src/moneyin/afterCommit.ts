/** Work that must happen only after a transaction has committed (start a payout, ask the gateway
 * for a refund). It never undoes the commit: a failure is logged, and a sweep (or the outbox
 * drainer) finds what is left. */
import { logger } from '../logger';

export interface AfterCommit {
  /** What it does, for the log line when it fails. */
  what: string;
  run: () => Promise<void>;
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
