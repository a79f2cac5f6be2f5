/** `npm run bench:recon [-- 100000,1000000]`: end-to-end reconciliation of N gateway rows on this
 * machine, against a COPY baseline measured in the same run, interleaved.
 *
 * Setup per size (not timed): the Razorpay sandbox in-process, N captured payments over three IST
 * days, settled T+2, the bank statement imported, our side (orders + payments) seeded in bulk, and
 * the gateway's rows fetched once and encoded for the baseline into a file.
 * Baseline (bench/copyBaseline.ts, no shared code): COPY of those rows into a staging table with
 * recon_rows' key. Measured: the pull step alone (`pullReconDay` for every day: every page over
 * HTTP through the SDK, validated, COPYed into a stage, one upsert), then reconWorkflow on a real
 * worker (pull + settlements + match + exceptions), then the same window again (a rerun).
 * Baseline and subjects are interleaved 3 times (medians) below 1,000,000 rows; at 1,000,000 once,
 * with the baseline beside it, to keep the bench within a few minutes on 2 cores. Every line gives
 * the load average and the process's peak RSS in the phase (sandbox state included; `+` is the
 * growth over the RSS the phase started at, i.e. what the measured code itself holds). */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import { NativeConnection } from '@temporalio/worker';
import { createReconActivities } from '../src/activities/recon';
import { loadConfig, type Config } from '../src/config/config';
import { reconWorkflowId } from '../src/contracts/recon';
import { migrate } from '../src/db/migrate';
import { createPool, type Db } from '../src/db/pool';
import { ensureDatabase, startServices } from '../src/devstack/services';
import { istDayBounds } from '../src/domain/calendar';
import { createGateway } from '../src/gateway';
import type { RzpPayment } from '../src/gateway/types';
import { importBankStatement } from '../src/recon/bankStatementImport';
import { startSandbox } from '../src/sandbox';
import { createWorker } from '../src/worker';
import type { reconWorkflow } from '../src/workflows/recon';
import { appendCopyFile, copyBaseline, createBaselineTable } from './copyBaseline';

// Captures on Tue 09-01, Wed 09-02, Thu 09-03 settle Thu 09-03, Fri 09-04 and Sat 09-05 (the 1st Saturday is a working day).
const CAPTURE_DAYS = ['2026-09-01', '2026-09-02', '2026-09-03'];
const WINDOW = { from: '2026-09-01', to: '2026-09-07', asOf: '2026-09-08' };
const WINDOW_DAYS = ['2026-09-01', '2026-09-02', '2026-09-03', '2026-09-04', '2026-09-05', '2026-09-06', '2026-09-07'];
const ONCE_FROM = 1_000_000;

const mb = (bytes: number) => Math.round(bytes / 1048576);
const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (n: number) => Math.round(n).toLocaleString('en-IN');

interface Phase { rows: number; ms: number; peakRss: number; growth: number; load: string }

/** Runs `work`, sampling RSS every 20 ms: peak, and growth over the RSS at the start. */
async function phase(work: () => Promise<number>): Promise<Phase> {
  const startRss = process.memoryUsage.rss();
  let peak = startRss;
  const timer = setInterval(() => { peak = Math.max(peak, process.memoryUsage.rss()); }, 20);
  const t = process.hrtime.bigint();
  try {
    const rows = await work();
    const took = ms(t);
    peak = Math.max(peak, process.memoryUsage.rss());
    return { rows, ms: took, peakRss: peak, growth: peak - startRss, load: load() };
  } finally {
    clearInterval(timer);
  }
}


const ms = (start: bigint): number => Number(process.hrtime.bigint() - start) / 1e6;
const log = (line: string) => process.stdout.write(`${line}\n`);

async function seedAppSide(db: Db, payments: RzpPayment[]): Promise<void> {
  for (let i = 0; i < payments.length; i += 5000) {
    const rows = payments.slice(i, i + 5000).map((p) => {
      const commission = Math.floor((p.amount * 1900 + 5000) / 10000);
      return { id: `ord-${p.id}`, amount: p.amount, commission, net: p.amount - commission, gateway_order_id: p.order_id, payment_id: p.id,
        fee: p.fee, tax: p.tax, paid_at: new Date(p.created_at * 1000).toISOString() };
    });
    const json = JSON.stringify(rows);
    await db.query(
      `INSERT INTO orders (id, client_reference, employer_id, vendor_id, employee_id, total_paise, subsidy_paise, customer_share_paise, commission_bps,
         commission_paise, vendor_net_paise, payment_method, status, gateway_order_id, paid_at)
       SELECT id, id, 'emp-1', 'ven-1', 'e-1', amount, 0, amount, 1900, commission, net, 'online', 'paid', gateway_order_id, paid_at
       FROM jsonb_to_recordset($1::jsonb) AS x(id text, amount bigint, commission bigint, net bigint, gateway_order_id text, paid_at timestamptz)`, [json]);
    await db.query(
      `INSERT INTO payments (id, gateway_order_id, order_id, amount_paise, status, method, fee_paise, tax_paise, captured_at, raw)
       SELECT payment_id, gateway_order_id, id, amount, 'captured', 'card', fee, tax, paid_at, '{}'
       FROM jsonb_to_recordset($1::jsonb) AS x(payment_id text, gateway_order_id text, id text, amount bigint, fee bigint, tax bigint, paid_at timestamptz)`, [json]);
  }
}

