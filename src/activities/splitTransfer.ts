/** Activities of the split-transfer sweep: list the splits still `expected` and follow one with the
 * provider. Both are reads plus idempotent DB writes (recorded forward only), so they may retry. */
import { GatewayCallError } from '../gateway/types';
import type { SplitCheckStatus } from '../contracts/splitTransfer';
import { followSplitTransfer, splitsAwaitingTransfer } from '../moneyin/splitTransfers';
import type { ActivityDeps } from './deps';

export function createSplitTransferActivities(deps: ActivityDeps) {
  const now = deps.now ?? (() => new Date());
  return {
    async listSplitsAwaitingTransfer(input: { limit: number }): Promise<string[]> {
      return splitsAwaitingTransfer(deps.db, input.limit);
    },
    /** `unanswered`: the provider could not be asked this time (logged by the adapter); the next run asks again. */
    async followSplitTransfer(orderId: string): Promise<SplitCheckStatus | 'unanswered'> {
      try {
        return await followSplitTransfer(deps, orderId, now());
      } catch (err) {
        if (err instanceof GatewayCallError) return 'unanswered';
        throw err;
      }
    },
  };
}

export type SplitTransferActivities = ReturnType<typeof createSplitTransferActivities>;
