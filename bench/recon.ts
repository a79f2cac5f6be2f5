/** `npm run bench:recon [-- 100000 1000000]` (sizes as arguments or comma-separated): end-to-end
 * reconciliation of N gateway rows on this machine, against a COPY baseline measured in the same run,
 * interleaved.
 *
 * Setup per size (not timed): a report server in a child process (bench/reconReport.ts: N captured
 * payments over three IST days, settled T+2, generated from their index and served as Razorpay pages),
 * our side (orders + payments) seeded in bulk from the same generator, the bank statement imported,
 * and the gateway's rows fetched once, page by page, and encoded for the baseline into a file.
 * Baseline (bench/copyBaseline.ts, no shared code): COPY of those rows into a staging table with
 * recon_rows' key. Measured: the pull step alone (`pullReconDay` for every day: every page over HTTP
 * through the SDK, validated, COPYed into a stage, one upsert), the match step alone (the SQL of
 * matchInDatabase.ts, per statement), then reconWorkflow on a real worker (pull + settlements + match
 * + exceptions), then the same window again (a rerun). Baseline and subjects are interleaved 3 times
 * (medians) below 1,000,000 rows; at 1,000,000 once, with the baseline beside it, to keep the bench
 * within minutes on 2 cores. Every line gives µs per row, the 1-minute load average per repetition
 * (as `uptime` prints it) and the bench process's peak RSS and V8 heap in the phase, which starts
 * after a full GC (the worker, the pools, the pages in flight; `+` is the growth over the RSS the
 * phase started at, i.e. what the measured code holds). The report server's own peak RSS is given per size. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { Client, Connection } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import { NativeConnection } from '@temporalio/worker';
import { createReconActivities } from '../src/activities/recon';
import { loadConfig, type Config } from '../src/config/config';
import { reconWorkflowId } from '../src/contracts/recon';
import { migrate } from '../src/db/migrate';
import { createPool, type Db } from '../src/db/pool';
import { ensureDatabase, startServices } from '../src/devstack/services';
import { createGateway } from '../src/gateway';
import { importBankStatement } from '../src/recon/bankStatementImport';
import { matchWindowInDatabase } from '../src/recon/matchInDatabase';
import { createFoundExceptionsTable, withFoundExceptions } from '../src/recon/repository';
import { createWorker } from '../src/worker';
import type { reconWorkflow } from '../src/workflows/recon';
import { appendCopyFile, copyBaseline, createBaselineTable } from './copyBaseline';
import { loadAverage, log, median, ratio } from './harness';
import { benchBankStatement, benchPayment, CAPTURE_DAYS, dayShare, startReportServer } from './reconReport';

const WINDOW = { from: '2026-09-01', to: '2026-09-07', asOf: '2026-09-08' };
const WINDOW_DAYS = ['2026-09-01', '2026-09-02', '2026-09-03', '2026-09-04', '2026-09-05', '2026-09-06', '2026-09-07'];
const ONCE_FROM = 1_000_000;
const SEED_CHUNK = 5000;

const mb = (bytes: number) => Math.round(bytes / 1048576);
const fmt = (n: number) => Math.round(n).toLocaleString('en-IN');
const ms = (start: bigint): number => Number(process.hrtime.bigint() - start) / 1e6;
const dayParts = (day: string) => { const [year, month, dd] = day.split('-').map(Number) as [number, number, number]; return { year, month, day: dd }; };

interface Phase { rows: number; ms: number; peakRss: number; growth: number; peakHeap: number; load: string; steps?: Record<string, number> }

/** A full garbage collection, so that every phase starts from the memory that is really held. */
v8.setFlagsFromString('--expose-gc');
const collectGarbage = vm.runInNewContext('gc') as () => void;

