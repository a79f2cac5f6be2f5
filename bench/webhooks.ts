/** `npm run bench:webhooks`: POST /webhooks/razorpay under a fixed open load (50/100/200/400 req/s,
 * DURATION_MS each), first deliveries of payment.captured for real orders and duplicates of them,
 * against a raw `INSERT … ON CONFLICT DO NOTHING` behind a tiny Fastify route in the same API
 * process, from the same client, at the same rates. Interleaved three times (baseline, first
 * deliveries, duplicates, per rate); medians; one ratio line per figure with the load average.
 *
 * It starts everything: Temporal dev server and PostgreSQL (startServices), the Razorpay sandbox
 * (in this process: the linked account the payouts behind the load transfer to), the API in its own
 * process (buildApi, with the Temporal payout starter the production wiring gives it), and a worker
 * process (the production worker settings, plus the outbox drainer), so the payouts the captures
 * make due run behind the load, as they would. Orders are seeded in bulk as placed and awaiting
 * payment (pending, a gateway order id each, a pair with a linked account); each first delivery is
 * a signed payment.captured of the customer share for one of them, so the full path runs: event
 * id, order lock, payment row, markPaid, payout row, outbox row, and the payout afterwards.
 * The client: this process, node:http with one keep-alive Agent, loopback only. */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import Fastify from 'fastify';
import { Pool } from 'pg';
import { z } from 'zod';
import { buildApi } from '../src/api/server';
import { loadConfig } from '../src/config/config';
import { migrate } from '../src/db/migrate';
import { createPool } from '../src/db/pool';
import { ensureDatabase, startServices } from '../src/devstack/services';
import { createGateway } from '../src/gateway';
import { hmacSha256Hex } from '../src/gateway/signatures';
import { startOutboxDrainer } from '../src/outbox/drainer';
import { temporalPayoutStarter } from '../src/payouts/temporalStarter';
import { sandboxOptionsFrom, startSandbox } from '../src/sandbox';
import { createWorker } from '../src/worker';
import { childPids, cpuMeter, crossing, keepAliveAgent, loadAverage, log, median, openLoop, pidsWhere, ratioLine, type OpenLoopResult } from './harness';

const RATES = (process.env.BENCH_RATES ?? '50,100,200,400').split(',').map(Number);
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 2_500);
const REPS = Number(process.env.BENCH_REPS ?? 3);
/** Where the payouts the captures make due run while the load is on (all on this machine's cores):
 * `run` (default) the worker and the Temporal server beside the API at equal priority; `nice` at
 * nice 19, standing in for their own hosts (they get what the webhook path leaves); `later` the
 * worker starts after the measured steps (the webhook path alone, as the raw INSERT is), then
 * drains the outbox. */
const PAYOUTS_BEHIND = z.enum(['run', 'nice', 'later']).parse(process.env.BENCH_PAYOUTS_BEHIND ?? 'run');
/** A directory: the API process runs under `node --cpu-prof` and writes its profile there on exit. */
const CPU_PROF_DIR = process.env.BENCH_CPU_PROF;
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const rzp = (prefix: string) => `${prefix}_${Array.from(randomBytes(14), (b) => ALNUM[b % ALNUM.length]).join('')}`;

// ---- child processes: the API (+ the baseline route) and the worker (+ the drainer) ----------

async function serveApi(): Promise<void> {
  const config = loadConfig(process.env);
  const db = createPool(config.DATABASE_URL!, 10);
  const temporal = new Client({ connection: await Connection.connect({ address: config.TEMPORAL_ADDRESS }), namespace: config.TEMPORAL_NAMESPACE });
  const api = await buildApi({ config, db, gateway: createGateway(config), temporal, payoutStarter: temporalPayoutStarter(temporal, config.TEMPORAL_TASK_QUEUE, db) });
  await api.listen({ port: 0, host: '127.0.0.1' });
  // The baseline: Fastify and pg, nothing of the app. Same pool size as the API's.
  const raw = new Pool({ connectionString: config.DATABASE_URL, max: 10 });
  const baseline = Fastify({ logger: false });
  baseline.post('/baseline', async (req) => {
    const id = (req.headers['x-razorpay-event-id'] as string | undefined) ?? '';
    await raw.query('INSERT INTO bench_raw_events (event_id) VALUES ($1) ON CONFLICT DO NOTHING', [id]);
    return { ok: true };
  });
  await baseline.listen({ port: 0, host: '127.0.0.1' });
  // A clean exit, so that --cpu-prof writes its profile.
  process.once('SIGTERM', () => { void Promise.allSettled([api.close(), baseline.close()]).then(() => process.exit(0)); });
  const port = (s: typeof api) => (s.server.address() as { port: number }).port;
  process.stdout.write(`${JSON.stringify({ api: port(api), baseline: port(baseline) })}\n`);
}

