/** Reads again the refunds whose webhook's fetch failed (refundHints.ts), in the worker process: every
 * `pollMs`, the due hints are fetched from Razorpay one by one and recorded as the webhook would have
 * (outsideRefunds.ts); a refused read waits its backoff. */
import { logger } from '../logger';
import { followOutsideRefund, type OutsideRefundDeps } from './outsideRefunds';
import { claimDueRefundHints, refundHintReadFailed } from './refundHints';

export interface RefundHintFollower { stop(): Promise<void> }

/** One pass: every due hint read (or its failure recorded). Returns how many were read. */
export async function followDueRefundHints(deps: OutsideRefundDeps, limit = 20): Promise<number> {
  let read = 0;
  for (const refundId of await claimDueRefundHints(deps.db, limit)) {
    try {
      await followOutsideRefund(deps, refundId);
      read += 1;
    } catch (err) {
      logger.warn({ err, refundId }, 'reading a refund announced by a webhook failed again; it is read after a backoff, and its order stays held');
      await refundHintReadFailed(deps.db, refundId, err).catch((e: unknown) => logger.warn({ err: e, refundId }, 'recording the failed refund read failed'));
    }
  }
  return read;
}

export function startRefundHintFollower(deps: OutsideRefundDeps & { pollMs?: number }): RefundHintFollower {
  let stopped = false;
  let pass: Promise<unknown> = Promise.resolve();
  const tick = () => {
    if (stopped) return;
    pass = followDueRefundHints(deps)
      .catch((err: unknown) => logger.warn({ err }, 'refund hint follower: a pass failed; the next one tries again'))
      .finally(() => { if (!stopped) timer = setTimeout(tick, deps.pollMs ?? 2_000); });
  };
  let timer: NodeJS.Timeout = setTimeout(tick, deps.pollMs ?? 2_000);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await pass;
    },
  };
}
