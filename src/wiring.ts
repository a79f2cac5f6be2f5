/** How the production pieces are put together, once: the gateway, the payout seam and the recon
 * starter for the worker and the API, and the Schedules. Used by `npm run dev`, `npm run worker`
 * and `npm run api`. */
import type { Client } from '@temporalio/client';
import type { ActivityDeps } from './activities';
import type { ApiDeps } from './api/server';
import type { Config } from './config/config';
import type { Db } from './db/pool';
import { createGateway } from './gateway';
import { ensureMissedWebhookSchedule } from './moneyin/schedule';
import { ensurePayoutSweepSchedule } from './payouts/sweepSchedule';
import { temporalPayoutStarter } from './payouts/temporalStarter';
import { ensureReconSchedule, temporalReconStarter } from './recon/temporal';

export function productionDeps(config: Config, db: Db, client: Client): { activities: ActivityDeps; api: ApiDeps } {
  const gateway = createGateway(config);
  const payoutStarter = temporalPayoutStarter(client, config.TEMPORAL_TASK_QUEUE);
  return {
    activities: { db, config, gateway, payoutStarter },
    api: { config, db, gateway, payoutStarter, temporal: client, reconStarter: temporalReconStarter(client, config.TEMPORAL_TASK_QUEUE) },
  };
}

/** Creates (or brings up to date) every Schedule; safe to call at each start-up. */
export async function ensureSchedules(client: Client, config: Config): Promise<void> {
  await ensureMissedWebhookSchedule(client, config);
  await ensurePayoutSweepSchedule(client, config);
  await ensureReconSchedule(client, config);
}
