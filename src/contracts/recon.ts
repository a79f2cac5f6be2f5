/** Contract of the reconciliation workflows: ids, input/result types, the progress query and the
 * daily schedule's id. Imported by the workflow, the activities, the API, the CLI and the tests. */
import { defineQuery } from '@temporalio/workflow';
import { z } from 'zod';
import { isoDateSchema } from '../domain/calendar';

// A calendar date, not only its shape: 2026-02-30 is refused with a 400 before any run starts.

export const reconWindowSchema = z.object({
  from: isoDateSchema,
  to: isoDateSchema,
  /** The IST day to judge due dates against; the worker's today when absent. */
  asOf: isoDateSchema.optional(),
}).refine((w) => w.from <= w.to, { message: 'from must not be after to', path: ['to'] })
  .refine((w) => Date.parse(`${w.to}T00:00:00Z`) - Date.parse(`${w.from}T00:00:00Z`) <= 31 * 86_400_000, { message: 'a run covers at most 32 days', path: ['to'] });
export type ReconWindow = z.infer<typeof reconWindowSchema>;

export const reconWorkflowId = (w: { from: string; to: string }): string => `recon-${w.from}-${w.to}`;

export const RECON_SCHEDULE_ID = 'recon-daily';

export interface ScheduledReconInput { lookbackDays: number }

export type ReconPhase = 'starting' | 'pulling' | 'matching' | 'completed';

export interface ReconProgress {
  phase: ReconPhase;
  daysTotal: number;
  daysPulled: number;
  rowsFetched: number;
  settlementsFetched: number;
  matched: number;
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
