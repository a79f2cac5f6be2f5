import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { ProbeInput, ProbeResult } from '../contracts/probe';
import type { Activities } from '../activities';

const { writeProbeRow, readProbeRow } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 5 },
});

/** Writes a row through an activity and reads it back: the smallest end-to-end proof. */
export async function probeWorkflow(input: ProbeInput): Promise<ProbeResult> {
  const rowId = await writeProbeRow(workflowInfo().workflowId, input.message);
  const readBack = await readProbeRow(rowId);
  return { rowId, readBack };
}
