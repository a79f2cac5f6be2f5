/** Settlement run activities: database reads and one idempotent write (the freeze, keyed by the
 * workflow run), so retried freely. No money moves here: the bank pays the file finance uploads. */
import type { SettlementProgress, SettlementRunInput } from '../contracts/settlement';
import type { Db } from '../db/pool';
import { freezeBatch, readBatch, type SettlementBatchView } from '../settlement/repository';

export function progressOf(batch: SettlementBatchView): SettlementProgress {
  const phase = batch.status === 'open' ? 'awaiting_bank' : batch.status;
  const { lines, open, paid, failed, cancelled, amountPaise, paidPaise } = batch.totals;
  return { phase, batchId: batch.id, lines, open, paid, failed, cancelled, amountPaise, paidPaise, skippedVendors: batch.skipped.length };
}

export function createSettlementActivities({ db }: { db: Db }) {
  return {
    async freezeSettlementBatch(input: SettlementRunInput & { runId: string; workflowId: string }): Promise<SettlementProgress> {
      return progressOf(await freezeBatch(db, input));
    },
    async readSettlementProgress(input: { batchId: string }): Promise<SettlementProgress> {
      const batch = await readBatch(db, input.batchId);
      if (!batch) throw new Error(`settlement batch ${input.batchId} is gone`);
      return progressOf(batch);
    },
  };
}
