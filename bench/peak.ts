/** `npm run bench:peak`: a lunch peak against the sandbox with its rate limit on (issue 22).
 *
 * PEAK_ORDERS captures arrive over PEAK_SECONDS (default 1,200 in 60 s: 20/s, a 10,000-in-5-minutes
 * peak compressed to what 2 cores hold) as signed payment.captured webhooks posted to the API, open
 * loop, while the payouts they make due drain behind them through the provider budget
 * (RAZORPAY_WRITE_RPS, default 8/s) to a sandbox that refuses past its own limit
 * (BENCH_SANDBOX_WRITE_RPS 10/s, BENCH_SANDBOX_READ_RPS 25/s: above the app's writes, and above its
 * reads plus one capture fetch per transfer). Everything runs on this machine: the API and the
 * worker as their own processes (bench/appProcesses.ts), the Temporal dev server and PostgreSQL
 * with the durability the product ships with (fsync and synchronous commits on, Temporal on its
 * SQLite file: startServices persistent), the sandbox and the load in this process.
 *
 * Each capture is a real sandbox payment (orders created and paid at the sandbox before the peak,
 * their webhooks held back), so each payout confirms its capture with Razorpay and sends a direct
 * transfer; the transfer's processed webhook settles it.
 *
 * Figures, each beside the baseline measured in the same run:
 * - the drain rate (transfers per second at the sandbox between 10% and 90% of the peak's) against
 *   the configured write rate;
 * - transfers refused by the sandbox's limiter (429) — 0 when the app's budget is below it;
 * - webhook p50/p99 per 10-second window of the peak against a raw `INSERT … ON CONFLICT` route in
 *   the same API process at the same rate just before it;
 * - the API's and the worker's resident memory at the peak's start, its highest, and after the drain;
 * - time from the capture webhook to the payout settled, p50/p95/max;
 * - provider calls per 1,000 orders, by endpoint.
 *
 * PEAK_SCHEDULE=hourly runs the same peak with the pair on an hourly schedule (issue 22 item 4): the
 * orders join the hour's batch, ops close it once the peak is in (as the cutoff would: the bench is
 * shorter than the hour), and one transfer pays the batch. Run it beside the default per_order run:
 * the calls per 1,000 orders and the drain time side by side.
 *
 * The payouts run in the background by default (the worker at WORKER_CPU_NICE=10, the Temporal
 * server at nice 10: docs/production.md, "Sharing a host with the API"); PEAK_PAYOUTS_PRIORITY=equal
 * runs them at the API's priority. PEAK_ROUNDS=2 runs the peak twice and prints the memory after each
 * round's drain: a working set comes back to the same level, a leak grows. */
import type { ChildProcess } from 'node:child_process';
import { z } from 'zod';
import { createSdk } from '../src/gateway/sdkClient';
import { hmacSha256Hex } from '../src/gateway/signatures';
import { Client, Connection } from '@temporalio/client';
import { signalCloseBatchNow } from '../src/payouts/batchStarter';
import { appChild, closeBenchWorld, startBenchWorld, type BenchWorld } from './appProcesses';
import { lowerCpuPriority } from '../src/startup/cpuPriority';
import { keepAliveAgent, loadAverage, log, openLoop, percentile, pidsWhere, providerBudgetKnobs, ratio, rssMb, runBench, type OpenLoopResult } from './harness';

const settings = z.object({
  PEAK_ORDERS: z.coerce.number().int().min(10).default(1_200),
  PEAK_SECONDS: z.coerce.number().min(5).default(60),
  ...providerBudgetKnobs,
  /** Give up waiting for the drain this long after the peak ends (default: twice the time the budget needs, plus a minute). */
  BENCH_DRAIN_TIMEOUT_S: z.coerce.number().min(1).optional(),
  PEAK_SCHEDULE: z.enum(['per_order', 'hourly']).default('per_order'),
  /** `background` (default): the worker at WORKER_CPU_NICE=10 and the Temporal server at nice 10, as
   * docs/production.md runs the payouts on a host they share with the API; `equal`: everything at
   * the same priority. */
  PEAK_PAYOUTS_PRIORITY: z.enum(['background', 'equal']).default('background'),
  /** 1: sample the database's wait events through the first window (see samplePgWaits). */
  PEAK_PG_WAITS: z.enum(['0', '1']).default('0').transform((v) => v === '1'),
  /** The same peak this many times, each after the last has drained: memory that is a working set
   * comes back to the same level after each; a leak grows with each round. */
  PEAK_ROUNDS: z.coerce.number().int().min(1).max(5).default(1),
}).parse(process.env);

