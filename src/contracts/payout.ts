/** Contract of the payout workflow: its id, start policies, signals, query and input/result types.
 * Imported by the workflow, the activities, the starter, the ops API and the tests alike. */
import { defineQuery, defineSignal } from '@temporalio/workflow';

export const PAYOUT_WORKFLOW_TYPE = 'payoutWorkflow';

/** One workflow id per order: the guard against two live runs for the same payout. */
export const payoutWorkflowId = (orderId: string): string => `payout-${orderId}`;

/** One run at a time (USE_EXISTING); never a second run after a completed one, but a terminated or
 * failed run may be followed by a new one, which starts by resolving (design.md §6). */
export const PAYOUT_START_POLICIES = {
  workflowIdConflictPolicy: 'USE_EXISTING',
  workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
} as const;

/** `batched`: an order of a pair on an hourly or daily schedule, paid by its batch's transfer; it
 * takes the batch's final status (payouts/batches.ts). */
export const PAYOUT_STATUSES = ['pending', 'processing', 'accepted', 'settled', 'failed', 'parked', 'review', 'cancelled', 'rerouted', 'offline', 'batched'] as const;
export type PayoutStatus = (typeof PAYOUT_STATUSES)[number];

export interface PayoutWorkflowInput {
  orderId: string;
}

/** A payout as the workflow sees it (plain JSON: timestamps are ISO strings). */
export interface PayoutView {
  id: string;
  /** The payout's key: its order, or for a batch's own payout the batch id (then `batchId` too). */
  orderId: string;
  /** Set on the payout that carries a batch's transfer (absent on rows read before batches). */
  batchId?: string | null;
  vendorId: string;
  linkedAccountId: string;
  amountPaise: number;
  status: PayoutStatus;
  attempts: number;
  attemptLimit: number;
  claimedAt: string | null;
  idempotencyKey: string;
  providerTransferId: string | null;
  lastCode: string | null;
  externalReference: string | null;
  nextAttemptAt: string | null;
}

export type PayoutWorkflowResult =
  | { kind: 'finished'; orderId: string; payoutId: string; status: PayoutStatus; attempts: number }
  /** The order pays the vendor another way (ledger, obligation, split) or is not payable. */
  | { kind: 'no_transfer'; orderId: string; reason: string }
  /** Another run or an earlier one already owns the row; nothing was done. */
  | { kind: 'lost_claim'; orderId: string; statusSeen: string | null }
  /** The pair pays on a schedule: the order joined this batch, whose transfer pays it. */
  | { kind: 'batched'; orderId: string; batchId: string; cutoffAt: string };

/** The failure type of a run that found direct transfers paused: the row stays `pending`, and because
 * the run failed (rather than completed) the sweep may start a new one after resume. */
export const TRANSFERS_PAUSED = 'TransfersPaused';

/** A listing page's activity: its start-to-close (one provider call, GATEWAY_TIMEOUT_MS at most). */
export const LISTING_PAGE_TIMEOUT_MS = 20_000;
/** A pass holds the other payouts back this long after it started or wrote its last page
 * (captureListing.ts): a page's call (8 s at most by default) and its wait for the reads budget. A pass
 * whose runner died, or one a restored database brought back unfinished, then stops holding them back
 * and the next payout lists again, instead of every run waiting out its rounds and fetching alone. */
export const LISTING_PAGE_LEASE_MS = 15_000;
/** A pass lists at most this many pages (of 100 payments); past them its captures are asked for alone. */
export const MAX_PASS_PAGES = 20;

/** Evidence that a transfer moved on at the provider (the transfer webhooks send this). */
export interface TransferEvidence {
  event: 'transfer.processed' | 'transfer.failed' | 'transfer.reversed';
  transferId: string;
}
export const transferEvidenceSignal = defineSignal<[TransferEvidence]>('transferEvidence');

export const OPS_ACTIONS = ['retry', 'mark_paid_externally', 'cancel', 'pay_offline'] as const;
export type OpsAction = (typeof OPS_ACTIONS)[number];

/** Sent after the ops route has committed the decision (and its review_actions row). */
export interface OpsDecision {
  action: OpsAction;
  actor: string;
}
export const opsDecisionSignal = defineSignal<[OpsDecision]>('opsDecision');

/** Sent by the sweep that runs when ops resume transfers: a run waiting out the kill switch goes on. */
export const transfersResumedSignal = defineSignal('transfersResumed');

export interface PayoutStepLog {
  step: string;
  detail: string;
}

export interface PayoutState {
  orderId: string;
  payout: PayoutView | null;
  /** The steps this run took, newest last (bounded). */
  steps: PayoutStepLog[];
}
export const payoutStateQuery = defineQuery<PayoutState>('payoutState');

/** Durations and limits the workflow needs, read from config by an activity (workflows read no env). */
export interface PayoutPolicy {
  attemptCap: number;
  transferTimeoutMs: number;
  settlementPollMs: number;
  resolverRetryMs: number;
  humanRecheckMs: number;
  retryBackoffMs: number;
  retryBackoffMaxMs: number;
  /** Issue 22. Absent from the policy runs started before it recorded (their histories replay it as
   * recorded): workflow code reads them with a fallback. */
  resolverRetryMaxMs: number;
  balanceProbeMs: number;
}

/** The fields every payout log line carries, so one grep finds a payout's story across processes. */
export function payoutLogFields(p: { id: string; orderId: string }): { orderId: string; payoutId: string; workflowId: string } {
  return { orderId: p.orderId, payoutId: p.id, workflowId: payoutWorkflowId(p.orderId) };
}
