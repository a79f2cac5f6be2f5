/** Contract of the batch workflow (issue 22 item 4): one run per batch, id `payout-<batchId>` (the
 * payout key of the batch's own payout row, so the ops API's signals and the Web UI's links reach it
 * as they reach an order's run). Every order that joins makes sure the run exists with a start that
 * uses the running one; members are rows, never signals (issue 36 item 5: payouts/batchStarter.ts). */
import { defineSignal } from '@temporalio/workflow';
import { PAYOUT_START_POLICIES, payoutWorkflowId } from './payout';

export const PAYOUT_BATCH_WORKFLOW_TYPE = 'payoutBatchWorkflow';

/** Every batch id starts so (domain/batchWindow.ts); no order id does (ours are `ord_…`). */
export const BATCH_ID_PREFIX = 'batch_';
export const isBatchKey = (key: string): boolean => key.startsWith(BATCH_ID_PREFIX);

/** A run started for a decision or a wake on a batch that has closed (every batch that has a payout
 * row to decide on has): the run finds the batch's payout and does not wait for a cutoff. */
export const CLOSED_BATCH_CUTOFF = new Date(0).toISOString();

export const payoutBatchWorkflowId = (batchId: string): string => payoutWorkflowId(batchId);

/** The same policies as an order's run: one live run; a failed or terminated one may be followed. */
export const PAYOUT_BATCH_START_POLICIES = PAYOUT_START_POLICIES;

export interface PayoutBatchWorkflowInput {
  batchId: string;
  /** When the window closes (ISO): the run sleeps until then, then closes the batch and pays it. */
  cutoffAt: string;
}

/** Sent with the start by every order that joined before issue 36 item 5 (a signal per member). No
 * longer sent; still handled, so runs of that time replay and joiners of an older build in a rolling
 * deploy are heard. */
export const batchOrderJoinedSignal = defineSignal<[{ orderId: string }]>('batchOrderJoined');

/** Ops close a batch before its cutoff (the console and the CLI): the run closes it and pays now. */
export const closeBatchNowSignal = defineSignal<[{ actor: string }]>('closeBatchNow');
