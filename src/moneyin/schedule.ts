/** The Temporal Schedule that runs the missed-webhook sweep, ensured by the production worker at
 * boot (src/wiring.ts): created, or updated when config changed. */
import { ScheduleOverlapPolicy, type Client, type ScheduleOptions, type ScheduleOptionsStartWorkflowAction } from '@temporalio/client';
import type { Workflow } from '@temporalio/common';
import type { Config } from '../config/config';
import { MISSED_WEBHOOK_SCHEDULE_ID, MISSED_WEBHOOK_SWEEP_WORKFLOW_TYPE, type MissedWebhookSweepInput } from '../contracts/missedWebhookSweep';
import { ensureSchedule, type EnsuredSchedule } from '../temporal/schedules';

type MissedWebhookConfig = Pick<Config, 'TEMPORAL_TASK_QUEUE' | 'MISSED_WEBHOOK_SWEEP_EVERY_MS'>;

export function missedWebhookScheduleOptions(config: MissedWebhookConfig): ScheduleOptions<ScheduleOptionsStartWorkflowAction<Workflow>> {
  const args: [MissedWebhookSweepInput] = [{}];
  return {
    scheduleId: MISSED_WEBHOOK_SCHEDULE_ID,
    spec: { intervals: [{ every: config.MISSED_WEBHOOK_SWEEP_EVERY_MS }] },
    action: {
      type: 'startWorkflow',
      workflowType: MISSED_WEBHOOK_SWEEP_WORKFLOW_TYPE,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      args,
      workflowId: MISSED_WEBHOOK_SCHEDULE_ID,
      workflowExecutionTimeout: '1 hour',
    },
    // A sweep still running when the next is due is enough; a missed slot is not worth catching up.
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' },
  };
}

export function ensureMissedWebhookSchedule(client: Client, config: MissedWebhookConfig): Promise<EnsuredSchedule> {
  return ensureSchedule(client, missedWebhookScheduleOptions(config));
}
