/** The payout sweep's Temporal Schedule: every PAYOUT_SWEEP_EVERY_MS, overlap SKIP (a slow sweep is
 * never doubled), created idempotently by the worker at start-up or by the stack command. */
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import type { Config } from '../config/config';
import { PAYOUT_SWEEP_SCHEDULE_ID, PAYOUT_SWEEP_WORKFLOW_TYPE, type PayoutSweepInput } from '../contracts/sweep';

/** Returns true when this call created the schedule, false when it already existed. */
export async function ensurePayoutSweepSchedule(client: Client, config: Pick<Config, 'PAYOUT_SWEEP_EVERY_MS' | 'TEMPORAL_TASK_QUEUE'>, scheduleId = PAYOUT_SWEEP_SCHEDULE_ID): Promise<boolean> {
  const args: [PayoutSweepInput] = [{ batchSize: 100 }];
  try {
    await client.schedule.create({
      scheduleId,
      spec: { intervals: [{ every: config.PAYOUT_SWEEP_EVERY_MS }] },
      action: { type: 'startWorkflow', workflowType: PAYOUT_SWEEP_WORKFLOW_TYPE, taskQueue: config.TEMPORAL_TASK_QUEUE, args, workflowId: scheduleId },
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: Math.max(config.PAYOUT_SWEEP_EVERY_MS, 60_000) },
    });
    return true;
  } catch (err) {
    if (err instanceof ScheduleAlreadyRunning) return false;
    throw err;
  }
}
