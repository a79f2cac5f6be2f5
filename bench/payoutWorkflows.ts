/** The bench's workflow bundle: the real payoutWorkflow and, as the baseline, a bare workflow with
 * one activity that does one INSERT (the cheapest durable unit of work on the same server). */
import { proxyActivities } from '@temporalio/workflow';

export { payoutWorkflow } from '../src/workflows/payout';

const { benchInsert } = proxyActivities<{ benchInsert(i: number): Promise<void> }>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 5 },
});

export async function benchBareWorkflow(i: number): Promise<void> {
  await benchInsert(i);
}
