/** Starting settlement runs through Temporal, for the finance API, console and CLI. One run per
 * period and vendor set at a time: asking again while it runs joins it; once its batch is closed, a
 * new run freezes what is open by then (lines of a failed payment, lines carried forward). */
import { createHash } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { liveProgress } from '../temporal/liveProgress';
import { SETTLEMENT_WORKFLOW_TYPE, settlementChangedSignal, settlementProgressQuery, type SettlementProgress, type SettlementRunInput } from '../contracts/settlement';
import { formatRupees } from '../domain/money';
import type { settlementRunWorkflow } from '../workflows/settlement';

export function settlementWorkflowId(input: Pick<SettlementRunInput, 'from' | 'to' | 'vendorIds'>): string {
  const vendors = input.vendorIds ? `-v${createHash('sha256').update([...input.vendorIds].sort().join(',')).digest('hex').slice(0, 12)}` : '';
  return `settlement-${input.from}-${input.to}${vendors}`;
}

export const SETTLEMENT_WORKFLOW_ID = /^settlement-\d{4}-\d{2}-\d{2}-\d{4}-\d{2}-\d{2}(-v[0-9a-f]{12})?$/;

export interface SettlementStarter {
  start(input: SettlementRunInput): Promise<{ workflowId: string; runId: string }>;
  /** The run's live progress, or null when Temporal no longer knows it. */
  progress(workflowId: string): Promise<{ status: string; progress: SettlementProgress | null } | null>;
  /** Best effort: a lost signal costs the run's hourly recheck, never a decision. */
  changed(workflowId: string): Promise<void>;
}

export function temporalSettlementStarter(client: Client, taskQueue: string): SettlementStarter {
  return {
    async start(input) {
      const scope = input.vendorIds ? `${input.vendorIds.length} vendor(s)` : 'all vendors';
      const handle = await client.workflow.start<typeof settlementRunWorkflow>(SETTLEMENT_WORKFLOW_TYPE, {
        workflowId: settlementWorkflowId(input),
        taskQueue,
        args: [input],
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
        staticSummary: `Settlement ${input.from} … ${input.to}, ${scope}`,
        staticDetails: `Offline settlement run started by ${input.actor}: see the current details for the batch's lines.`,
      });
      return { workflowId: handle.workflowId, runId: handle.firstExecutionRunId };
    },
    progress: (workflowId) => liveProgress(client, workflowId, settlementProgressQuery),
    async changed(workflowId) {
      await client.workflow.getHandle(workflowId).signal(settlementChangedSignal).catch(() => undefined);
    },
  };
}

/** One line for CLIs and logs: "3 line(s), ₹1,234.50: 1 paid, 2 open". */
export function progressLine(p: SettlementProgress): string {
  return `${p.lines} line(s), ${formatRupees(p.amountPaise)}: ${p.paid} paid, ${p.open} open, ${p.failed} failed${p.cancelled ? `, ${p.cancelled} cancelled` : ''}; ${p.skippedVendors} vendor(s) carried forward`;
}
