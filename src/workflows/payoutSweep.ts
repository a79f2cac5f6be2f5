/** payoutSweepWorkflow: run by the `payout-sweep` Schedule (overlap SKIP) and at once when transfers
 * resume. Walks open payouts oldest first in batches and (re)starts their payout workflows; does
 * nothing while transfers are paused. */
import { proxyActivities } from '@temporalio/workflow';
import type { DuePayoutBatch, PayoutSweepActivities } from '../activities/payoutSweep';
import type { PayoutSweepInput, PayoutSweepResult } from '../contracts/sweep';

// The activity heartbeats per payout: a sweep held by a worker that died is retried within the
// heartbeat timeout, not after startToClose; with overlap SKIP it would otherwise hold back every
// sweep for two minutes (found by the fault campaign: payouts of terminated runs waited that long).
const { startDuePayouts } = proxyActivities<PayoutSweepActivities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 5 },
});

export async function payoutSweepWorkflow(input: PayoutSweepInput = {}): Promise<PayoutSweepResult> {
  const batchSize = input.batchSize ?? 100;
  const result: PayoutSweepResult = { paused: false, examined: 0, started: 0, batches: 0 };
  let after: string | null = null;
  for (;;) {
    const batch: DuePayoutBatch = await startDuePayouts({ after, limit: batchSize });
    if (batch.paused) return { ...result, paused: true };
    result.batches += 1;
    result.examined += batch.examined;
    result.started += batch.started;
    if (!batch.cursor) return result;
    after = batch.cursor;
  }
}