async function benchSize(total: number, ctx: { adminUrl: string; temporalAddress: string; base: Config; connection: Connection; client: Client }): Promise<string[]> {
  const { base } = ctx;
  const sandbox = await startSandbox({ keyId: base.RAZORPAY_KEY_ID, keySecret: base.RAZORPAY_KEY_SECRET, webhookSecret: base.RAZORPAY_WEBHOOK_SECRET, port: 0 });
  const config = { ...loadConfig({ ...process.env, RAZORPAY_BASE_URL: sandbox.baseUrl }), BANK_HOLIDAYS: [] as string[], GATEWAY_TIMEOUT_MS: 60_000 };
  const gateway = createGateway(config);
  const suffix = `${total}_${Date.now()}`;
  const db = createPool(await ensureDatabase(ctx.adminUrl, `recon_bench_${suffix}`), 10);
  const baselineDb = createPool(await ensureDatabase(ctx.adminUrl, `recon_bench_base_${suffix}`), 4);
  const copyFile = path.join(os.tmpdir(), `recon-bench-copy-${suffix}.tsv`);
  let workerConnection: NativeConnection | undefined;
  const lines: string[] = [];
  try {
    await Promise.all([migrate(db), migrate(baselineDb)]);
    await createBaselineTable(baselineDb);
    await db.query(`INSERT INTO employers (id, name) VALUES ('emp-1', 'Bench Employer')`);
    await db.query(`INSERT INTO vendors (id, name) VALUES ('ven-1', 'Bench Vendor')`);

    const t = process.hrtime.bigint();
    let payments: RzpPayment[] = [];
    for (const [d, day] of CAPTURE_DAYS.entries()) {
      const perDay = Math.floor(total / CAPTURE_DAYS.length) + (d < total % CAPTURE_DAYS.length ? 1 : 0);
      await sandbox.control.setClock(istDayBounds(day).start.getTime() + 12 * 3_600_000);
      // Checkout in-process (the sandbox's own order): our receipt is absent, so matching takes the gateway-order-id path.
      for (let i = 0; i < perDay; i++) payments.push(await sandbox.control.capturedPaymentWithoutOrder(10_000 + (i % 5000)));
    }
    await sandbox.control.setWebhookDelivery(false);
    for (const date of ['2026-09-03', '2026-09-04', '2026-09-05']) await sandbox.control.runSettlements({ date, holidays: [] });
    const csv = await sandbox.control.bankStatementCsv({ from: WINDOW.from, to: WINDOW.to });
    const imported = await importBankStatement(db, { text: csv, fileName: 'bench.csv', actor: 'bench' });
    if (!imported.ok) throw new Error(JSON.stringify(imported.problems));
    await seedAppSide(db, payments);
    payments = [];
    let gatewayRows = 0;
    fs.writeFileSync(copyFile, '');
    for (const day of WINDOW_DAYS) {
      const [year, month, dd] = day.split('-').map(Number) as [number, number, number];
      const rows = await gateway.settlementReconRows({ year, month, day: dd });
      appendCopyFile(copyFile, rows as unknown as Array<Record<string, unknown>>);
      gatewayRows += rows.length;
    }
    log(`setup ${fmt(total)}: ${fmt(total)} captures, ${fmt(gatewayRows)} gateway rows, 3 settlements, bank statement and app rows seeded in ${(ms(t) / 1000).toFixed(1)} s (not timed); RSS ${mb(process.memoryUsage.rss())} MB`);

    workerConnection = await NativeConnection.connect({ address: ctx.temporalAddress });
    const taskQueue = `recon-bench-${suffix}`;
    const worker = await createWorker({ connection: workerConnection, namespace: 'default', taskQueue, deps: { db, gateway, config } });
    const running = worker.run();
    const activities = createReconActivities({ db, gateway, config });
    const resetRecon = () => db.query('TRUNCATE recon_rows, recon_exception_actions, recon_exceptions, recon_runs, settlements');
    const run = () => ctx.client.workflow.execute<typeof reconWorkflow>('reconWorkflow', { workflowId: `${reconWorkflowId(WINDOW)}-${suffix}-${Date.now()}`, taskQueue, args: [WINDOW] });
    const reps = total >= ONCE_FROM ? 1 : 3;
    const results: Record<'copy' | 'pull' | 'first' | 'rerun', Phase[]> = { copy: [], pull: [], first: [], rerun: [] };
    try {
      for (let rep = 0; rep < reps; rep++) {
        results.copy.push(await phase(async () => (await copyBaseline(baselineDb, copyFile)).rows));
        await resetRecon();
        results.pull.push(await phase(async () => {
          let rows = 0;
          const env = new MockActivityEnvironment();
          for (const day of WINDOW_DAYS) rows += ((await env.run(activities.pullReconDay, { day })) as { rows: number }).rows;
          return rows;
        }));
        await resetRecon();
        results.first.push(await phase(async () => {
          const first = await run();
          if (first.exceptions !== 0 || first.rowsFetched !== gatewayRows) throw new Error(`bench data did not reconcile cleanly (${JSON.stringify(first)}): the measurement is not valid`);
          return first.rowsFetched;
        }));
        results.rerun.push(await phase(async () => (await run()).rowsFetched));
        log(`  ${fmt(total)} rep ${rep + 1}/${reps}: COPY ${(results.copy[rep]!.ms / 1000).toFixed(2)} s, pull ${(results.pull[rep]!.ms / 1000).toFixed(2)} s, first run ${(results.first[rep]!.ms / 1000).toFixed(2)} s, rerun ${(results.rerun[rep]!.ms / 1000).toFixed(2)} s; load ${load()}`);
      }
    } finally {
      worker.shutdown();
      await running;
    }
    const rate = (p: Phase) => p.rows / (p.ms / 1000);
    const copyRate = median(results.copy.map(rate));
    const describe = (p: Phase[]) => `peak RSS ${mb(Math.max(...p.map((x) => x.peakRss)))} MB (+${mb(Math.max(...p.map((x) => x.growth)))} MB in phase); load ${p.map((x) => x.load).join(' | ')}`;
    lines.push(`${fmt(total)} rows | COPY into a keyed staging table (baseline) | ${fmt(copyRate)} rows/s, ${(1e6 / copyRate).toFixed(1)} µs/row | 1.00× | ${describe(results.copy)}${reps === 1 ? ' | once' : ' | median of 3'}`);
    const figures: Array<[keyof typeof results, string]> = [['pull', 'pull step (pullReconDay × 7 days: HTTP pages + COPY stage + one upsert)'], ['first', 'reconWorkflow end to end, first run'], ['rerun', 'reconWorkflow rerun (same window)']];
    for (const [key, label] of figures) {
      const r = median(results[key].map(rate));
      lines.push(`${fmt(total)} rows | ${label} | ${fmt(r)} rows/s, ${(1e6 / r).toFixed(1)} µs/row | ${(r / copyRate).toFixed(2)}× COPY | ${describe(results[key])}${reps === 1 ? ' | once' : ' | median of 3'}`);
    }
    for (const l of lines) log(l);
    return lines;
  } finally {
    await workerConnection?.close();
    await db.end();
    await baselineDb.end();
    await sandbox.close();
    fs.rmSync(copyFile, { force: true });
  }
}

