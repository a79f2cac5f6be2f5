/** The payout sweep's activity: finds paid orders of the lookback window whose payout still needs a
 * run and (re)starts payoutWorkflow for each. Starting is USE_EXISTING, so a payout whose run is alive
 * is left alone, and `processing`/`accepted` rows whose run is gone (terminated from the Web UI) get
 * a new run, which starts by resolving. */
import { Context } from '@temporalio/activity';
import type { Config } from '../config/config';
import type { Db } from '../db/pool';
import { logger } from '../logger';
import { transfersPaused } from '../payouts/repository';
import { startPayoutWorkflow } from '../payouts/temporalStarter';

export interface DuePayoutBatch {
  paused: boolean;
  examined: number;
  started: number;
  lastOrderId: string | null;
}

export function createPayoutSweepActivities({ db, config }: { db: Db; config: Config }) {
  return {
    async startDuePayouts(input: { afterOrderId: string | null; limit: number }): Promise<DuePayoutBatch> {
      if (await transfersPaused(db)) return { paused: true, examined: 0, started: 0, lastOrderId: null };
      const { rows } = await db.query<{ order_id: string }>(
        `SELECT p.order_id
         FROM payouts p JOIN orders o ON o.id = p.order_id
         WHERE o.status = 'paid' AND o.paid_at > now() - make_interval(hours => $1)
           AND p.status IN ('pending', 'failed', 'processing', 'accepted')
           AND ($2::text IS NULL OR p.order_id > $2)
         ORDER BY p.order_id
         LIMIT $3`,
        [config.PAYOUT_SWEEP_LOOKBACK_HOURS, input.afterOrderId, input.limit],
      );
      const { client, info } = Context.current();
      let started = 0;
      for (const { order_id } of rows) {
        try {
          if ((await startPayoutWorkflow(client, info.taskQueue, order_id)) === 'running') started += 1;
        } catch (err) {
          logger.error({ err, orderId: order_id }, 'sweep could not start a payout workflow');
        }
      }
      return { paused: false, examined: rows.length, started, lastOrderId: rows[rows.length - 1]?.order_id ?? null };
    },
  };
}

export type PayoutSweepActivities = ReturnType<typeof createPayoutSweepActivities>;