const PAYOUTS_NICE = settings.PEAK_PAYOUTS_PRIORITY === 'background' ? 10 : 0;

const WINDOW_S = 10;

async function main(): Promise<void> {
  const t0 = performance.now();
  const since = () => `${((performance.now() - t0) / 1000).toFixed(0)} s`;
  const world = await startBenchWorld('peak-bench', true);
  const { services, dbUrl, db, base, sandbox } = world;
  const children: ChildProcess[] = [];
  try {
    const durability = (await db.query<{ fsync: string; synchronous_commit: string }>(`SELECT current_setting('fsync') AS fsync, current_setting('synchronous_commit') AS synchronous_commit`)).rows[0]!;
    const rounds = settings.PEAK_ROUNDS;
    await sandbox.control.setPlatformBalance(settings.PEAK_ORDERS * rounds * 10_000 * 2);

    // The peak's orders: created and paid at the sandbox (unlimited while the world is set up), their
    // webhooks recorded but never delivered by the sandbox: the bench posts each capture itself.
    const n = settings.PEAK_ORDERS;
    const total = n * rounds;
    await sandbox.control.injectWebhookFault('lose', { events: ['payment.authorized', 'payment.captured', 'order.paid'], count: 3 * total });
    const sdk = createSdk({ ...base, RAZORPAY_BASE_URL: sandbox.baseUrl });
    const orders: Array<{ id: string; gatewayOrderId: string }> = [];
    for (let i = 0; i < total; i += 50) {
      orders.push(...await Promise.all(Array.from({ length: Math.min(50, total - i) }, async (_, j) => {
        const id = `ord_peak_${i + j}`;
        const order = await sdk.orders.create({ amount: 1_000, currency: 'INR', receipt: id }) as { id: string };
        await sandbox.control.payOrder(order.id);
        return { id, gatewayOrderId: order.id };
      })));
    }
    await db.query(
      `INSERT INTO orders (id, client_reference, employer_id, vendor_id, employee_id, total_paise, subsidy_paise, customer_share_paise, commission_bps,
         commission_paise, vendor_net_paise, payment_method, status, gateway_order_id)
       SELECT id, id, 'emp_bench', 'ven_bench', 'e-bench', 10000, 9000, 1000, 1900, 1900, 8100, 'online', 'pending', "gatewayOrderId"
         FROM jsonb_to_recordset($1::jsonb) AS x(id text, "gatewayOrderId" text)`, [JSON.stringify(orders)]);
    await db.query(`UPDATE employer_vendor SET payout_schedule = $1 WHERE employer_id = 'emp_bench' AND vendor_id = 'ven_bench'`, [settings.PEAK_SCHEDULE]);
    const byGatewayOrder = new Map(orders.map((o) => [o.gatewayOrderId, o.id]));
    const allCaptures = (await sandbox.control.webhookEvents()).filter((e) => e.event === 'payment.captured').map((e) => {
      const gatewayOrderId = (JSON.parse(e.body) as { payload: { payment: { entity: { order_id: string } } } }).payload.payment.entity.order_id;
      return { orderId: byGatewayOrder.get(gatewayOrderId)!, body: e.body, eventId: e.id };
    });
    if (allCaptures.length !== total) throw new Error(`expected ${total} captures at the sandbox, found ${allCaptures.length}`);

    const env = {
      DATABASE_URL: dbUrl, TEMPORAL_ADDRESS: services.temporalAddress, TEMPORAL_TASK_QUEUE: `peak-bench-${Date.now()}`, RAZORPAY_BASE_URL: sandbox.baseUrl,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'error', RAZORPAY_WRITE_RPS: String(settings.RAZORPAY_WRITE_RPS), RAZORPAY_READ_RPS: String(settings.RAZORPAY_READ_RPS),
      WORKER_CPU_NICE: String(PAYOUTS_NICE),
    };
    const api = appChild('api', env);
    const worker = appChild('worker', env);
    children.push(api.proc, worker.proc);
    const ports = JSON.parse(await api.firstLine) as { api: number; baseline: number };
    await worker.firstLine;
    const temporalPort = services.temporalAddress.split(':').pop();
    for (const pid of pidsWhere((cmd) => cmd.includes('server start-dev') && cmd.includes(`--port ${temporalPort} `))) lowerCpuPriority(PAYOUTS_NICE, pid);
    // From here the sandbox answers as Razorpay's limiter would, and delivers its own webhooks (the
    // transfers' processed events) to the API.
    await sandbox.control.setRateLimit({ writeRps: settings.BENCH_SANDBOX_WRITE_RPS, readRps: settings.BENCH_SANDBOX_READ_RPS, burst: settings.BENCH_SANDBOX_BURST });
    await sandbox.control.setWebhookTarget(`http://127.0.0.1:${ports.api}/webhooks/razorpay`);
    log(`setup (${since()}): PostgreSQL fsync=${durability.fsync} synchronous_commit=${durability.synchronous_commit}, Temporal on its SQLite file; payouts' priority ${settings.PEAK_PAYOUTS_PRIORITY} (worker and Temporal at nice ${PAYOUTS_NICE}); ${n} orders paid at the sandbox for each of ${rounds} round(s); app budget writes ${settings.RAZORPAY_WRITE_RPS}/s reads ${settings.RAZORPAY_READ_RPS}/s; sandbox limit writes ${settings.BENCH_SANDBOX_WRITE_RPS}/s reads ${settings.BENCH_SANDBOX_READ_RPS}/s (burst ${settings.BENCH_SANDBOX_BURST}); load ${loadAverage()}`);

    const agent = keepAliveAgent();
    const rate = n / settings.PEAK_SECONDS;
    const windows = Math.ceil(settings.PEAK_SECONDS / WINDOW_S);
    const perWindow = Math.ceil(n / windows);
    // The baseline: the raw INSERT route at the peak's rate for one window, just before it.
    let rawSeq = 0;
    const baseline = await openLoop({ host: '127.0.0.1', port: ports.baseline, rate, durationMs: WINDOW_S * 1000, agent,
      request: () => ({ path: '/baseline', body: '{}', headers: { 'content-type': 'application/json', 'x-razorpay-event-id': `evt_raw_${rawSeq++}` } }) });
    log(`baseline (raw INSERT @${rate.toFixed(1)} req/s for ${WINDOW_S} s): p50 ${baseline.p50.toFixed(1)} ms, p99 ${baseline.p99.toFixed(1)} ms, ${baseline.errors} errors; load ${loadAverage()}`);

    const afterRounds: Array<{ api: number; worker: number }> = [];
    let settled = 0;
    const peak: PeakSetup = { world, api, worker, apiPort: ports.api, taskQueue: env.TEMPORAL_TASK_QUEUE, agent, baseline, rate, windows, perWindow, n, rounds, since };
    for (let round = 1; round <= rounds; round++) {
      const result = await runRound(peak, allCaptures.slice((round - 1) * n, round * n), round);
      settled = result.settled;
      afterRounds.push(result.after);
    }
    if (rounds > 1) log(`\nmemory (RSS) after each round's drain: API ${afterRounds.map((m) => m.api.toFixed(0)).join(' → ')} MB; worker ${afterRounds.map((m) => m.worker.toFixed(0)).join(' → ')} MB`);
    agent.destroy();
    if (settled < total) process.exitCode = 1;
  } finally {
    await closeBenchWorld(world, children);
  }
}

