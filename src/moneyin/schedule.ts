/** The Temporal Schedule that runs the missed-webhook sweep. Created idempotently at start-up: an
 * existing schedule is brought up to date instead of failing. */
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client, type ScheduleOptionsAction } from '@temporalio/client';
import type { Config } from '../config/config';
import { MISSED_WEBHOOK_SCHEDULE_ID, MISSED_WEBHOOK_SWEEP_WORKFLOW_TYPE, type MissedWebhookSweepInput } from '../contracts/missedWebhookSweep';

export async function ensureMissedWebhookSchedule(
  client: Client,
  config: Pick<Config, 'TEMPORAL_TASK_QUEUE' | 'MISSED_WEBHOOK_SWEEP_EVERY_MS'>,
): Promise<'created' | 'updated'> {
  const args: [MissedWebhookSweepInput] = [{}];
  const action: ScheduleOptionsAction = {
    type: 'startWorkflow',
    workflowType: MISSED_WEBHOOK_SWEEP_WORKFLOW_TYPE,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    args,
    workflowId: MISSED_WEBHOOK_SCHEDULE_ID,
    workflowExecutionTimeout: '1 hour',
  };
  const spec = { intervals: [{ every: config.MISSED_WEBHOOK_SWEEP_EVERY_MS }] };
  // A sweep still running when the next is due is enough; a missed slot is not worth catching up.
  const policies = { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' };
  try {
    await client.schedule.create({ scheduleId: MISSED_WEBHOOK_SCHEDULE_ID, spec, action, policies });
    return 'created';
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await client.schedule.getHandle(MISSED_WEBHOOK_SCHEDULE_ID).update((previous) => ({ ...previous, spec, action, policies }));
    return 'updated';
  }
}
