/** Signals from outside a payout run. An ops decision uses signal-with-start under the payout's
 * start policies, so a parked payout whose run was terminated gets a run that hears the decision. */
import type { Client } from '@temporalio/client';
import { opsDecisionSignal, type OpsDecision } from '../contracts/payout';
import type { payoutWorkflow } from '../workflows/payout';
import { payoutStartOptions } from './temporalStarter';

export async function signalOpsDecision(client: Client, taskQueue: string, orderId: string, decision: OpsDecision): Promise<void> {
  const { workflowIdConflictPolicy: _useExisting, ...options } = payoutStartOptions(taskQueue, orderId);
  await client.workflow.signalWithStart<typeof payoutWorkflow, [OpsDecision]>('payoutWorkflow', {
    ...options,
    signal: opsDecisionSignal,
    signalArgs: [decision],
  });
}
