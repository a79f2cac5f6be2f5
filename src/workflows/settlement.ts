/** The settlement run (issue 20): freezes a period's open offline lines into a batch (one activity,
 * idempotent on the run), then follows the batch until every line is paid or failed, or the batch is
 * cancelled — woken by the API's signal after each decision, and hourly in case a signal was lost.
 * The Web UI shows the batch's progress in the run's current details. Finance's decisions themselves
 * are database writes by the API; this run never moves money. */
import { condition, proxyActivities, setCurrentDetails, setHandler, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { settlementChangedSignal, settlementProgressQuery, type SettlementProgress, type SettlementRunInput } from '../contracts/settlement';
import { formatRupees } from '../domain/money';

/** Each is one short transaction: a worker that dies in one is noticed (and the call retried) within 30 s. */
const settlementCall = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '2 seconds', maximumInterval: '1 minute', maximumAttempts: 20 },
});

const RECHECK = '1 hour';

export async function settlementRunWorkflow(input: SettlementRunInput): Promise<SettlementProgress> {
  const { runId, workflowId } = workflowInfo();
  let progress: SettlementProgress = { phase: 'freezing', batchId: null, lines: 0, open: 0, paid: 0, failed: 0, cancelled: 0, amountPaise: 0, paidPaise: 0, skippedVendors: 0 };
  let changed = false;
  setHandler(settlementProgressQuery, () => progress);
  setHandler(settlementChangedSignal, () => { changed = true; });
  setCurrentDetails(`Freezing the open offline lines of ${input.from} … ${input.to}.`);

  progress = await settlementCall.freezeSettlementBatch({ ...input, runId, workflowId });
  setCurrentDetails(settlementDetails(input, progress));
  while (progress.phase === 'awaiting_bank') {
    await condition(() => changed, RECHECK);
    changed = false;
    progress = await settlementCall.readSettlementProgress({ batchId: progress.batchId! });
    setCurrentDetails(settlementDetails(input, progress));
  }
  return progress;
}

/** Markdown for the Web UI's current details. */
export function settlementDetails(input: SettlementRunInput, p: SettlementProgress): string {
  const scope = input.vendorIds ? `vendors ${input.vendorIds.join(', ')}` : 'all vendors';
  return [
    `**Settlement ${input.from} … ${input.to}** (${scope}), batch \`${p.batchId ?? '—'}\`: **${p.phase.replace('_', ' ')}**`,
    '',
    `| lines | open | paid | failed | cancelled | amount | paid |`,
    `|---|---|---|---|---|---|---|`,
    `| ${p.lines} | ${p.open} | ${p.paid} | ${p.failed} | ${p.cancelled} | ${formatRupees(p.amountPaise)} | ${formatRupees(p.paidPaise)} |`,
    '',
    p.skippedVendors > 0 ? `${p.skippedVendors} vendor(s) carried forward (net not positive, or no bank details).` : 'No vendor carried forward.',
    p.phase === 'awaiting_bank' ? 'Next: download the bank file, then record each line paid (UTR) or failed, one by one or by importing the bank\'s response.' : '',
  ].join('\n');
}
