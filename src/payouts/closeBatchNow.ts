/** Ops close an open payout batch before its cutoff (the API and the console): the batch must exist
 * and be open; its run closes and pays it; orders arriving after go to the next window. */
import type { Client } from '@temporalio/client';
import { AppError } from '../appError';
import type { Db } from '../db/pool';
import { logger } from '../logger';
import { signalCloseBatchNow } from './batchStarter';
import { batchOfPayoutKey, type BatchOrder, type BatchView } from './batchView';

export async function closeBatchNow(deps: { db: Pick<Db, 'query'>; temporal?: Client | null; taskQueue: string }, batchId: string, by: { actor: string; reason: string }): Promise<BatchView & { orders: BatchOrder[] }> {
  const batch = await batchOfPayoutKey(deps.db, batchId);
  if (!batch) throw new AppError(404, 'batch_not_found', `no batch ${batchId}`);
  if (batch.status !== 'open') throw new AppError(409, 'batch_not_open', `batch ${batchId} closed at ${batch.closedAt}`);
  if (!deps.temporal) throw new AppError(503, 'temporal_unavailable', 'this API has no Temporal connection to reach the batch\'s run');
  await signalCloseBatchNow(deps.temporal, deps.taskQueue, batch, by.actor);
  logger.info({ batchId, actor: by.actor, reason: by.reason }, 'ops closed a batch before its cutoff');
  return batch;
}
