/** splitTransferSweepWorkflow: run by the `split-transfer-sweep` Schedule (overlap SKIP, every
 * SPLIT_TRANSFER_POLL_MS). Every Route split still `expected` is followed with the provider until its
 * transfer is final, least recently checked first, in batches; one split the provider cannot answer
 * for does not stop the rest. Why a Schedule rather than a workflow per split: see
 * src/moneyin/splitTransfers.ts. */
import { proxyActivities } from '@temporalio/workflow';
import type { SplitTransferActivities } from '../activities/splitTransfer';
import type { SplitTransferSweepInput, SplitTransferSweepResult } from '../contracts/splitTransfer';

/** Reads and idempotent writes: retry a few times. */
const providerAndDatabaseRead = proxyActivities<SplitTransferActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '20 seconds', maximumAttempts: 4 },
});

export async function splitTransferSweepWorkflow(input: SplitTransferSweepInput = {}): Promise<SplitTransferSweepResult> {
  const limit = input.batchSize ?? 100;
  const maxBatches = input.maxBatches ?? 10;
  const result: SplitTransferSweepResult = { checked: 0, processed: 0, failed: 0, stillOpen: 0, errors: 0 };
  // A split checked in this run moves to the back of the queue (checked_at), so a batch never
  // returns one twice; a run ends when a batch comes back short, or after maxBatches.
  const seen = new Set<string>();
  for (let batch = 0; batch < maxBatches; batch++) {
    const orderIds = (await providerAndDatabaseRead.listSplitsAwaitingTransfer({ limit })).filter((id) => !seen.has(id));
    for (const orderId of orderIds) {
      seen.add(orderId);
      const status = await providerAndDatabaseRead.followSplitTransfer(orderId);
      result.checked += 1;
      if (status === 'processed') result.processed += 1;
      else if (status === 'failed') result.failed += 1;
      else if (status === 'expected') result.stillOpen += 1;
      else if (status === 'unanswered') result.errors += 1;
    }
    if (orderIds.length < limit) break;
  }
  return result;
}
