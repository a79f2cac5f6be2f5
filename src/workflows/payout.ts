/** payoutWorkflow, id `payout-<orderId>`: pays a vendor its net for one order at most once and, unless
 * a human decides otherwise, at least once. The story: resolve if a claim is stale → claim (routing
 * and kill switch at fire time) → transfer → classify and record → wait for settlement; failures go
 * round again after a durable backoff, and parked/review payouts wait for an ops decision.
 *
 * The states' steps are in payout/steps.ts; the run's state, signals, query and step log in
 * payout/run.ts; how each activity is called in payout/proxies.ts. */
import type { PayoutWorkflowInput, PayoutWorkflowResult } from '../contracts/payout';
import { PayoutRun } from './payout/run';
import { openPayoutRun, runPayoutSteps } from './payout/steps';

export async function payoutWorkflow(input: PayoutWorkflowInput): Promise<PayoutWorkflowResult> {
  const run = new PayoutRun(input.orderId);
  return runPayoutSteps(await openPayoutRun(input, run));
}