async function serveWorker(): Promise<void> {
  const config = loadConfig(process.env);
  const db = createPool(config.DATABASE_URL!, 10);
  const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
  const client = new Client({ connection: await Connection.connect({ address: config.TEMPORAL_ADDRESS }), namespace: config.TEMPORAL_NAMESPACE });
  const worker = await createWorker({ connection, namespace: config.TEMPORAL_NAMESPACE, taskQueue: config.TEMPORAL_TASK_QUEUE, deps: { db, config, gateway: createGateway(config) } });
  const drainer = startOutboxDrainer({ db, payoutStarter: temporalPayoutStarter(client, config.TEMPORAL_TASK_QUEUE, db) });
  process.stdout.write('worker ready\n');
  process.once('SIGTERM', () => { void drainer.stop().then(() => worker.shutdown()); });
  await worker.run();
  process.exit(0);
}

function child(mode: 'api' | 'worker', env: Record<string, string>): { proc: ChildProcess; firstLine: Promise<string> } {
  const profile = mode === 'api' && CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF_DIR}`] : [];
  const proc = spawn(process.execPath, [...profile, ...process.execArgv, __filename, mode], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const firstLine = new Promise<string>((resolve, reject) => {
    proc.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.startsWith('{"api"') || l === 'worker ready');
      if (line) resolve(line);
    });
    proc.once('exit', (code) => reject(new Error(`${mode} exited (${code}) before it was ready:\n${out.slice(-3000)}`)));
  });
  proc.stderr!.on('data', (chunk: Buffer) => { if (process.env.BENCH_VERBOSE) process.stderr.write(chunk); });
  return { proc, firstLine };
}

/** Every thread of `pid` (setpriority on Linux is per thread; threads started later inherit it). */
function niceEveryThread(pid: number, nice: number): void {
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try { os.setPriority(Number(tid), nice); } catch { /* gone */ }
  }
}

// ---- the bench --------------------------------------------------------------------------------

async function main(): Promise<void> {
  const t0 = performance.now();
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'webhook-bench-'));
  fs.chmodSync(stateDir, 0o755);
  const services = await startServices({ projectRoot: path.resolve(__dirname, '..'), stateDir, persistent: false, temporalPort: 0, temporalUiPort: null, postgresPort: 0, externalDatabaseUrl: process.env.DATABASE_URL || undefined });
  const cleanups: Array<() => Promise<unknown>> = [() => services.stop(), async () => fs.rmSync(stateDir, { recursive: true, force: true })];
  const children: ChildProcess[] = [];
  try {
    const dbUrl = await ensureDatabase(services.adminDatabaseUrl, `webhook_bench_${Date.now()}`);
    const db = createPool(dbUrl, 4);
    cleanups.unshift(() => db.end());
    await migrate(db);
    await db.query('CREATE TABLE bench_raw_events (event_id text PRIMARY KEY, at timestamptz NOT NULL DEFAULT now())');

    const base = loadConfig({});
    const sandbox = await startSandbox({ ...sandboxOptionsFrom(base), port: 0, webhookUrl: null, transferProcessingDelayMs: 0 });
    cleanups.unshift(() => sandbox.close());
    const account = await sandbox.control.createLinkedAccount({ name: 'Bench Vendor' });
    await db.query(`INSERT INTO employers (id, name) VALUES ('emp_bench', 'Bench')`);
    await db.query(`INSERT INTO vendors (id, name, linked_account_id) VALUES ('ven_bench', 'Bench', $1)`, [account]);
    await db.query(`INSERT INTO employer_vendor (employer_id, vendor_id, settlement_mode, commission_bps) VALUES ('emp_bench', 'ven_bench', 'platform_transfer', 1900)`);

    // Orders as placed: ₹100, 90% subsidised, customer share ₹10, awaiting payment on their gateway order.
    const warmup = 150;
    const needed = warmup + REPS * RATES.reduce((n, r) => n + Math.round((r * DURATION_MS) / 1000), 0);
    const orders = Array.from({ length: needed }, (_, i) => ({ id: rzp('ord'), gatewayOrderId: rzp('order'), paymentId: rzp('pay'), eventId: `evt_bench_${i}_${randomBytes(4).toString('hex')}` }));
    for (let i = 0; i < orders.length; i += 5000) {
      await db.query(
        `INSERT INTO orders (id, client_reference, employer_id, vendor_id, employee_id, total_paise, subsidy_paise, customer_share_paise, commission_bps,
           commission_paise, vendor_net_paise, payment_method, status, gateway_order_id)
         SELECT id, id, 'emp_bench', 'ven_bench', 'e-bench', 10000, 9000, 1000, 1900, 1900, 8100, 'online', 'pending', gateway_order_id
           FROM jsonb_to_recordset($1::jsonb) AS x(id text, "gatewayOrderId" text) CROSS JOIN LATERAL (SELECT x."gatewayOrderId" AS gateway_order_id) g`,
        [JSON.stringify(orders.slice(i, i + 5000))]);
    }

    const taskQueue = `webhook-bench-${Date.now()}`;
    const env = {
      DATABASE_URL: dbUrl, TEMPORAL_ADDRESS: services.temporalAddress, TEMPORAL_TASK_QUEUE: taskQueue, RAZORPAY_BASE_URL: sandbox.baseUrl,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'error', PAYOUT_SETTLEMENT_POLL_MS: '1000',
    };
    const api = child('api', env);
    children.push(api.proc);
    const startWorker = async () => {
      const started = child('worker', env);
      children.push(started.proc);
      await started.firstLine;
      return started;
    };
    let worker = PAYOUTS_BEHIND === 'later' ? undefined : await startWorker();
    const ports = JSON.parse(await api.firstLine) as { api: number; baseline: number };
    const temporalPort = services.temporalAddress.split(':').pop();
    const temporalPids = pidsWhere((cmd) => cmd.includes('server start-dev') && cmd.includes(`--port ${temporalPort} `));
    if (PAYOUTS_BEHIND === 'nice') for (const pid of [worker!.proc.pid!, ...temporalPids]) niceEveryThread(pid, 19);
    log(`setup: Temporal + PostgreSQL + sandbox + API process + worker process (drainer; payouts behind the load: ${PAYOUTS_BEHIND}), ${orders.length} pending orders seeded in ${((performance.now() - t0) / 1000).toFixed(1)} s; load ${loadAverage()}`);

    const secret = base.RAZORPAY_WEBHOOK_SECRET;
    const created = Math.floor(Date.now() / 1000);
    const bodyOf = (o: (typeof orders)[number]) => JSON.stringify({
      entity: 'event', account_id: base.RAZORPAY_PLATFORM_ACCOUNT_ID, event: 'payment.captured', contains: ['payment'], created_at: created,
      payload: { payment: { entity: {
        id: o.paymentId, entity: 'payment', amount: 1000, currency: 'INR', status: 'captured', order_id: o.gatewayOrderId, method: 'upi',
        captured: true, fee: 20, tax: 0, notes: [], created_at: created - 5,
      } } },
    });
    const signed = orders.map((o) => { const body = bodyOf(o); return { body, headers: { 'content-type': 'application/json', 'x-razorpay-event-id': o.eventId, 'x-razorpay-signature': hmacSha256Hex(body, secret) } }; });
    const agent = keepAliveAgent();
    let nextOrder = 0;
    const delivered: number[] = [];
    const first = (rate: number) => {
      const from = nextOrder;
      nextOrder += Math.round((rate * DURATION_MS) / 1000);
      return openLoop({ host: '127.0.0.1', port: ports.api, rate, durationMs: DURATION_MS, agent, request: (i) => { delivered.push(from + i); return { path: '/webhooks/razorpay', ...signed[from + i]! }; } });
    };
    const duplicate = (rate: number) => openLoop({ host: '127.0.0.1', port: ports.api, rate, durationMs: DURATION_MS, agent,
      request: (i) => ({ path: '/webhooks/razorpay', ...signed[delivered[i % delivered.length]!]! }) });
    let baselineSeq = 0;
    const baseline = (rate: number) => openLoop({ host: '127.0.0.1', port: ports.baseline, rate, durationMs: DURATION_MS, agent,
      request: () => ({ path: '/baseline', body: '{}', headers: { 'content-type': 'application/json', 'x-razorpay-event-id': `evt_raw_${baselineSeq++}` } }) });
    const pause = () => new Promise((r) => setTimeout(r, 300));

    // Warm-up (not counted): JIT, pools, keep-alive sockets.
    const warm = await openLoop({ host: '127.0.0.1', port: ports.api, rate: 50, durationMs: (warmup / 50) * 1000, agent, request: (i) => { delivered.push(i); return { path: '/webhooks/razorpay', ...signed[i]! }; } });
    nextOrder = warmup;
    await baseline(50);
    log(`warm-up: ${warm.ok}/${warm.scheduled} first deliveries answered, p99 ${warm.p99.toFixed(1)} ms; load ${loadAverage()}`);

    // Which process's CPU each step used (everything runs on this machine's cores): the API, PostgreSQL
    // (the postmaster's processes), the Temporal dev server, the worker, and this process (the load
    // generator and the sandbox).
    const postmaster = pidsWhere((cmd) => cmd.includes(`-D ${path.join(stateDir, 'postgres')} `));
    const ourBackends = () => pidsWhere((cmd) => cmd.startsWith('postgres: ') && cmd.includes(` ${new URL(dbUrl).pathname.slice(1)} `));
    const meter = cpuMeter({
      api: () => [api.proc.pid!], postgres: () => (postmaster.length > 0 ? [...postmaster, ...childPids(postmaster[0]!)] : ourBackends()),
      temporal: () => temporalPids, worker: () => (worker ? [worker.proc.pid!] : []), bench: () => [process.pid],
    });
    const results = new Map<string, OpenLoopResult[]>();
    const cpu = new Map<string, Array<Record<string, number>>>();
    const add = (k: string, r: OpenLoopResult) => results.set(k, [...(results.get(k) ?? []), r]);
    const measured = async (k: string, step: () => Promise<OpenLoopResult>) => {
      meter.start();
      const r = await step();
      const used = meter.stop();
      cpu.set(k, [...(cpu.get(k) ?? []), Object.fromEntries(Object.entries(used).map(([name, s]) => [name, (s * 1000) / Math.max(1, r.ok)]))]);
      add(k, r);
    };
    for (let rep = 0; rep < REPS; rep++) {
      for (const rate of RATES) {
        await measured(`base-${rate}`, () => baseline(rate)); await pause();
        await measured(`first-${rate}`, () => first(rate)); await pause();
        await measured(`dup-${rate}`, () => duplicate(rate)); await pause();
      }
      log(`rep ${rep + 1}/${REPS} done at ${((performance.now() - t0) / 1000).toFixed(0)} s; load ${loadAverage()}`);
    }

    log(`\nwebhook bench (${REPS} interleaved reps of ${DURATION_MS} ms per rate, medians; payouts behind the load: ${PAYOUTS_BEHIND}; latency from each request's scheduled send; load = 1-min loadavg at each rep's end)`);
    for (const kind of ['first', 'dup'] as const) {
      for (const rate of RATES) {
        log(ratioLine(`${kind === 'first' ? 'first delivery' : 'duplicate'} @${rate} req/s`, results.get(`${kind}-${rate}`)!, results.get(`base-${rate}`)!));
      }
    }
    log(`\nCPU per answered request (ms, median of reps; a step's own work and whatever ran beside it, e.g. the payouts earlier captures made due; ${os.cpus().length} cores = ${os.cpus().length * 1000} ms per second)`);
    for (const kind of ['first', 'dup', 'base'] as const) {
      for (const rate of RATES) {
        const runs = cpu.get(`${kind}-${rate}`)!;
        const names = Object.keys(runs[0]!);
        const per = Object.fromEntries(names.map((n) => [n, median(runs.map((r) => r[n]!))]));
        const total = names.reduce((t, n) => t + per[n]!, 0);
        log(`  ${kind === 'first' ? 'first delivery' : kind === 'dup' ? 'duplicate' : 'raw INSERT'} @${rate} req/s: ${names.map((n) => `${n} ${per[n]!.toFixed(2)}`).join(', ')}; total ${total.toFixed(2)} ms = ${((total * rate) / 1000).toFixed(2)} cores at the offered rate`);
      }
    }
    const p99s = (k: string) => RATES.map((r) => median(results.get(`${k}-${r}`)!.map((x) => x.p99)));
    log(`first deliveries: ${crossing(RATES, p99s('first'))}; duplicates: ${crossing(RATES, p99s('dup'))}; raw INSERT: ${crossing(RATES, p99s('base'))}; load ${loadAverage()}`);

    // What the load left behind it: every capture has a payout; the outbox drains.
    const answered = new Set(delivered).size;
    if (!worker) worker = await startWorker();
    const deadline = Date.now() + (PAYOUTS_BEHIND === 'later' ? 180_000 : 15_000);
    let left = -1;
    while (Date.now() < deadline) {
      left = (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM payouts_outbox')).rows[0]!.n;
      if (left === 0) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const statuses = (await db.query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM payouts GROUP BY status ORDER BY status')).rows;
    log(`behind the load: ${answered} orders captured, ${statuses.reduce((n, s) => n + s.n, 0)} payouts (${statuses.map((s) => `${s.status} ${s.n}`).join(', ')}), outbox rows left ${left} (${((performance.now() - t0) / 1000).toFixed(0)} s total); load ${loadAverage()}`);
    agent.destroy();
  } finally {
    for (const c of children) c.kill('SIGTERM');
    await Promise.all(children.map((c) => new Promise((r) => { if (c.exitCode !== null) r(null); else { const t = setTimeout(() => { c.kill('SIGKILL'); r(null); }, 5_000); c.once('exit', () => { clearTimeout(t); r(null); }); } })));
    for (const cleanup of cleanups) await cleanup().catch(() => {});
  }
}

const mode = process.argv[2];
const entry = mode === 'api' ? serveApi : mode === 'worker' ? serveWorker : main;
entry().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
