/** `npm run bench:payouts [-- N]`: payouts per second to "transfer accepted", to "settled" and to
 * their runs' completion against a bare workflow with one activity doing one INSERT, on the same Temporal dev server,
 * PostgreSQL and worker settings, interleaved three times (medians), with the load average beside
 * each figure. N payouts per round (default 150), each a paid order with a pending payout and a
 * real linked account in the sandbox (a direct transfer is answered `processed`, as Razorpay's sample
 * is, so the run settles it from that answer; no webhooks). */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection } from '@temporalio/worker';
import { createActivities } from '../src/activities';
import { loadConfig } from '../src/config/config';
import { migrate } from '../src/db/migrate';
import { createPool, type Db } from '../src/db/pool';
import { ensureDatabase, startServices } from '../src/devstack/services';
import { createGateway } from '../src/gateway';
import { payoutStartOptions } from '../src/payouts/temporalStarter';
import { sandboxOptionsFrom, startSandbox } from '../src/sandbox';
import { installRuntime, sdkLogger } from '../src/temporal/runtime';
import { createPayoutWorkers } from '../src/worker';

const log = (line: string) => process.stdout.write(`${line}\n`);

/** CPU seconds (user + system) a process has used, from /proc (Linux). */
function cpuSeconds(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
}
function temporalServerPid(address: string): number {
  const port = address.split(':').pop();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ');
      if (cmd.includes('server start-dev') && cmd.includes(`--port ${port} `)) return Number(entry);
    } catch { /* gone */ }
  }
  throw new Error(`no Temporal dev server process on port ${port}`);
}
const inProcessCpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const load = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`bench: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function seedPaidOrders(db: Db, n: number, account: string, round: number): Promise<string[]> {
  const rows = Array.from({ length: n }, (_, i) => ({ id: `ord_b${round}_${i}_${randomUUID().slice(0, 6)}`, payout: randomUUID() }));
  const json = JSON.stringify(rows);
  await db.query(
    `INSERT INTO orders (id, client_reference, employer_id, vendor_id, employee_id, total_paise, subsidy_paise, customer_share_paise, commission_bps,
       commission_paise, vendor_net_paise, payment_method, status, paid_at)
     SELECT id, id, 'emp_bench', 'ven_bench', 'e-1', 10000, 9900, 100, 1900, 1900, 8100, 'online', 'paid', now()
     FROM jsonb_to_recordset($1::jsonb) AS x(id text, payout text)`, [json]);
  await db.query(
    `INSERT INTO payouts (id, order_id, vendor_id, linked_account_id, amount_paise, idempotency_key)
     SELECT payout::uuid, id, 'ven_bench', $2, 8100, payout FROM jsonb_to_recordset($1::jsonb) AS x(id text, payout text)`, [json, account]);
  await db.query(
    `INSERT INTO offline_ledger (order_id, employer_id, vendor_id, amount_paise, route)
     SELECT id, 'emp_bench', 'ven_bench', 8100, 'direct_transfer' FROM jsonb_to_recordset($1::jsonb) AS x(id text, payout text)`, [json]);
  return rows.map((r) => r.id);
}

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 150);
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'payout-bench-'));
  fs.chmodSync(stateDir, 0o755); // as root, PostgreSQL runs as the postgres user, which must reach its data folder
  const services = await startServices({ projectRoot: path.resolve(__dirname, '..'), stateDir, persistent: false, temporalPort: 0, temporalUiPort: null, postgresPort: 0, externalDatabaseUrl: process.env.DATABASE_URL || undefined });
  const cleanups: Array<() => Promise<unknown>> = [() => services.stop(), async () => fs.rmSync(stateDir, { recursive: true, force: true })];
  try {
    const dbUrl = await ensureDatabase(services.adminDatabaseUrl, `payout_bench_${Date.now()}`);
    const db = createPool(dbUrl, 20);
    cleanups.unshift(() => db.end());
    await migrate(db);
    await db.query(`CREATE TABLE bench_rows (i integer PRIMARY KEY, at timestamptz NOT NULL DEFAULT now())`);
    await db.query(`INSERT INTO employers (id, name) VALUES ('emp_bench', 'Bench')`);
    const sandbox = await startSandbox({ ...sandboxOptionsFrom(loadConfig({})), port: 0, webhookUrl: null, transferProcessingDelayMs: 0 });
    cleanups.unshift(() => sandbox.close());
    const account = await sandbox.control.createLinkedAccount({ name: 'Bench Vendor' });
    await db.query(`INSERT INTO vendors (id, name, linked_account_id) VALUES ('ven_bench', 'Bench', $1)`, [account]);
    await db.query(`INSERT INTO employer_vendor (employer_id, vendor_id, settlement_mode, commission_bps) VALUES ('emp_bench', 'ven_bench', 'platform_transfer', 1900)`);

    const taskQueue = `payout-bench-${Date.now()}`;
    const config = loadConfig({ ...process.env, DATABASE_URL: dbUrl, TEMPORAL_ADDRESS: services.temporalAddress, TEMPORAL_TASK_QUEUE: taskQueue, RAZORPAY_BASE_URL: sandbox.baseUrl,
      PAYOUT_SETTLEMENT_POLL_MS: '200', LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
      // The cost of a payout, not the provider budget: the budget's task queues at a rate the bench never reaches.
      RAZORPAY_WRITE_RPS: '1000', RAZORPAY_READ_RPS: '1000' });
    installRuntime();
    const connection = await NativeConnection.connect({ address: services.temporalAddress });
    const workflowBundle = await bundleWorkflowCode({ workflowsPath: require.resolve('./payoutWorkflows'), logger: sdkLogger() });
    const activities = {
      ...createActivities({ db, config, gateway: createGateway(config) }),
      async benchInsert(i: number) { await db.query('INSERT INTO bench_rows (i) VALUES ($1) ON CONFLICT DO NOTHING', [i]); },
    };
    // The production worker's settings (src/worker.ts createPayoutWorkers).
    const workers = await createPayoutWorkers({ connection, namespace: 'default', taskQueue, workflowBundle, activities, budget: config });
    const running = workers.run();
    cleanups.unshift(async () => { workers.shutdown(); await running; await connection.close(); });
    const client = new Client({ connection: await Connection.connect({ address: services.temporalAddress }) });
    cleanups.unshift(() => client.connection.close());

    const temporalPid = temporalServerPid(services.temporalAddress);
    /** CPU milliseconds per completion: the Temporal server, and this process (worker + sandbox + client). */
    const measured = async <T>(work: () => Promise<T>): Promise<T & { serverMs: number; workerMs: number }> => {
      const [s0, w0] = [cpuSeconds(temporalPid), inProcessCpu()];
      const out = await work();
      return { ...out, serverMs: ((cpuSeconds(temporalPid) - s0) * 1000) / n, workerMs: ((inProcessCpu() - w0) * 1000) / n };
    };
    let next = 0;
    /** One run of each kind, for the shape of its history. */
    let sampleBare = '';
    let samplePayout = '';
    const bare = async (): Promise<{ rate: number }> => {
      const started = performance.now();
      const handles = await Promise.all(Array.from({ length: n }, () => {
        const i = next++;
        return client.workflow.start('benchBareWorkflow', { taskQueue, workflowId: `bare-${i}-${Date.now()}`, args: [i] });
      }));
      await Promise.all(handles.map((h) => h.result()));
      sampleBare = handles[0]!.workflowId;
      return { rate: n / ((performance.now() - started) / 1000) };
    };
    const payouts = async (round: number): Promise<{ accepted: number; settled: number; closed: number }> => {
      const orders = await seedPaidOrders(db, n, account, round);
      const count = async (statuses: string[]) => (await db.query<{ c: number }>('SELECT count(*)::int AS c FROM payouts WHERE order_id = ANY($1) AND status = ANY($2)', [orders, statuses])).rows[0]!.c;
      const started = performance.now();
      const handles = await Promise.all(orders.map((o) => client.workflow.start('payoutWorkflow', payoutStartOptions(taskQueue, o))));
      samplePayout = handles[0]!.workflowId;
      let acceptedAt = 0;
      await until(async () => {
        if (!acceptedAt && (await count(['accepted', 'settled'])) === n) acceptedAt = performance.now();
        return acceptedAt > 0 && (await count(['settled'])) === n;
      }, 300_000, 'payouts to settle');
      const settledAt = performance.now();
      // "Settled" is the row's commit, inside the run's last workflow task; the bare figure is taken
      // at its runs' results, so the payout runs' own results are timed too.
      await Promise.all(handles.map((h) => h.result()));
      const closedAt = performance.now();
      return { accepted: n / ((acceptedAt - started) / 1000), settled: n / ((settledAt - started) / 1000), closed: n / ((closedAt - started) / 1000) };
    };

    // Warm-up (bundle caches, connections, JIT): one small round of each, not counted.
    await bare();
    await payouts(0);
    const results: Array<{ bare: number; accepted: number; settled: number; closed: number; load: string; bareServerMs: number; payoutServerMs: number; bareWorkerMs: number; payoutWorkerMs: number }> = [];
    for (let round = 1; round <= 3; round++) {
      const b = await measured(bare);
      const p = await measured(() => payouts(round));
      results.push({ bare: b.rate, accepted: p.accepted, settled: p.settled, closed: p.closed, load: load(), bareServerMs: b.serverMs, payoutServerMs: p.serverMs, bareWorkerMs: b.workerMs, payoutWorkerMs: p.workerMs });
      log(`round ${round}: bare ${b.rate.toFixed(1)}/s, payouts to accepted ${p.accepted.toFixed(1)}/s, to settled ${p.settled.toFixed(1)}/s, runs closed ${p.closed.toFixed(1)}/s; Temporal server CPU ${b.serverMs.toFixed(1)} vs ${p.serverMs.toFixed(1)} ms, worker process CPU ${b.workerMs.toFixed(1)} vs ${p.workerMs.toFixed(1)} ms per completion (load ${results.at(-1)!.load})`);
    }
    const b = median(results.map((r) => r.bare));
    const a = median(results.map((r) => r.accepted));
    const s = median(results.map((r) => r.settled));
    const c = median(results.map((r) => r.closed));
    log(`\npayouts (N=${n} per round, median of 3, one worker, one Temporal dev server, ${os.cpus().length} cores):`);
    log(`  bare workflow + 1 INSERT activity: ${b.toFixed(1)} completions/s (baseline)            load ${load()}`);
    log(`  payout to "transfer accepted":    ${a.toFixed(1)}/s = ${(a / b).toFixed(2)}× baseline      load ${load()}`);
    log(`  payout to "settled":              ${s.toFixed(1)}/s = ${(s / b).toFixed(2)}× baseline      load ${load()}`);
    log(`  payout runs closed:               ${c.toFixed(1)}/s = ${(c / b).toFixed(2)}× baseline      load ${load()}`);
    log(`  Temporal server CPU per completion: bare ${median(results.map((r) => r.bareServerMs)).toFixed(1)} ms, payout ${median(results.map((r) => r.payoutServerMs)).toFixed(1)} ms`);
    log(`  worker process CPU per completion:  bare ${median(results.map((r) => r.bareWorkerMs)).toFixed(1)} ms, payout ${median(results.map((r) => r.payoutWorkerMs)).toFixed(1)} ms (includes the in-process sandbox)`);
    const shape = async (workflowId: string) => {
      const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
      const count = (has: (e: (typeof events)[number]) => unknown) => events.filter(has).length;
      return `${events.length} events, ${count((e) => e.workflowTaskStartedEventAttributes)} workflow tasks, ${count((e) => e.activityTaskScheduledEventAttributes)} activity tasks, ${count((e) => e.markerRecordedEventAttributes)} markers, ${count((e) => e.upsertWorkflowSearchAttributesEventAttributes)} search-attribute upserts`;
    };
    log(`  history of one run: bare ${await shape(sampleBare)}; payout ${await shape(samplePayout)}`);
    const transfers = await sandbox.control.transfers({ recipient: account });
    const payoutsMade = (await db.query<{ c: number }>(`SELECT count(*)::int AS c FROM payouts`)).rows[0]!.c;
    log(`  exactly-once check: ${transfers.length} transfers for ${payoutsMade} payouts ${transfers.length === payoutsMade ? 'OK' : 'MISMATCH'}`);
    if (transfers.length !== payoutsMade) process.exitCode = 1;
  } finally {
    for (const c of cleanups) await c().catch(() => undefined);
  }
}

main().then(() => process.exit(process.exitCode ?? 0), (err) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
