/** What the worker process polls besides its task queues, started the same way by `npm run worker`,
 * `npm run dev` and the test stacks: the payouts outbox (payout starts a webhook committed) and the
 * refunds announced by webhooks whose read failed (moneyin/refundHints.ts). */
import type { Db } from '../db/pool';
import type { Gateway } from '../gateway/types';
import { startRefundHintFollower } from '../moneyin/refundHintFollower';
import { startOutboxDrainer, type StartPacing } from '../outbox/drainer';
import type { PayoutStarter } from '../payouts/starter';

export interface WorkerPollers { stop(): Promise<void> }

export function startWorkerPollers(deps: {
  db: Db; gateway: Gateway; payoutStarter: PayoutStarter; attemptCap: number;
  pacing?: StartPacing; outboxPollMs?: number; refundPollMs?: number;
}): WorkerPollers {
  const drainer = startOutboxDrainer({ db: deps.db, payoutStarter: deps.payoutStarter, ...(deps.pacing ? { pacing: deps.pacing } : {}), ...(deps.outboxPollMs ? { pollMs: deps.outboxPollMs } : {}) });
  const refunds = startRefundHintFollower({ db: deps.db, gateway: deps.gateway, attemptCap: deps.attemptCap, ...(deps.refundPollMs ? { pollMs: deps.refundPollMs } : {}) });
  return {
    async stop() {
      await Promise.all([drainer.stop(), refunds.stop()]);
    },
  };
}
