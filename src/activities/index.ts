/** Builds every activity with its dependencies injected; the worker builds the dependencies once. */
import type { ActivityDeps } from './deps';
import { createProbeActivities } from './probe';
import { createPayoutActivities } from './payout';
import { createPayoutSweepActivities } from './payoutSweep';
import { createMoneyInSweepActivities } from './moneyinSweep';
import { createReconActivities } from './recon';
import { createSplitTransferActivities } from './splitTransfer';
import { createSettlementActivities } from './settlement';

export function createActivities(deps: ActivityDeps) {
  return {
    ...createProbeActivities(deps),
    ...createPayoutActivities(deps),
    ...createPayoutSweepActivities(deps),
    ...createMoneyInSweepActivities(deps),
    ...createReconActivities(deps),
    ...createSplitTransferActivities(deps),
    ...createSettlementActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