/** Runs `work` after a full GC, sampling RSS and heap every 20 ms: peaks, and growth over the start. */
async function phase(work: () => Promise<{ rows: number; steps?: Record<string, number> }>): Promise<Phase> {
  collectGarbage();
  const startRss = process.memoryUsage.rss();
  let peak = startRss;
  let peakHeap = process.memoryUsage().heapUsed;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
    peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
  }, 20);
  const t = process.hrtime.bigint();
  try {
    const { rows, steps } = await work();
    const took = ms(t);
    peak = Math.max(peak, process.memoryUsage.rss());
    return { rows, ms: took, peakRss: peak, growth: peak - startRss, peakHeap, load: loadAverage(), steps };
  } finally {
    clearInterval(timer);
  }
}

/** Our side of the generated payments: paid orders and their captured payments, SEED_CHUNK at a time. */
async function seedAppSide(db: Db, total: number): Promise<void> {
  for (const [d] of CAPTURE_DAYS.entries()) {
    const { first, count } = dayShare(total, d);
    for (let start = first; start < first + count; start += SEED_CHUNK) {
      const rows = [];
      for (let i = start; i < Math.min(first + count, start + SEED_CHUNK); i++) {
        const p = benchPayment(i, d);
        const commission = Math.floor((p.amount * 1900 + 5000) / 10000);
        rows.push({ id: p.orderId, amount: p.amount, commission, net: p.amount - commission, gateway_order_id: p.gatewayOrderId, payment_id: p.id,
          fee: p.fee, tax: p.tax, paid_at: new Date(p.capturedAt * 1000).toISOString() });
      }
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
  await db.query('ANALYZE');
}

/** RECON_BENCH_EXPLAIN=1: the match step's statements under EXPLAIN ANALYZE, in a transaction rolled back. */
async function explainMatch(db: Db): Promise<void> {
  const tx = await db.connect();
  try {
    await tx.query('BEGIN');
    await createFoundExceptionsTable(tx);
    await matchWindowInDatabase(tx, { ...WINDOW, holidays: new Set() }, { explain: (step, plan) => log(`EXPLAIN ANALYZE ${step}:\n${plan}\n`) });
  } finally {
    await tx.query('ROLLBACK');
    tx.release();
  }
}

type Measured = 'copy' | 'pull' | 'match' | 'first' | 'rerun';
interface SizeResult { total: number; reps: number; results: Record<Measured, Phase[]>; reportServerPeakRssMb: number }

async function benchSize(total: number, ctx: { adminUrl: string; temporalAddress: string; base: Config; client: Client }): Promise<SizeResult> {
  const { base } = ctx;
  const report = await startReportServer(total, base.RAZORPAY_KEY_ID, base.RAZORPAY_KEY_SECRET);
  const config = { ...loadConfig({ ...process.env, RAZORPAY_BASE_URL: report.baseUrl }), BANK_HOLIDAYS: [] as string[], GATEWAY_TIMEOUT_MS: 60_000 };
  const gateway = createGateway(config);
  const suffix = `${total}_${Date.now()}`;
  const db = createPool(await ensureDatabase(ctx.adminUrl, `recon_bench_${suffix}`), 10);
  const baselineDb = createPool(await ensureDatabase(ctx.adminUrl, `recon_bench_base_${suffix}`), 4);
  const copyFile = path.join(os.tmpdir(), `recon-bench-copy-${suffix}.tsv`);
  let workerConnection: NativeConnection | undefined;
  try {
    await Promise.all([migrate(db), migrate(baselineDb)]);
    await createBaselineTable(baselineDb);
    await db.query(`INSERT INTO employers (id, name) VALUES ('emp-1', 'Bench Employer')`);
    await db.query(`INSERT INTO vendors (id, name) VALUES ('ven-1', 'Bench Vendor')`);

    const t = process.hrtime.bigint();
    await seedAppSide(db, total);
    const imported = await importBankStatement(db, { text: benchBankStatement(total), fileName: 'bench.csv', actor: 'bench' });
    if (!imported.ok) throw new Error(JSON.stringify(imported.problems));
    let gatewayRows = 0;
    fs.writeFileSync(copyFile, '');
    for (const day of WINDOW_DAYS) {
      for await (const page of gateway.settlementReconPages(dayParts(day))) {
        appendCopyFile(copyFile, page as unknown as Array<Record<string, unknown>>);
        gatewayRows += page.length;
      }
    }
    if (gatewayRows !== total) throw new Error(`the report served ${gatewayRows} rows, not ${total}`);
    log(`setup ${fmt(total)}: ${fmt(total)} captures and gateway rows, 3 settlements, bank statement and app rows seeded in ${(ms(t) / 1000).toFixed(1)} s (not timed); RSS ${mb(process.memoryUsage.rss())} MB`);

    workerConnection = await NativeConnection.connect({ address: ctx.temporalAddress });
    const taskQueue = `recon-bench-${suffix}`;
    const worker = await createWorker({ connection: workerConnection, namespace: 'default', taskQueue, deps: { db, gateway, config } });
    const running = worker.run();
    const activities = createReconActivities({ db, gateway, config });
    const resetRecon = () => db.query('TRUNCATE recon_rows, recon_exception_actions, recon_exceptions, recon_runs, settlements');
    const run = () => ctx.client.workflow.execute<typeof reconWorkflow>('reconWorkflow', { workflowId: `${reconWorkflowId(WINDOW)}-${suffix}-${Date.now()}`, taskQueue, args: [WINDOW] });
    const reps = total >= ONCE_FROM ? 1 : 3;
    const results: Record<Measured, Phase[]> = { copy: [], pull: [], match: [], first: [], rerun: [] };
    try {
      for (let rep = 0; rep < reps; rep++) {
        results.copy.push(await phase(async () => ({ rows: (await copyBaseline(baselineDb, copyFile)).rows })));
        await resetRecon();
        results.pull.push(await phase(async () => {
          let rows = 0;
          const env = new MockActivityEnvironment();
          for (const day of WINDOW_DAYS) rows += ((await env.run(activities.pullReconDay, { day })) as { rows: number }).rows;
          return { rows };
        }));
        await db.query('ANALYZE recon_rows');
        results.match.push(await phase(async () => {
          const window = { ...WINDOW, holidays: new Set<string>() };
          const { found, saved } = await withFoundExceptions(db, `bench-match-${rep}`, window, (tx) => matchWindowInDatabase(tx, window));
          if (saved.exceptions !== 0 || found.matched !== total + 3) throw new Error(`bench data did not reconcile cleanly (${JSON.stringify({ found, saved })}): the measurement is not valid`);
          return { rows: total, steps: found.steps };
        }));
        if (rep === 0 && process.env.RECON_BENCH_EXPLAIN === '1') await explainMatch(db);
        await resetRecon();
        results.first.push(await phase(async () => {
          const first = await run();
          if (first.exceptions !== 0 || first.rowsFetched !== gatewayRows) throw new Error(`bench data did not reconcile cleanly (${JSON.stringify(first)}): the measurement is not valid`);
          return { rows: first.rowsFetched };
        }));
        results.rerun.push(await phase(async () => ({ rows: (await run()).rowsFetched })));
        const took = (k: Measured) => `${(results[k][rep]!.ms / 1000).toFixed(2)} s`;
        log(`  ${fmt(total)} rep ${rep + 1}/${reps}: COPY ${took('copy')}, pull ${took('pull')}, match ${took('match')} (${JSON.stringify(results.match[rep]!.steps)} ms), first run ${took('first')}, rerun ${took('rerun')}; load ${loadAverage()}`);
      }
    } finally {
      worker.shutdown();
      await running;
    }
    return { total, reps, results, reportServerPeakRssMb: await report.peakRssMb() };
  } finally {
    await workerConnection?.close();
    await db.end();
    await baselineDb.end();
    await report.close();
    fs.rmSync(copyFile, { force: true });
  }
}

const LABELS: Record<Measured, string> = {
  copy: 'COPY into a keyed staging table (baseline)',
  pull: 'pull step (pullReconDay × 7 days: HTTP pages + COPY stage + one upsert)',
  match: 'match step (matchInDatabase: set-based SQL + exception upsert)',
  first: 'reconWorkflow end to end, first run',
  rerun: 'reconWorkflow rerun (same window)',
};
const rate = (p: Phase) => p.rows / (p.ms / 1000);

/** A figure beside its baseline, as harness.ratioLine gives them: medians, the ratio, the load per rep. */
function sizeLines(r: SizeResult): string[] {
  const copyRate = median(r.results.copy.map(rate));
  return (Object.keys(LABELS) as Measured[]).map((key) => {
    const phases = r.results[key];
    const x = median(phases.map(rate));
    return `${fmt(r.total)} rows | ${LABELS[key]} | ${fmt(x)} rows/s, ${(1e6 / x).toFixed(1)} µs/row | ${key === 'copy' ? '1.00×' : `${ratio(x, copyRate)} COPY`}`
      + ` | peak RSS ${mb(Math.max(...phases.map((p) => p.peakRss)))} MB (+${mb(Math.max(...phases.map((p) => p.growth)))} MB in phase), peak heap ${mb(Math.max(...phases.map((p) => p.peakHeap)))} MB`
      + ` | load ${phases.map((p) => p.load.split(' ')[0]).join('/')} (1-min, per rep) | ${r.reps === 1 ? 'once' : `median of ${r.reps}`}`;
  });
}

/** Per-row cost from the smallest size to each larger one: flat is 1.00×. */
function flatnessLines(all: SizeResult[]): string[] {
  const [small, ...larger] = all;
  if (!small) return [];
  return larger.flatMap((big) => (Object.keys(LABELS) as Measured[]).map((key) => {
    const usSmall = 1e6 / median(small.results[key].map(rate));
    const usBig = 1e6 / median(big.results[key].map(rate));
    return `${LABELS[key]}: ${usSmall.toFixed(1)} µs/row at ${fmt(small.total)}, ${usBig.toFixed(1)} µs/row at ${fmt(big.total)} (${(usBig / usSmall).toFixed(2)}× per row)`
      + `; peak RSS +${mb(Math.max(...small.results[key].map((p) => p.growth)))} MB → +${mb(Math.max(...big.results[key].map((p) => p.growth)))} MB`
      + `, peak heap ${mb(Math.max(...small.results[key].map((p) => p.peakHeap)))} MB → ${mb(Math.max(...big.results[key].map((p) => p.peakHeap)))} MB`;
  }));
}

async function main(): Promise<void> {
  const args = process.argv.slice(2).flatMap((a) => a.split(',')).filter((a) => a !== '');
  const sizes = (args.length > 0 ? args : ['100000', '1000000']).map(Number);
  if (sizes.some((n) => !Number.isInteger(n) || n < 3)) throw new Error(`sizes must be whole numbers of rows (at least 3): ${args.join(' ')}`);
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'recon-bench-'));
  fs.chmodSync(stateDir, 0o777);
  const base = loadConfig();
  log(`recon bench: ${sizes.map(fmt).join(', ')} gateway rows, ${os.cpus().length} cores, node ${process.version}, load ${loadAverage()}`);
  const started = process.hrtime.bigint();
  const services = await startServices({ projectRoot: path.resolve(__dirname, '..'), stateDir, persistent: false, temporalPort: 0, temporalUiPort: null, postgresPort: 0, externalDatabaseUrl: base.DATABASE_URL });
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect({ address: services.temporalAddress });
    const client = new Client({ connection, namespace: 'default' });
    const all: SizeResult[] = [];
    for (const total of sizes) {
      const r = await benchSize(total, { adminUrl: services.adminDatabaseUrl, temporalAddress: services.temporalAddress, base, client });
      all.push(r);
      for (const l of sizeLines(r)) log(l);
    }
    log('');
    log('size | measurement | rows/s | ratio | memory | load | repetitions');
    for (const r of all) {
      for (const l of sizeLines(r)) log(l);
      log(`${fmt(r.total)} rows | report server (child process, not recon's) | peak RSS ${r.reportServerPeakRssMb} MB`);
    }
    if (all.length > 1) {
      log('');
      for (const l of flatnessLines(all)) log(l);
    }
    log(`bench took ${(ms(started) / 1000).toFixed(0)} s; bench process peak RSS ${mb(process.resourceUsage().maxRSS * 1024)} MB; load ${loadAverage()}`);
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
