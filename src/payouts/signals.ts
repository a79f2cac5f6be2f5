/** Signals from outside a payout run. An ops decision uses signal-with-start under the payout's
 * start policies, so a parked payout whose run was terminated gets a run that hears the decision.
 * `afterCompletedRun`: the payout's run completed (a settled payout whose transfer was reversed since),
 * so this one start may follow a completed run (ALLOW_DUPLICATE); a running run is still signalled,
 * never duplicated, and the claim's row lock and the fresh key keep the new run to one transfer. */
import type { Client } from '@temporalio/client';
import { opsDecisionSignal, type OpsDecision } from '../contracts/payout';
import { payoutRunTypeOf, payoutStartOptions } from './temporalStarter';

export async function signalOpsDecision(client: Client, taskQueue: string, orderId: string, decision: OpsDecision, opts: { afterCompletedRun?: boolean } = {}): Promise<void> {
  const { workflowIdConflictPolicy: _useExisting, ...options } = payoutStartOptions(taskQueue, orderId);
  await client.workflow.signalWithStart(payoutRunTypeOf(orderId), {
    ...options,
    ...(opts.afterCompletedRun && { workflowIdReusePolicy: 'ALLOW_DUPLICATE' as const }),
    signal: opsDecisionSignal,
    signalArgs: [decision],
  });
}
