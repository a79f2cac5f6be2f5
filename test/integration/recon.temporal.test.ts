import { Worker } from '@temporalio/worker';
import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../src/api/server';
import type { Config } from '../../src/config/config';
import { RECON_SCHEDULE_ID, reconProgressQuery, reconWorkflowId } from '../../src/contracts/recon';
import { providerTaskQueue } from '../../src/contracts/taskQueues';
import type { Db } from '../../src/db/pool';
import { ensureReconSchedule, temporalReconStarter } from '../../src/recon/temporal';
import { workflowBundle } from '../../src/worker';
import { reconWorkflow } from '../../src/workflows/recon';
import { isolatedPool } from '../support/db';
import { mintKey } from '../support/apiKeys';
import { startTestSandbox, type TestSandbox } from '../support/sandbox';
import { activityTaskQueues, startTestWorker, type TestTemporal } from '../support/temporal';
import { recordHistory } from './payoutSeed';

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('recon on Temporal: the daily Schedule and finance-started runs', () => {
  let db: Db;
  let sb: TestSandbox;
  let temporal: TestTemporal;
  let config: Config;
  let api: FastifyInstance;
  let base: string;
  let financeKey: { authorization: string };

  beforeAll(async () => {
    ({ db } = await isolatedPool());
    sb = await startTestSandbox();
    temporal = await startTestWorker({ db, gateway: sb.gateway, config: { ...sb.config, BANK_HOLIDAYS: [] } });
    config = { ...sb.config, TEMPORAL_TASK_QUEUE: temporal.taskQueue };
    financeKey = await mintKey(db, ['finance']);
    api = await buildApi({ config, db, reconStarter: temporalReconStarter(temporal.client, temporal.taskQueue) });
    base = await api.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await temporal.client.schedule.getHandle(RECON_SCHEDULE_ID).delete().catch(() => undefined);
    await api?.close();
    await temporal?.close();
    await sb?.sandbox.close();
    await db?.end();
  });

  test('when the schedule is ensured again, then it is unchanged, and a changed hour in config updates it', async () => {
    expect(await ensureReconSchedule(temporal.client, config)).toBe('created');
    expect(await ensureReconSchedule(temporal.client, config)).toBe('unchanged');
    expect(await ensureReconSchedule(temporal.client, { ...config, RECON_SCHEDULE_HOUR_IST: 8 })).toBe('updated');
    const described = await temporal.client.schedule.getHandle(RECON_SCHEDULE_ID).describe();
    expect(described.spec.calendars).toMatchObject([{ hour: [{ start: 2, end: 2, step: 1 }], minute: [{ start: 30, end: 30, step: 1 }] }]);
    expect(described.policies.overlap).toBe('SKIP');
    expect(described.action).toMatchObject({ type: 'startWorkflow', workflowType: 'scheduledReconWorkflow', taskQueue: temporal.taskQueue });
  });

  test('when finance starts a run through the API, then it runs as recon-<from>-<to> and its progress and summary are readable', async () => {
    const headers = { ...financeKey, 'content-type': 'application/json' };
    const window = { from: '2026-08-03', to: '2026-08-04', asOf: '2026-08-05' };
    const started = await fetch(`${base}/finance/recon/runs`, { method: 'POST', headers, body: JSON.stringify(window) });
    expect(started.status).toBe(202);
    const { workflowId, runId } = (await started.json()) as { workflowId: string; runId: string };
    expect(workflowId).toBe('recon-2026-08-03-2026-08-04');
    await temporal.client.workflow.getHandle(workflowId, runId).result();

    const read = await fetch(`${base}/finance/recon/runs/${workflowId}`, { headers });
    expect(read.status).toBe(200);
    const body = (await read.json()) as { live: { status: string; progress: unknown }; runs: Array<{ status: string; summary: unknown }> };
    expect(body.live).toMatchObject({ status: 'COMPLETED', progress: { phase: 'completed', daysPulled: 2, rowsFetched: 0 } });
    expect(body.runs).toMatchObject([{ run_id: runId, status: 'completed', from: '2026-08-03', to: '2026-08-04', as_of: '2026-08-05', summary: { exceptions: 0 } }]);

    const unknown = await fetch(`${base}/finance/recon/runs/recon-2020-01-01-2020-01-02`, { headers });
    expect(unknown.status).toBe(404);

    // The day's pull asks Razorpay: it runs on the provider budget's reads queue (issue 22).
    expect(await activityTaskQueues(temporal.client, workflowId)).toMatchObject({
      startReconRun: [temporal.taskQueue], pullReconDay: [providerTaskQueue(temporal.taskQueue, 'reads')], matchReconWindow: [temporal.taskQueue],
    });
    await recordHistory(temporal.client, workflowId, 'recon-window');

    // Deterministic: the recorded history replays against the current bundle.
    const history = await temporal.client.workflow.getHandle(workflowId, runId).fetchHistory();
    await expect(Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, workflowId)).resolves.toBeUndefined();
  });

  test('when a run is cancelled mid-pull, then recon_runs records it failed with how far it got, not running', async () => {
    // The report call is held so the run is certainly pulling when finance cancels it.
    await sb.sandbox.control.injectFault({ endpoint: 'settlements.recon', fault: { kind: 'latency', ms: 3_000 }, calls: [1] });
    const window = { from: '2026-07-06', to: '2026-07-07', asOf: '2026-07-08' };
    const handle = await temporal.client.workflow.start(reconWorkflow, { workflowId: `${reconWorkflowId(window)}-${temporal.taskQueue}`, taskQueue: temporal.taskQueue, args: [window] });
    try {
      await waitFor(async () => (await handle.query(reconProgressQuery)).phase === 'pulling');
      await handle.cancel();
      await expect(handle.result()).rejects.toThrow();
    } finally {
      await sb.sandbox.control.clearFaults();
    }
    const runs = await db.query(`SELECT status, summary, finished_at FROM recon_runs WHERE workflow_id = $1`, [`${reconWorkflowId(window)}-${temporal.taskQueue}`]);
    expect(runs.rows).toMatchObject([{ status: 'failed', summary: { phase: 'pulling', daysPulled: 0 } }]);
    expect(runs.rows[0].finished_at).not.toBeNull();
  });
});
