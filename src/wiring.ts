/** How the production pieces are put together, once: the gateway, the payout seam and the recon
 * starter for the worker and the API, and the Schedules the worker owns. Used by `npm run dev`,
 * `npm run worker` and `npm run api`. */
import type { Client } from '@temporalio/client';
import type { ActivityDeps } from './activities/deps';
import type { ApiDeps } from './api/deps';
import type { Config } from './config/config';
import { MISSED_WEBHOOK_SCHEDULE_ID } from './contracts/missedWebhookSweep';
import { RECON_SCHEDULE_ID } from './contracts/recon';
import { SPLIT_TRANSFER_SCHEDULE_ID } from './contracts/splitTransfer';
import { PAYOUT_SWEEP_SCHEDULE_ID } from './contracts/sweep';
import type { Db } from './db/pool';
import { createGateway } from './gateway';
import { ensureMissedWebhookSchedule } from './moneyin/schedule';
import { ensureSplitTransferSchedule } from './moneyin/splitTransfers';
import { ensurePayoutSweepSchedule } from './payouts/sweepSchedule';
import { temporalPayoutStarter } from './payouts/temporalStarter';
import { ensureReconSchedule, temporalReconStarter } from './recon/temporal';
import type { EnsuredSchedule } from './temporal/schedules';

export function productionDeps(config: Config, db: Db, client: Client): { activities: ActivityDeps; api: ApiDeps } {
  const gateway = createGateway(config);
  const payoutStarter = temporalPayoutStarter(client, config.TEMPORAL_TASK_QUEUE, db, { tracesUiUrl: config.TRACES_UI_URL, consoleUrl: config.PUBLIC_URL });
  return {
    activities: { db, config, gateway, payoutStarter },
    api: { config, db, gateway, payoutStarter, temporal: client, reconStarter: temporalReconStarter(client, config.TEMPORAL_TASK_QUEUE) },
  };
}

/** Every Schedule the system needs; the worker's readiness checks that each exists. */
export const SCHEDULE_IDS = [PAYOUT_SWEEP_SCHEDULE_ID, MISSED_WEBHOOK_SCHEDULE_ID, SPLIT_TRANSFER_SCHEDULE_ID, RECON_SCHEDULE_ID] as const;

/** Creates every Schedule, or updates one whose spec, action or policies differ from config. */
export async function ensureSchedules(client: Client, config: Config): Promise<Record<(typeof SCHEDULE_IDS)[number], EnsuredSchedule>> {
  return {
    [PAYOUT_SWEEP_SCHEDULE_ID]: await ensurePayoutSweepSchedule(client, config),
    [MISSED_WEBHOOK_SCHEDULE_ID]: await ensureMissedWebhookSchedule(client, config),
    [SPLIT_TRANSFER_SCHEDULE_ID]: await ensureSplitTransferSchedule(client, config),
    [RECON_SCHEDULE_ID]: await ensureReconSchedule(client, config),
  } as Record<(typeof SCHEDULE_IDS)[number], EnsuredSchedule>;
}
