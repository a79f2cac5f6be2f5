/** splitTransferSweepWorkflow: run by the `split-transfer-sweep` Schedule (overlap SKIP, every
 * SPLIT_TRANSFER_POLL_MS). Every Route split still `expected` is followed with the provider until its
 * transfer is final, least recently checked first, in batches; one split the provider cannot answer
 * for does not stop the rest. Why a Schedule rather than a workflow per split: see
 * src/moneyin/splitTransfers.ts. Since SPLIT_SWEEP_BUDGET_PATCH the provider read runs on the provider
 * budget's reads queue (issue 22); runs recorded before it replay on the workflow's own queue. */
import { patched, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { SplitTransferActivities } from '../activities/splitTransfer';
import { SPLIT_SWEEP_BUDGET_PATCH, type SplitTransferSweepInput, type SplitTransferSweepResult } from '../contracts/splitTransfer';
import { providerTaskQueue } from '../contracts/taskQueues';

/** Reads and idempotent writes: retry a few times. */
const readRetries = {
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '20 seconds', maximumAttempts: 4 },
} as const;
const databaseRead = proxyActivities<SplitTransferActivities>(readRetries);

export async function splitTransferSweepWorkflow(input: SplitTransferSweepInput = {}): Promise<SplitTransferSweepResult> {
  const limit = input.batchSize ?? 100;
  const maxBatches = input.maxBatches ?? 10;
  const result: SplitTransferSweepResult = { checked: 0, processed: 0, failed: 0, stillOpen: 0, errors: 0 };
  // A split checked in this run moves to the back of the queue (checked_at), so a batch never
  // returns one twice; a run ends when a batch comes back short, or after maxBatches.
  const seen = new Set<string>();
  const providerRead = patched(SPLIT_SWEEP_BUDGET_PATCH)
    ? proxyActivities<SplitTransferActivities>({ ...readRetries, taskQueue: providerTaskQueue(workflowInfo().taskQueue, 'reads') })
    : databaseRead;
  for (let batch = 0; batch < maxBatches; batch++) {
    const orderIds = (await databaseRead.listSplitsAwaitingTransfer({ limit })).filter((id) => !seen.has(id));
    for (const orderId of orderIds) {
      seen.add(orderId);
      const status = await providerRead.followSplitTransfer(orderId);
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
