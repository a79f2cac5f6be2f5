/** payoutBatchWorkflow, id `payout-<batchId>` (issue 22 item 4): one run per batch of a scheduled
 * employer–vendor pair. Orders join as rows in payout_batch_orders; the first joiner's start creates
 * the run and later joiners' starts find it running, adding nothing to its history (issue 36 item 5:
 * its size does not depend on the member count). The run sleeps until the cutoff (or ops close it
 * early), closes the batch (the members' sum read from the database, its own payout row written),
 * then takes that row through the very state machine an order's payout runs (payout/steps.ts):
 * claim, ONE transfer with the batch id as its first idempotency key and in its notes, three-valued
 * outcome, notes-based resolver, attempt cap and parking, settlement. The members' rows take its
 * final status. */
import { condition, continueAsNew, setHandler } from '@temporalio/workflow';
import type { PayoutWorkflowResult } from '../contracts/payout';
import { batchOrderJoinedSignal, closeBatchNowSignal, type PayoutBatchWorkflowInput } from '../contracts/payoutBatch';
import { PayoutRun } from './payout/run';
import { localDb, providerBudgetCalls } from './payout/proxies';
import { patchesUpFront, runPayoutSteps, type PayoutContext } from './payout/steps';

export async function payoutBatchWorkflow(input: PayoutBatchWorkflowInput): Promise<PayoutWorkflowResult> {
  const run = new PayoutRun(input.batchId);
  let closeNow = false;
  // Only runs started before issue 36 item 5 (and joiners of an older build) hear this: a handler adds
  // no command, so registering it keeps those histories replaying as recorded.
  setHandler(batchOrderJoinedSignal, ({ orderId }) => { if (orderId) run.note('batch', `order ${orderId} joined`); },
    { description: 'Sent by joiners before issue 36 item 5 (members are rows now); kept for runs of that time.' });
  setHandler(closeBatchNowSignal, ({ actor }) => { closeNow = true; run.note('batch', `closed early by ${actor}`); },
    { description: 'Close the batch now instead of at its cutoff, and pay it.' });

  // Before the first local activity, as an order's run (payout/steps.ts patchesUpFront).
  const upFront = patchesUpFront();
  const { policy, payout: already } = await localDb.startPayoutRun(input.batchId);
  if (!already) {
    run.explain();
    // A durable timer to the cutoff: no order joins after the close commits, so a late one goes to
    // the next window.
    await condition(() => closeNow, Math.max(0, Date.parse(input.cutoffAt) - Date.now()));
  }
  const closed = already ?? (await localDb.closePayoutBatch(input.batchId));
  if (!closed) return { kind: 'no_transfer', orderId: input.batchId, reason: 'the batch closed with no orders' };
  const ctx: PayoutContext = {
    key: input.batchId,
    restart: () => continueAsNew<typeof payoutBatchWorkflow>(input),
    run,
    policy,
    db: { readPayout: localDb.readPayout, claimPayout: localDb.claimBatchPayout, recordTransferOutcome: localDb.recordTransferOutcome },
    provider: providerBudgetCalls(policy),
    resolverBacksOff: true,
    upFront,
  };
  run.publish(closed);
  return runPayoutSteps(ctx);
}
