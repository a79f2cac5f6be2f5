/** Builds every activity with its dependencies injected; the worker builds the dependencies once. */
import type { Config } from '../config/config';
import type { Db } from '../db/pool';
import type { Gateway } from '../gateway/types';
import { createProbeActivities } from './probe';
import { createPayoutActivities } from './payout';
import { createPayoutSweepActivities } from './payoutSweep';
import { createMoneyInSweepActivities } from './moneyinSweep';
import { createReconActivities } from './recon';
import { createSplitTransferActivities } from './splitTransfer';
import type { PayoutStarter } from '../payouts/starter';

export interface ActivityDeps {
  db: Db;
  gateway: Gateway;
  config: Config;
  /** Injected so tests can move time; defaults to the wall clock. */
  now?: () => Date;
  /** Money in: asks the payout layer to start after an order becomes paid (default: leave it for the sweep). */
  payoutStarter?: PayoutStarter;
}

export function createActivities(deps: ActivityDeps) {
  return {
    ...createProbeActivities(deps),
    ...createPayoutActivities(deps),
    ...createPayoutSweepActivities(deps),
    ...createMoneyInSweepActivities(deps),
    ...createReconActivities(deps),
    ...createSplitTransferActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
