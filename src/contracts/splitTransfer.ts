/** Contract of the split-transfer sweep (issue 10 item 4): its Schedule id, workflow type, input and
 * result. The sweep follows every Route split still `expected` with the provider until its transfer
 * is final; see src/moneyin/splitTransfers.ts for why it is a Schedule and not a workflow per split. */

export const SPLIT_TRANSFER_SCHEDULE_ID = 'split-transfer-sweep';
export const SPLIT_TRANSFER_SWEEP_WORKFLOW_TYPE = 'splitTransferSweepWorkflow';

/** Workflow id for a run started by hand (tests, ops); scheduled runs get the schedule's ids. */
export const splitTransferSweepWorkflowId = (tag: string): string => `${SPLIT_TRANSFER_SCHEDULE_ID}-${tag}`;

/** The patch that put the provider read on the provider budget's reads queue (issue 22). */
export const SPLIT_SWEEP_BUDGET_PATCH = 'split-transfer-sweep-provider-budget';

export interface SplitTransferSweepInput {
  /** Splits asked about per batch (default 100); a run takes batches until none is left unchecked. */
  batchSize?: number;
  /** Upper bound on batches per run (default 10); the next run continues with the least recently checked. */
  maxBatches?: number;
}

/** Where one split stands after a check. */
export type SplitCheckStatus = 'expected' | 'processed' | 'failed' | 'reversed' | 'gone';

export interface SplitTransferSweepResult {
  checked: number;
  /** Became final this run. */
  processed: number;
  failed: number;
  /** Still not final (pending, or failed while Razorpay retries). */
  stillOpen: number;
  /** Could not be checked this run (the provider did not answer); the next run asks again. */
  errors: number;
}
