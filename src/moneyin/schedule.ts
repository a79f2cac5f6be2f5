/** The Temporal Schedule that runs the missed-webhook sweep, ensured by the production worker at
 * boot (src/wiring.ts): created, or updated when config changed. */
import type { Client } from '@temporalio/client';
import type { Config } from '../config/config';
import { MISSED_WEBHOOK_SCHEDULE_ID, MISSED_WEBHOOK_SWEEP_WORKFLOW_TYPE, type MissedWebhookSweepInput } from '../contracts/missedWebhookSweep';
import { ensureSchedule, sweepScheduleOptions, type EnsuredSchedule, type StartWorkflowScheduleOptions } from '../temporal/schedules';

type MissedWebhookConfig = Pick<Config, 'TEMPORAL_TASK_QUEUE' | 'MISSED_WEBHOOK_SWEEP_EVERY_MS'>;

export function missedWebhookScheduleOptions(config: MissedWebhookConfig): StartWorkflowScheduleOptions {
  const args: [MissedWebhookSweepInput] = [{}];
  return sweepScheduleOptions({
    scheduleId: MISSED_WEBHOOK_SCHEDULE_ID, workflowType: MISSED_WEBHOOK_SWEEP_WORKFLOW_TYPE, taskQueue: config.TEMPORAL_TASK_QUEUE,
    everyMs: config.MISSED_WEBHOOK_SWEEP_EVERY_MS, args, workflowExecutionTimeout: '1 hour',
  });
}

export function ensureMissedWebhookSchedule(client: Client, config: MissedWebhookConfig): Promise<EnsuredSchedule> {
  return ensureSchedule(client, missedWebhookScheduleOptions(config));
}
