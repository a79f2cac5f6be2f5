/** The worker and the API as their own processes: the worker alone creates the four Schedules and
 * brings one up to date when config changes; both wait for their dependencies with a deadline and
 * exit non-zero past it; both refuse default secrets against real Razorpay; readiness says why. */
import { Client, Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { MISSED_WEBHOOK_SCHEDULE_ID } from '../../src/contracts/missedWebhookSweep';
import { RECON_SCHEDULE_ID } from '../../src/contracts/recon';
import { SPLIT_TRANSFER_SCHEDULE_ID } from '../../src/contracts/splitTransfer';
import { PAYOUT_SWEEP_SCHEDULE_ID } from '../../src/contracts/sweep';
import { freePort } from '../../src/devstack/ports';
import { ensureDatabase } from '../../src/devstack/postgres';
import { createPool } from '../../src/db/pool';
import { readiness } from '../../src/observability/readiness';
import { createIsolatedDatabase, testServices } from '../support/db';
import { startAppProcess, type AppProcess } from '../support/processes';

describe('production processes: worker boot, Schedules, readiness, start-up refusals', () => {
  let client: Client;
  let dbUrl: string;
  const namespace = `boot-${Date.now()}`;
  const running: AppProcess[] = [];

  beforeAll(async () => {
    dbUrl = await createIsolatedDatabase();
    const connection = await Connection.connect({ address: testServices().temporalAddress });
    // A namespace of its own: Schedule ids are per namespace, and other test files own the
    // default namespace's Schedules.
    await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
    client = new Client({ connection, namespace });
    for (let i = 0; ; i++) {
      try { await client.workflowService.describeNamespace({ namespace }); break; } catch (err) { if (i > 50) throw err; await new Promise((r) => setTimeout(r, 200)); }
    }
  });

  afterAll(async () => {
    await Promise.all(running.map((p) => p.stop()));
    await client?.connection.close();
  });

  const workerEnv = async (extra: Record<string, string> = {}) => ({
    DATABASE_URL: dbUrl,
    TEMPORAL_ADDRESS: testServices().temporalAddress,
    TEMPORAL_NAMESPACE: namespace,
    TEMPORAL_TASK_QUEUE: `boot-${Date.now()}`,
    RAZORPAY_BASE_URL: 'http://127.0.0.1:9', // a sandbox address: no real Razorpay, so sample keys are allowed
    WORKER_HEALTH_PORT: String(await freePort()),
    HTTP_HOST: '127.0.0.1',
    ...extra,
  });

  async function ready(port: string): Promise<{ status: number; body: { ready: boolean; checks: Record<string, { ok: boolean; detail: string }> } }> {
    for (let i = 0; ; i++) {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/ready`);
        const body = await res.json() as { ready: boolean; checks: Record<string, { ok: boolean; detail: string }> };
        if (res.status === 200 || i > 100) return { status: res.status, body };
      } catch (err) {
        if (i > 100) throw err;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  test('when the worker starts alone, then it creates the four Schedules and /ready says so; a changed sweep cadence and a restart update the Schedule', async () => {
    const env = await workerEnv({ PAYOUT_SWEEP_EVERY_MS: '300000' });
    const first = startAppProcess('src/worker.ts', env);
    running.push(first);
    await first.waitFor(/"msg":"worker started"/);
    expect(first.output()).toMatch(/"schedules":\{"payout-sweep":"created","missed-webhook-sweep":"created","split-transfer-sweep":"created","recon-daily":"created"\}/);
    const answer = await ready(env.WORKER_HEALTH_PORT);
    expect(answer.status).toBe(200);
    expect(Object.keys(answer.body.checks)).toEqual(expect.arrayContaining([`schedule:${PAYOUT_SWEEP_SCHEDULE_ID}`, `schedule:${MISSED_WEBHOOK_SCHEDULE_ID}`, `schedule:${RECON_SCHEDULE_ID}`, `schedule:${SPLIT_TRANSFER_SCHEDULE_ID}`, 'database', 'migrations', 'temporal', 'worker']));
    expect((await fetch(`http://127.0.0.1:${env.WORKER_HEALTH_PORT}/health`)).status).toBe(200);
    const ids: string[] = [];
    for await (const s of client.schedule.list()) ids.push(s.scheduleId);
    expect(ids.sort()).toEqual([MISSED_WEBHOOK_SCHEDULE_ID, PAYOUT_SWEEP_SCHEDULE_ID, RECON_SCHEDULE_ID, SPLIT_TRANSFER_SCHEDULE_ID].sort());
    expect((await client.schedule.getHandle(PAYOUT_SWEEP_SCHEDULE_ID).describe()).spec.intervals?.[0]?.every).toBe(300_000);
    expect(await first.stop('SIGTERM')).toBe(0);

    const second = startAppProcess('src/worker.ts', { ...env, PAYOUT_SWEEP_EVERY_MS: '120000' });
    running.push(second);
    await second.waitFor(/"msg":"worker started"/);
    expect(second.output()).toMatch(/"schedules":\{"payout-sweep":"updated","missed-webhook-sweep":"unchanged","split-transfer-sweep":"unchanged","recon-daily":"unchanged"\}/);
    expect((await client.schedule.getHandle(PAYOUT_SWEEP_SCHEDULE_ID).describe()).spec.intervals?.[0]?.every).toBe(120_000);
    await second.stop();
  });

  test('when a test worker opts out with WORKER_SCHEDULES=off, then it touches no Schedule', async () => {
    await client.schedule.getHandle(RECON_SCHEDULE_ID).delete();
    const env = await workerEnv({ WORKER_SCHEDULES: 'off' });
    const worker = startAppProcess('src/worker.ts', env);
    running.push(worker);
    await worker.waitFor(/"msg":"worker started"/);
    expect(worker.output()).not.toMatch(/schedules ensured/);
    const answer = await ready(env.WORKER_HEALTH_PORT);
    expect(answer.body.checks[`schedule:${RECON_SCHEDULE_ID}`]).toBeUndefined();
    const ids: string[] = [];
    for await (const s of client.schedule.list()) ids.push(s.scheduleId);
    expect(ids).not.toContain(RECON_SCHEDULE_ID);
    await worker.stop();
  });

  test('when PostgreSQL is unreachable, then the worker and the API retry with a log line per attempt and exit 1 after the deadline', async () => {
    const deadPort = await freePort();
    const env = { ...(await workerEnv()), DATABASE_URL: `postgres://postgres:postgres@127.0.0.1:${deadPort}/payouts`, STARTUP_CONNECT_DEADLINE_MS: '1500' };
    for (const entry of ['src/worker.ts', 'src/api/main.ts'] as const) {
      const started = Date.now();
      const proc = startAppProcess(entry, { ...env, API_PORT: String(await freePort()) });
      expect(await proc.exited).toBe(1);
      expect(Date.now() - started).toBeGreaterThan(1_400);
      expect(proc.output()).toMatch(/"msg":"waiting for PostgreSQL"/);
      expect(proc.output()).toMatch(/could not connect to PostgreSQL within 1\.5s/);
    }
  });

  test('when Temporal is unreachable, then the worker exits 1 after the deadline naming the address', async () => {
    const deadPort = await freePort();
    const proc = startAppProcess('src/worker.ts', { ...(await workerEnv()), TEMPORAL_ADDRESS: `127.0.0.1:${deadPort}`, STARTUP_CONNECT_DEADLINE_MS: '1500' });
    expect(await proc.exited).toBe(1);
    expect(proc.output()).toMatch(new RegExp(`could not connect to Temporal at 127\\.0\\.0\\.1:${deadPort} within 1\\.5s`));
  });

  test('when the worker or the API would talk to real Razorpay with default secrets, then start-up exits 1 naming every offending key', async () => {
    const env = await workerEnv();
    delete (env as Record<string, string>).RAZORPAY_BASE_URL;
    for (const entry of ['src/worker.ts', 'src/api/main.ts'] as const) {
      const proc = startAppProcess(entry, env);
      expect(await proc.exited).toBe(1);
      for (const key of ['RAZORPAY_KEY_ID', 'RAZORPAY_KEY_SECRET', 'RAZORPAY_WEBHOOK_SECRET']) expect(proc.output()).toContain(`${key}: a default or sample value`);
    }
    // NODE_ENV=production refuses them even with a sandbox URL.
    const prod = startAppProcess('src/api/main.ts', { ...(await workerEnv()), NODE_ENV: 'production', RAZORPAY_WEBHOOK_PREVIOUS_SECRETS: 'sandbox_webhook_secret' });
    expect(await prod.exited).toBe(1);
    expect(prod.output()).toContain('RAZORPAY_WEBHOOK_PREVIOUS_SECRETS: a default or sample value');
  });

  test('when the database is not migrated, then readiness is false and says which migration is missing', async () => {
    const blank = await ensureDatabase(testServices().adminDatabaseUrl, `blank_${Date.now()}`);
    const db = createPool(blank, 1);
    try {
      await db.query('CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text, checksum text, applied_at timestamptz)');
      await db.query(`INSERT INTO schema_migrations VALUES (1, '001_system_probes.sql', 'x', now())`);
      const result = await readiness({ db, temporal: client });
      expect(result.ready).toBe(false);
      expect(result.checks.migrations).toEqual({ ok: false, detail: expect.stringMatching(/database is at migration 1, the code needs \d+: run npm run migrate/) });
      expect(result.checks.database!.ok).toBe(true);
      expect(result.checks.temporal!.ok).toBe(true);
    } finally {
      await db.end();
    }
  });
});
