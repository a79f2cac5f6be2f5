/** Contract of the payout sweep: a Temporal Schedule runs payoutSweepWorkflow every few minutes
 * (overlap SKIP); each run (re)starts payoutWorkflow for payouts that need one. */

export const PAYOUT_SWEEP_WORKFLOW_TYPE = 'payoutSweepWorkflow';
export const PAYOUT_SWEEP_SCHEDULE_ID = 'payout-sweep';

export interface PayoutSweepInput {
  /** Payouts examined per batch (the issue asks for 100). */
  batchSize?: number;
}

export interface PayoutSweepResult {
  paused: boolean;
  examined: number;
  started: number;
  batches: number;
}