/** Diagnosis (PEAK_PG_WAITS=1): what the database's active sessions wait on, sampled every 20 ms
 * from the peak's start to its first window's end, with the checkpoints done meanwhile. The cold
 * first window's slow answers are the API's own (its event loop stays under ~30 ms of delay) and
 * are spent in the database: this says where. */
function samplePgWaits(db: BenchWorld['db']): { stop(): Promise<string> } {
  const waits = new Map<string, number>();
  let sampling = true;
  const checkpoints = () => db.query<{ n: string }>('SELECT num_done::text AS n FROM pg_stat_checkpointer').then((r) => r.rows[0]?.n ?? '?', () => '?');
  const before = checkpoints();
  const loop = (async () => {
    while (sampling) {
      const { rows } = await db.query<{ k: string }>(
        `SELECT coalesce(wait_event_type, 'CPU') || ':' || coalesce(wait_event, '-') || ' | ' || left(regexp_replace(query, '\\s+', ' ', 'g'), 70) AS k
           FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid()`);
      for (const r of rows) waits.set(r.k, (waits.get(r.k) ?? 0) + 1);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  return {
    async stop() {
      sampling = false;
      await loop;
      const top = [...waits].sort((a, b) => b[1] - a[1]).slice(0, 15).map(([k, n]) => `  ${String(n).padStart(4)}  ${k}`);
      return `database sessions in window 1, sampled every 20 ms (checkpoints done before ${await before}, after ${await checkpoints()}):\n${top.join('\n')}`;
    },
  };
}

/** What every round of the peak shares: the processes, the open-loop client and the baseline. */
interface PeakSetup {
  world: BenchWorld;
  api: { proc: ChildProcess };
  worker: { proc: ChildProcess };
  apiPort: number;
  taskQueue: string;
  agent: ReturnType<typeof keepAliveAgent>;
  baseline: OpenLoopResult;
  rate: number;
  windows: number;
  perWindow: number;
  n: number;
  rounds: number;
  since: () => string;
}

type Capture = { orderId: string; body: string; eventId: string };

/** One peak: its captures posted window by window, then the drain waited for and every figure
 * printed. Returns the payouts settled so far (all rounds) and the memory after the drain. */
async function runRound(p: PeakSetup, captures: readonly Capture[], round: number): Promise<{ settled: number; after: { api: number; worker: number } }> {
  const { world: { db, sandbox, services, base }, api, worker, agent, baseline, rate, windows, perWindow, n, rounds, since } = p;
  const callsBefore = await sandbox.control.callCounts();
  const memory = { api: [] as number[], worker: [] as number[] };
  const sampleMemory = () => { memory.api.push(rssMb(api.proc.pid!)); memory.worker.push(rssMb(worker.proc.pid!)); };
  const transferTimes: number[] = [];
  let seenTransfers = (await sandbox.control.transfers()).length;
  const transfersBefore = seenTransfers;
  const watch = setInterval(() => {
    sampleMemory();
    void sandbox.control.transfers().then((ts) => { for (let i = seenTransfers; i < ts.length; i++) transferTimes.push(performance.now()); seenTransfers = Math.max(seenTransfers, ts.length); });
  }, 250);
  const postedAt = new Map<string, number>();
  const windowResults: OpenLoopResult[] = [];
  const peakStart = performance.now();
  sampleMemory();
  const startMemory = { api: memory.api.at(-1)!, worker: memory.worker.at(-1)! };
  const pgWaits = settings.PEAK_PG_WAITS ? samplePgWaits(db) : null;
  for (let w = 0; w < windows; w++) {
    if (w === 1 && pgWaits) log(await pgWaits.stop());
    const slice = captures.slice(w * perWindow, (w + 1) * perWindow);
    const r = await openLoop({ host: '127.0.0.1', port: p.apiPort, rate, durationMs: (slice.length / rate) * 1000, agent, request: (i) => {
      const c = slice[i]!;
      postedAt.set(c.orderId, Date.now());
      return { path: '/webhooks/razorpay', body: c.body, headers: { 'content-type': 'application/json', 'x-razorpay-event-id': c.eventId, 'x-razorpay-signature': hmacSha256Hex(c.body, base.RAZORPAY_WEBHOOK_SECRET) } };
    } });
    windowResults.push(r);
    log(`peak window ${w + 1}/${windows}: ${r.ok}/${r.scheduled} answered 2xx, p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms (${ratio(r.p99, baseline.p99)} raw INSERT), transfers so far ${seenTransfers}; bench loop delay p99 ${r.loopDelayP99.toFixed(1)} ms; load ${r.load}`);
  }
  const peakSeconds = (performance.now() - peakStart) / 1000;

  if (settings.PEAK_SCHEDULE === 'hourly') await closeBatchesOnceJoined(db, services.temporalAddress, p.taskQueue, n * round);
  const drainTimeout = (settings.BENCH_DRAIN_TIMEOUT_S ?? (2 * n) / settings.RAZORPAY_WRITE_RPS + 60) * 1000;
  const deadline = Date.now() + drainTimeout;
  let settled = 0;
  while (Date.now() < deadline) {
    settled = (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM payouts WHERE status = 'settled' AND order_id IS NOT NULL`)).rows[0]!.n;
    if (settled >= n * round) break;
    await new Promise((r) => setTimeout(r, 1_000));
  }
  clearInterval(watch);
  sampleMemory();
  const drainedAt = performance.now();

  // Steady state: between the 10% and 90% marks of the transfers.
  const at = (q: number) => transferTimes[Math.min(transferTimes.length - 1, Math.floor(q * transferTimes.length))]!;
  const steady = transferTimes.length >= 10 ? (0.8 * transferTimes.length) / ((at(0.9) - at(0.1)) / 1000) : NaN;
  const fired = await sandbox.control.faultsFired(); // cumulative over the rounds
  // The only writes during the peak are transfers (orders and payments were made before the limit).
  const refusedWrites = fired['ratelimit:write'] ?? 0;
  const refusedReads = fired['ratelimit:read'] ?? 0;
  const settle = (await db.query<{ order_id: string; settled_at: Date }>(`SELECT order_id, settled_at FROM payouts WHERE status = 'settled' AND order_id IS NOT NULL`)).rows.filter((r) => postedAt.has(r.order_id));
  const callsAfter = await sandbox.control.callCounts();
  const calls = Object.entries(callsAfter).map(([k, v]) => [k, v - (callsBefore[k] ?? 0)] as const).filter(([, v]) => v > 0).sort((a, b) => b[1] - a[1]);
  const totalCalls = calls.reduce((sum, [, v]) => sum + v, 0);
  const batches = (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM payout_batches')).rows[0]!.n;
  const toSettle = settle.map((r) => (r.settled_at.getTime() - (postedAt.get(r.order_id) ?? r.settled_at.getTime())) / 1000).sort((a, b) => a - b);
  const statuses = (await db.query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM payouts GROUP BY status ORDER BY status')).rows;
  const p99s = windowResults.map((r) => r.p99);
  const mem = (xs: number[], start: number) => `${start.toFixed(0)} → max ${Math.max(...xs).toFixed(0)} → ${xs.at(-1)!.toFixed(0)} MB`;

  log(`\npeak bench${rounds > 1 ? ` round ${round}/${rounds}` : ''} (${settings.PEAK_SCHEDULE}, payouts ${settings.PEAK_PAYOUTS_PRIORITY}${settings.PEAK_SCHEDULE === 'hourly' ? `: ${batches} batch(es)` : ''}): ${n} captures in ${peakSeconds.toFixed(0)} s (${rate.toFixed(1)}/s), drained ${settled - n * (round - 1)}/${n} settled ${((drainedAt - peakStart) / 1000).toFixed(0)} s after the peak began; load ${loadAverage()}`);
  log(Number.isNaN(steady)
    ? `  drain rate: not measured (${seenTransfers - transfersBefore} transfer(s): one per batch)`
    : `  drain rate (10%–90% of transfers): ${steady.toFixed(2)} transfers/s = ${ratio(steady, settings.RAZORPAY_WRITE_RPS)} the configured ${settings.RAZORPAY_WRITE_RPS}/s`);
  log(`  refused by the sandbox's limiter (429): writes ${refusedWrites} (every write here is a transfer), reads ${refusedReads}`);
  log(`  webhook p99 per ${WINDOW_S} s window: ${p99s.map((p) => p.toFixed(1)).join(', ')} ms; worst ${Math.max(...p99s).toFixed(1)} ms = ${ratio(Math.max(...p99s), baseline.p99)} the raw INSERT's ${baseline.p99.toFixed(1)} ms; 2xx ${windowResults.reduce((s, r) => s + r.ok, 0)}/${n}`);
  log(`  memory (RSS): API ${mem(memory.api, startMemory.api)}; worker ${mem(memory.worker, startMemory.worker)}`);
  log(`  capture webhook → payout settled: p50 ${percentile(toSettle, 0.5).toFixed(1)} s, p95 ${percentile(toSettle, 0.95).toFixed(1)} s, max ${(toSettle.at(-1) ?? NaN).toFixed(1)} s`);
  log(`  provider calls per 1,000 orders: ${(totalCalls * 1000 / n).toFixed(0)} (${calls.map(([k, v]) => `${k} ${(v * 1000 / n).toFixed(0)}`).join(', ')})`);
  log(`  payouts: ${statuses.map((s) => `${s.status} ${s.n}`).join(', ')}; total ${since()}`);
  return { settled, after: { api: memory.api.at(-1)!, worker: memory.worker.at(-1)! } };
}

/** Hourly: once every order has joined its batch, ops close the open batches (POST
 * /ops/batches/{id}/close sends this same signal), as the cutoff would. */
async function closeBatchesOnceJoined(db: BenchWorld['db'], temporalAddress: string, taskQueue: string, n: number): Promise<void> {
  const deadline = Date.now() + 600_000;
  while ((await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM payout_batch_orders`)).rows[0]!.n < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 1_000));
  const connection = await Connection.connect({ address: temporalAddress });
  try {
    const client = new Client({ connection });
    const { rows } = await db.query<{ id: string; cutoff_at: Date }>(`SELECT id, cutoff_at FROM payout_batches WHERE status = 'open'`);
    for (const b of rows) await signalCloseBatchNow(client, taskQueue, { batchId: b.id, cutoffAt: b.cutoff_at.toISOString() }, 'bench');
    log(`closed ${rows.length} open batch(es) once every order had joined; load ${loadAverage()}`);
  } finally {
    await connection.close();
  }
}

runBench(main);
