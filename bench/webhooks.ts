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
import type { ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { lowerCpuPriority } from '../src/startup/cpuPriority';
import { appChild, closeBenchWorld, seedPendingOrders, startBenchWorld } from './appProcesses';
import { childPids, cpuMeter, crossing, keepAliveAgent, loadAverage, log, median, openLoop, pidsWhere, ratioLine, runBench, type OpenLoopResult } from './harness';

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

// ---- the bench --------------------------------------------------------------------------------

async function main(): Promise<void> {
  const t0 = performance.now();
  const world = await startBenchWorld('webhook-bench', false);
  const { services, stateDir, dbUrl, db, base, sandbox } = world;
  const children: ChildProcess[] = [];
  try {
    const warmup = 150;
    const needed = warmup + REPS * RATES.reduce((n, r) => n + Math.round((r * DURATION_MS) / 1000), 0);
    const orders = await seedPendingOrders(db, needed, base);

    const taskQueue = `webhook-bench-${Date.now()}`;
    const env = {
      DATABASE_URL: dbUrl, TEMPORAL_ADDRESS: services.temporalAddress, TEMPORAL_TASK_QUEUE: taskQueue, RAZORPAY_BASE_URL: sandbox.baseUrl,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'error', PAYOUT_SETTLEMENT_POLL_MS: '1000',
    };
    const api = appChild('api', env, CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF_DIR}`] : []);
    children.push(api.proc);
    const startWorker = async () => {
      const started = appChild('worker', env);
      children.push(started.proc);
      await started.firstLine;
      return started;
    };
    let worker = PAYOUTS_BEHIND === 'later' ? undefined : await startWorker();
    const ports = JSON.parse(await api.firstLine) as { api: number; baseline: number };
    const temporalPort = services.temporalAddress.split(':').pop();
    const temporalPids = pidsWhere((cmd) => cmd.includes('server start-dev') && cmd.includes(`--port ${temporalPort} `));
    if (PAYOUTS_BEHIND === 'nice') for (const pid of [worker!.proc.pid!, ...temporalPids]) lowerCpuPriority(19, pid);
    log(`setup: Temporal + PostgreSQL + sandbox + API process + worker process (drainer; payouts behind the load: ${PAYOUTS_BEHIND}), ${orders.length} pending orders seeded in ${((performance.now() - t0) / 1000).toFixed(1)} s; load ${loadAverage()}`);

    const signed = orders.map((o) => o.capture);
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
    await closeBenchWorld(world, children);
  }
}

runBench(main);
