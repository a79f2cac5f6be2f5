/** Reconciliation workflows. reconWorkflow (id recon-<from>-<to>) pulls each IST day's settlement
 * recon report, then matches the window and records exceptions; rerunning the same window is safe
 * (rows and exceptions are upserted). scheduledReconWorkflow is what the daily Schedule starts: it
 * works out yesterday's window and runs reconWorkflow for it as a child with the business id. Since
 * RECON_BUDGET_PATCH the day's pull (the gateway's pages and settlements) runs on the provider
 * budget's reads queue (issue 22); runs recorded before it replay on the workflow's own queue. */
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { CancellationScope, executeChild, patched, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { RECON_BUDGET_PATCH, reconProgressQuery, reconWorkflowId, type ReconProgress, type ReconSummary, type ReconWindow, type ScheduledReconInput } from '../contracts/recon';
import { providerTaskQueue } from '../contracts/taskQueues';
import { addDays, datesBetween, istDateOf } from '../domain/calendar';

/** Database and gateway reads: idempotent, so retried freely; heartbeats catch a dead worker. */
const reconOptions = {
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '2 seconds', maximumInterval: '1 minute', maximumAttempts: 10 },
} as const;
const reconCall = proxyActivities<Activities>(reconOptions);

export async function reconWorkflow(window: ReconWindow): Promise<ReconSummary> {
  const { runId, workflowId } = workflowInfo();
  const days = datesBetween(window.from, window.to);
  const progress: ReconProgress = { phase: 'starting', daysTotal: days.length, daysPulled: 0, rowsFetched: 0, settlementsFetched: 0, matched: 0, exceptions: 0 };
  setHandler(reconProgressQuery, () => progress);

  const { asOf } = await reconCall.startReconRun({ runId, workflowId, from: window.from, to: window.to, asOf: window.asOf });
  try {
    return await pullAndMatch(window, runId, asOf, days, progress);
  } catch (err) {
    // A failed or cancelled run must not stay `running` in recon_runs; record it even when cancelled.
    const error = err instanceof Error ? err.message : String(err);
    await CancellationScope.nonCancellable(() => reconCall.failReconRun({ runId, rowsFetched: progress.rowsFetched, summary: { ...progress, error } }));
    throw err;
  }
}

async function pullAndMatch(window: ReconWindow, runId: string, asOf: string, days: string[], progress: ReconProgress): Promise<ReconSummary> {
  progress.phase = 'pulling';
  const gatewayPull = patched(RECON_BUDGET_PATCH)
    ? proxyActivities<Activities>({ ...reconOptions, taskQueue: providerTaskQueue(workflowInfo().taskQueue, 'reads') })
    : reconCall;
  for (const day of days) {
    const pulled = await gatewayPull.pullReconDay({ day });
    progress.daysPulled += 1;
    progress.rowsFetched += pulled.rows;
    progress.settlementsFetched += pulled.settlements;
  }

  progress.phase = 'matching';
  const matched = await reconCall.matchReconWindow({ runId, from: window.from, to: window.to, asOf });
  progress.matched = matched.matched;
  // Fields of the activity's answer (absent from an older worker's): no command changes, replay holds.
  progress.matchedGatewayRows = matched.gatewayRows;
  progress.matchedBankCredits = matched.bankCredits;
  progress.matchedBankDebits = matched.bankDebits;
  progress.exceptions = matched.exceptions;
  progress.phase = 'completed';
  const summary: ReconSummary = { ...progress, runId, from: window.from, to: window.to, asOf, byReason: matched.byReason, byClass: matched.byClass, opened: matched.opened, changed: matched.changed, cleared: matched.cleared };
  await reconCall.finishReconRun({ runId, rowsFetched: progress.rowsFetched, summary });
  return summary;
}

/** The previous `lookbackDays` IST days, ending yesterday (today's settlements are not in yet). */
export function scheduledWindow(now: Date, lookbackDays: number): ReconWindow {
  const today = istDateOf(now);
  return { from: addDays(today, -lookbackDays), to: addDays(today, -1) };
}

export async function scheduledReconWorkflow(input: ScheduledReconInput): Promise<ReconSummary | null> {
  const window = scheduledWindow(new Date(), input.lookbackDays);
  try {
    return await executeChild(reconWorkflow, { workflowId: reconWorkflowId(window), args: [window] });
  } catch (err) {
    // Finance started the same window by hand and it is still running: that run covers it.
    if (err instanceof WorkflowExecutionAlreadyStartedError) return null;
    throw err;
  }
}
