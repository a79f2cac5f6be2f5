/** Contract of the missed-webhook sweep: its Schedule id, workflow type, input and result. */

export const MISSED_WEBHOOK_SCHEDULE_ID = 'missed-webhook-sweep';
export const MISSED_WEBHOOK_SWEEP_WORKFLOW_TYPE = 'missedWebhookSweepWorkflow';

/** Workflow id for a run started by hand (tests, ops); scheduled runs get the schedule's ids. */
export const missedWebhookSweepWorkflowId = (tag: string): string => `missed-webhook-sweep-${tag}`;

export interface MissedWebhookSweepInput {
  /** Only orders older than this are asked about; default MISSED_WEBHOOK_SWEEP_AGE_MS. */
  olderThanMs?: number;
  /** How many orders (and refund requests) one run looks at; the next run continues. */
  batchSize?: number;
}

export interface MissedWebhookSweepResult {
  /** Gateway orders whose payments were fetched. */
  examined: number;
  /** Captured payments found (each went through markPaid or the top-up credit; most change nothing). */
  capturedFound: number;
  /** Gateway orders that could not be checked this run (the next run tries again). */
  failed: number;
  /** Refund requests asked again after an unknown outcome. */
  refundsRetried: number;
}
