/** Contract of the settlement run workflow: input, progress, the query and the signal the API sends
 * after each decision on a batch line. Imported by the workflow, the activities, the API, the CLI and
 * the tests; no Node modules (the workflow bundle imports it). */
import { defineQuery, defineSignal } from '@temporalio/workflow';

export const SETTLEMENT_WORKFLOW_TYPE = 'settlementRunWorkflow';

export interface SettlementRunInput {
  /** IST days, inclusive: lines made in them, and older lines still open (carried forward). */
  from: string;
  to: string;
  /** Only these vendors (null: every vendor with open lines). */
  vendorIds: string[] | null;
  /** Who started the run, for the audit (`key:<name>` and the person). */
  actor: string;
}

export interface SettlementProgress {
  phase: 'freezing' | 'awaiting_bank' | 'closed' | 'cancelled';
  batchId: string | null;
  lines: number;
  open: number;
  paid: number;
  failed: number;
  cancelled: number;
  amountPaise: number;
  paidPaise: number;
  /** Vendors left out of the batch (net not positive, or no bank details), their lines still open. */
  skippedVendors: number;
}

export const settlementProgressQuery = defineQuery<SettlementProgress>('settlementProgress');
/** Sent after a line is recorded paid or failed, or the batch cancelled: the run re-reads its batch. */
export const settlementChangedSignal = defineSignal('settlementChanged');
