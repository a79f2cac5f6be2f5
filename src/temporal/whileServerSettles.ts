/** A Temporal cluster whose persistence or frontend has just restarted answers "Namespace not
 * found" (its namespace registry is reloading) or UNAVAILABLE for a few seconds. A boot step that
 * meets one (a worker ensuring its Schedules) waits and tries again instead of exiting; any other
 * error, or one past the deadline, is thrown as it came. */
import { NamespaceNotFoundError } from '@temporalio/client';

const UNAVAILABLE = 14;

export function isTransientServerError(err: unknown): boolean {
  if (err instanceof NamespaceNotFoundError) return true;
  const code = (err as { code?: unknown } | null)?.code ?? (err as { cause?: { code?: unknown } } | null)?.cause?.code;
  return code === UNAVAILABLE;
}

export async function whileServerSettles<T>(step: () => Promise<T>, opts: {
  deadlineMs?: number;
  pauseMs?: number;
  onRetry?: (err: unknown) => void;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
} = {}): Promise<T> {
  const now = opts.now ?? Date.now;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const deadline = now() + (opts.deadlineMs ?? 60_000);
  for (;;) {
    try {
      return await step();
    } catch (err) {
      if (!isTransientServerError(err) || now() >= deadline) throw err;
      opts.onRetry?.(err);
      await sleep(opts.pauseMs ?? 1_000);
    }
  }
}
