/** The payout sweep's Temporal Schedule: every PAYOUT_SWEEP_EVERY_MS, overlap SKIP (a slow sweep is
 * never doubled). The production worker ensures it at boot (src/wiring.ts). */
import type { Client } from '@temporalio/client';
import type { Config } from '../config/config';
import { PAYOUT_SWEEP_SCHEDULE_ID, PAYOUT_SWEEP_WORKFLOW_TYPE, type PayoutSweepInput } from '../contracts/sweep';
import { ensureSchedule, sweepScheduleOptions, type EnsuredSchedule, type StartWorkflowScheduleOptions } from '../temporal/schedules';

type SweepConfig = Pick<Config, 'PAYOUT_SWEEP_EVERY_MS' | 'TEMPORAL_TASK_QUEUE'>;

export function payoutSweepScheduleOptions(config: SweepConfig, scheduleId = PAYOUT_SWEEP_SCHEDULE_ID): StartWorkflowScheduleOptions {
  const args: [PayoutSweepInput] = [{ batchSize: 100 }];
  return sweepScheduleOptions({
    scheduleId, workflowType: PAYOUT_SWEEP_WORKFLOW_TYPE, taskQueue: config.TEMPORAL_TASK_QUEUE,
    everyMs: config.PAYOUT_SWEEP_EVERY_MS, args, catchupWindow: Math.max(config.PAYOUT_SWEEP_EVERY_MS, 60_000),
  });
}

export function ensurePayoutSweepSchedule(client: Client, config: SweepConfig, scheduleId = PAYOUT_SWEEP_SCHEDULE_ID): Promise<EnsuredSchedule> {
  return ensureSchedule(client, payoutSweepScheduleOptions(config, scheduleId));
}
