/** Creates a Schedule, or brings an existing one up to date when its spec, action or policies
 * differ from what config asks for now. Safe for several workers booting at once: a create that
 * loses the race compares and updates instead. */
import { createHash } from 'node:crypto';
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client, type ScheduleOptions, type ScheduleOptionsStartWorkflowAction } from '@temporalio/client';
import type { Workflow } from '@temporalio/common';

export type EnsuredSchedule = 'created' | 'updated' | 'unchanged';

export type StartWorkflowScheduleOptions = ScheduleOptions<ScheduleOptionsStartWorkflowAction<Workflow>>;

/** The Schedule's own memo cannot be changed by an update, so the fingerprint of the desired
 * options travels in the action's workflow memo, which can. */
const FINGERPRINT_MEMO = 'payoutsScheduleConfig';

export function scheduleFingerprint(options: StartWorkflowScheduleOptions): string {
  const { spec, action, policies } = options;
  return createHash('sha256').update(JSON.stringify({ spec, action, policies })).digest('hex').slice(0, 16);
}

export async function ensureSchedule(client: Client, options: StartWorkflowScheduleOptions): Promise<EnsuredSchedule> {
  const fingerprint = scheduleFingerprint(options);
  const action = { ...options.action, memo: { ...options.action.memo, [FINGERPRINT_MEMO]: fingerprint } };
  try {
    await client.schedule.create({ ...options, action });
    return 'created';
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
  const handle = client.schedule.getHandle(options.scheduleId);
  const current = await handle.describe();
  const currentMemo = current.action.type === 'startWorkflow' ? current.action.memo : undefined;
  if (currentMemo?.[FINGERPRINT_MEMO] === fingerprint) return 'unchanged';
  await handle.update((previous) => ({
    ...previous,
    spec: options.spec,
    action,
    policies: { ...previous.policies, ...options.policies },
  }));
  return 'updated';
}

/** A sweep on a cadence: every `everyMs`, one run at a time (a sweep still running when the next is
 * due is enough: overlap SKIP), a missed slot not caught up after `catchupWindow`. The workflow id
 * is the Schedule's (Temporal appends the action time). */
export function sweepScheduleOptions(opts: {
  scheduleId: string; workflowType: string; taskQueue: string; everyMs: number; args: unknown[];
  catchupWindow?: number | string; workflowExecutionTimeout?: string;
}): StartWorkflowScheduleOptions {
  return {
    scheduleId: opts.scheduleId,
    spec: { intervals: [{ every: opts.everyMs }] },
    action: {
      type: 'startWorkflow',
      workflowType: opts.workflowType,
      taskQueue: opts.taskQueue,
      args: opts.args,
      workflowId: opts.scheduleId,
      ...(opts.workflowExecutionTimeout ? { workflowExecutionTimeout: opts.workflowExecutionTimeout } : {}),
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: opts.catchupWindow ?? '1 minute' },
  };
}
