/** Starting reconciliation through Temporal: on demand for finance (API, CLI) and the daily
 * Schedule, created idempotently at boot. */
import type { Client, ScheduleOptions, ScheduleOptionsStartWorkflowAction } from '@temporalio/client';
import { liveProgress } from '../temporal/liveProgress';
import type { Workflow } from '@temporalio/common';
import { ensureSchedule, type EnsuredSchedule } from '../temporal/schedules';
import type { Config } from '../config/config';
import { RECON_SCHEDULE_ID, reconProgressQuery, reconWorkflowId, type ReconProgress, type ReconWindow } from '../contracts/recon';
import type { reconWorkflow } from '../workflows/recon';

/** What the finance API and CLI need from Temporal. */
export interface ReconStarter {
  start(window: ReconWindow): Promise<{ workflowId: string; runId: string }>;
  /** Live progress of the window's latest run, or null when Temporal no longer knows it. */
  progress(workflowId: string): Promise<{ status: string; progress: ReconProgress | null } | null>;
}

export function temporalReconStarter(client: Client, taskQueue: string): ReconStarter {
  return {
    async start(window) {
      // A window already running is joined, not started twice; a finished one is run again.
      const handle = await client.workflow.start<typeof reconWorkflow>('reconWorkflow', {
        workflowId: reconWorkflowId(window),
        taskQueue,
        args: [window],
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      });
      return { workflowId: handle.workflowId, runId: handle.firstExecutionRunId };
    },
    progress: (workflowId) => liveProgress(client, workflowId, reconProgressQuery),
  };
}

/** IST has no daylight saving: 07:00 IST is always 01:30 UTC. */
export function istHourToUtc(hourIst: number): { hour: number; minute: number } {
  const minutes = (hourIst * 60 - 330 + 1440) % 1440;
  return { hour: Math.floor(minutes / 60), minute: minutes % 60 };
}

export function reconScheduleOptions(config: Pick<Config, 'RECON_SCHEDULE_HOUR_IST' | 'RECON_LOOKBACK_DAYS' | 'TEMPORAL_TASK_QUEUE'>): ScheduleOptions<ScheduleOptionsStartWorkflowAction<Workflow>> {
  const at = istHourToUtc(config.RECON_SCHEDULE_HOUR_IST);
  return {
    scheduleId: RECON_SCHEDULE_ID,
    spec: { calendars: [{ hour: at.hour, minute: at.minute, comment: `daily ${config.RECON_SCHEDULE_HOUR_IST}:00 IST` }] },
    action: {
      type: 'startWorkflow',
      workflowType: 'scheduledReconWorkflow',
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      args: [{ lookbackDays: config.RECON_LOOKBACK_DAYS }],
      workflowId: 'recon-scheduled',
    },
    // A day missed while the cluster was down still runs once; two never overlap.
    policies: { overlap: 'SKIP', catchupWindow: '1 day' },
  };
}

/** Creates the daily recon Schedule, or brings an existing one up to date with the config. */
export function ensureReconSchedule(client: Client, config: Pick<Config, 'RECON_SCHEDULE_HOUR_IST' | 'RECON_LOOKBACK_DAYS' | 'TEMPORAL_TASK_QUEUE'>): Promise<EnsuredSchedule> {
  return ensureSchedule(client, reconScheduleOptions(config));
}