async function main(): Promise<void> {
  const sizes = (process.argv[2] ?? '100000,1000000').split(',').map(Number);
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'recon-bench-'));
  fs.chmodSync(stateDir, 0o777);
  const base = loadConfig();
  log(`recon bench: ${sizes.map(fmt).join(', ')} gateway rows, ${os.cpus().length} cores, node ${process.version}, load ${load()}`);
  const started = process.hrtime.bigint();
  const services = await startServices({ projectRoot: path.resolve(__dirname, '..'), stateDir, persistent: false, temporalPort: 0, temporalUiPort: null, postgresPort: 0, externalDatabaseUrl: base.DATABASE_URL });
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect({ address: services.temporalAddress });
    const client = new Client({ connection, namespace: 'default' });
    const all: string[] = [];
    for (const total of sizes) all.push(...await benchSize(total, { adminUrl: services.adminDatabaseUrl, temporalAddress: services.temporalAddress, base, connection, client }));
    log('');
    log('size | measurement | rows/s | ratio | memory and load');
    for (const l of all) log(l);
    log(`bench took ${(ms(started) / 1000).toFixed(0)} s; process peak RSS ${mb(process.resourceUsage().maxRSS * 1024)} MB; load ${load()}`);
  } finally {
    await connection?.close();
    await services.stop();
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
}

main().then(() => process.exit(0)).catch((err) => {
  console.error(err);
  process.exit(1);
});
