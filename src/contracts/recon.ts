/** Contract of the reconciliation workflows: ids, input/result types, the progress query and the
 * daily schedule's id. Imported by the workflow, the activities, the API, the CLI and the tests. */
import { defineQuery } from '@temporalio/workflow';
export type { ReconWindow } from './reconWindow';

export const reconWorkflowId = (w: { from: string; to: string }): string => `recon-${w.from}-${w.to}`;

export const RECON_SCHEDULE_ID = 'recon-daily';
/** The patch that put the day's pull from the gateway on the provider budget's reads queue (issue 22). */
export const RECON_BUDGET_PATCH = 'recon-pull-provider-budget';

export interface ScheduledReconInput { lookbackDays: number }

export type ReconPhase = 'starting' | 'pulling' | 'matching' | 'completed';

export interface ReconProgress {
  phase: ReconPhase;
  daysTotal: number;
  daysPulled: number;
  rowsFetched: number;
  settlementsFetched: number;
  /** Everything matched: the three counts below together (runs before they were kept have only this). */
  matched: number;
  /** Of the rows pulled (Razorpay's settlement line items), those that match our records. */
  matchedGatewayRows?: number;
  /** Settlements matched to a bank statement credit (UTR and amount). */
  matchedBankCredits?: number;
  /** Settlement-run lines matched to a bank statement debit. */
  matchedBankDebits?: number;
  exceptions: number;
}

export interface ReconSummary extends ReconProgress {
  runId: string;
  from: string;
  to: string;
  asOf: string;
  /** Exceptions this run found, by reason. */
  byReason: Record<string, number>;
  byClass: Record<string, number>;
  opened: number;
  changed: number;
  cleared: number;
}

export const reconProgressQuery = defineQuery<ReconProgress>('reconProgress');
