/** What follows an ops decision or a resume once it is committed, for every surface that takes
 * them (the ops API, the console): the decision stands even if Temporal does not answer, because
 * the run re-reads its row and the Schedule's sweep does the resume's work at its next tick. */
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { OpsDecision, PayoutStatus } from '../contracts/payout';
import { logger } from '../logger';
import { signalOpsDecision } from './signals';
import { startPayoutSweepNow } from './sweepNow';
import { wakePayoutWorkflow } from './temporalStarter';

/** Decisions that leave the payout needing a run (a transfer to send, or one to see settled). */
const NEEDS_A_RUN: ReadonlySet<OpsDecision['action']> = new Set(['retry', 'mark_paid_externally']);

/** The decision's signal; when the payout's run has completed (only a payout settled and then
 * reversed waits for a decision without a run), a decision that needs a run starts it again. */
async function signalOrStartAgain(temporal: Client, taskQueue: string, orderId: string, decision: OpsDecision): Promise<void> {
  try {
    await signalOpsDecision(temporal, taskQueue, orderId, decision);
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    if (!NEEDS_A_RUN.has(decision.action)) {
      logger.info({ orderId, action: decision.action }, 'ops decision committed; the payout run had completed and none is needed');
      return;
    }
    await signalOpsDecision(temporal, taskQueue, orderId, decision, { afterCompletedRun: true });
    logger.info({ orderId, action: decision.action }, 'ops decision committed; the payout run had completed, so it was started again');
  }
}

/** `decidedFrom`: the status the decision moved the payout from. */
export async function signalDecisionAfterCommit(temporal: Client | undefined, taskQueue: string, orderId: string, decision: OpsDecision, decidedFrom: PayoutStatus): Promise<void> {
  if (!temporal) return;
  try {
    await signalOrStartAgain(temporal, taskQueue, orderId, decision);
    // A pending or failed payout's run waits on the kill switch (or a backoff), not on a decision,
    // and the ops signal does not end that wait: the resume signal does, and its claim then finds
    // the row offline and ends the run. (The sweep after a resume wakes only open payouts.)
    if (decision.action === 'pay_offline' && (decidedFrom === 'pending' || decidedFrom === 'failed')) await wakePayoutWorkflow(temporal, taskQueue, orderId);
  } catch (err) {
    logger.error({ err, orderId, action: decision.action }, 'ops decision committed but the payout run could not be signalled');
  }
}

/** Everything a pause held back is paid now, not at the next Schedule tick. */
export async function sweepAfterResume(temporal: Client | undefined, taskQueue: string): Promise<{ workflowId: string } | null> {
  if (!temporal) return null;
  try {
    return { workflowId: await startPayoutSweepNow(temporal, taskQueue) };
  } catch (err) {
    logger.error({ err }, 'transfers resumed but the payout sweep could not be started now; the Schedule will run it');
    return null;
  }
}
