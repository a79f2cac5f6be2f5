/** Contract of the missed-webhook sweep: its Schedule id, workflow type, input and result. */

export const MISSED_WEBHOOK_SCHEDULE_ID = 'missed-webhook-sweep';
export const MISSED_WEBHOOK_SWEEP_WORKFLOW_TYPE = 'missedWebhookSweepWorkflow';

/** Workflow id for a run started by hand (tests, ops); scheduled runs get the schedule's ids. */
export const missedWebhookSweepWorkflowId = (tag: string): string => `missed-webhook-sweep-${tag}`;

/** The patch that made the sweep fair (issue 10 item 6): runs recorded before it replay without it. */
export const FAIR_SWEEP_PATCH = 'missed-webhook-sweep-fair-batch-and-expiry';
/** The patch that put its Razorpay calls on the provider budget's queues (issue 22). */
export const SWEEP_BUDGET_PATCH = 'missed-webhook-sweep-provider-budget';
/** The patch that looks once more at paid orders by listing windows of payments (issue 37). */
export const RECHECK_LISTING_PATCH = 'missed-webhook-sweep-recheck-listing';
/** Pages of the once-more look's listing one run reads at most (10,000 payments); the next run goes on. */
export const RECHECK_PAGES_PER_RUN = 100;

export interface MissedWebhookSweepInput {
  /** Only orders older than this are asked about; default MISSED_WEBHOOK_SWEEP_AGE_MS. */
  olderThanMs?: number;
  /** How many orders (and refund requests, and expiries) one run looks at; the next run continues. */
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
  /** Unpaid orders expired (past the late-authorisation window); absent in runs before FAIR_SWEEP_PATCH. */
  expired?: number;
  /** Cancelled or expired orders asked about a late capture. */
  endedOrdersChecked?: number;
  /** Settlements without a UTR fetched again, and how many now have one. */
  settlementsRefreshed?: number;
  settlementUtrsFound?: number;
  /** Pages of payments the once-more look listed, and the payments of paid orders it applied. */
  recheckPages?: number;
  recheckApplied?: number;
}

/** A quarter of the batch for cancelled and expired orders: a side path, never the main queue. */
export const endedOrdersBatch = (batchSize: number): number => Math.max(1, Math.floor(batchSize / 4));
