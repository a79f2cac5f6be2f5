/** `npm run bench:day [-- --orders N]` (issue 37): a day of orders at a tenth of a million-order day's
 * size in one run on this machine (default 100,000 orders; `--orders` runs it smaller).
 *
 * The world: one pair per hundred orders (at most 1,000; ten vendors to an employer, each vendor its
 * own linked account), 70% of the pairs on `daily`, 20% `hourly`, 10% `per_order`; employer and
 * employee wallets funded through the real top-up flow. The orders (bench/dayPlan.ts) arrive on a
 * lunch-peak curve, 10 s windows: an online order is written as placed, paid at the sandbox in its
 * window and its signed payment.captured posted to the API open loop (the measured webhook); a wallet
 * or cash order is placed through POST /v1/orders. The sandbox's limiter is on at the figures of
 * bench:peak (writes 10/s, reads 25/s: Razorpay's, above the app's budget of 8 and 10), PostgreSQL and
 * Temporal durable as shipped, the API and the worker their own processes, the sweeps run as their
 * Schedules would (every DAY_SWEEP_EVERY_S), with the once-more look compressed to DAY_RECHECK_MS.
 * After the day, ops close the open batches (the last cutoff) and the bench waits for every payout.
 *
 * It prints, each against a baseline measured in the same run: provider calls per order by class
 * (from the sandbox's own counts, each call given to the class of the pair whose entity it asked
 * about; the listings, shared, to each class by its online orders) against the goals; calls refused
 * by the limiter; every order paid exactly once, judged from the sandbox's transfers against the
 * plan; time from the last cutoff to the last batch settled; webhook p99 per window against a raw
 * INSERT; memory of the worker, the API and the sandbox (this process) and PostgreSQL's size per
 * 1,000 orders at 10%, 50% and 100% of the orders; the sweeps' and recon's time per run there. */
import type { ChildProcess } from 'node:child_process';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { z } from 'zod';
import { mintApiKey } from '../src/auth/apiKeys';
import { istDateOf } from '../src/domain/calendar';
import { createSdk } from '../src/gateway/sdkClient';
import type { RzpTransfer } from '../src/gateway/types';
import { signalCloseBatchNow } from '../src/payouts/batchStarter';
import { missedWebhookSweepWorkflow, payoutSweepWorkflow, reconWorkflow } from '../src/workflows';
import { appChild, closeBenchWorld, signedCapture, startBenchWorld, type BenchWorld, type SignedCapture } from './appProcesses';
import { lunchCurve, ORDER, planOrders, planPairs, type Pair, type PlannedOrder, type Schedule } from './dayPlan';
import { keepAliveAgent, loadAverage, log, median, openLoop, providerBudgetKnobs, ratio, rssMb, runBench, type OpenLoopResult } from './harness';

const { values: flags } = parseArgs({ options: { orders: { type: 'string' } }, strict: true });
const settings = z.object({
  orders: z.coerce.number().int().min(100).default(100_000),
  DAY_PEAK_PER_SECOND: z.coerce.number().min(1).default(20),
  DAY_SEED: z.coerce.number().int().default(20261207),
  DAY_RECHECK_MS: z.coerce.number().int().min(1_000).default(120_000),
  DAY_SWEEP_EVERY_S: z.coerce.number().min(5).default(60),
  ...providerBudgetKnobs,
}).parse({ ...process.env, orders: flags.orders ?? process.env.DAY_ORDERS });

const WINDOW_S = 10;
/** Where the memory, size and sweep figures are taken: shares of the day's orders. */
const CHECKPOINTS = [0.1, 0.5, 1];
const GOALS: Record<Schedule, number> = { daily: 0.02, hourly: Number.NaN, per_order: 1.05 };

interface Checkpoint { orders: number; apiMb: number; workerMb: number; sandboxMb: number; pgMb: number; reconMs: number }
interface SweepRun { kind: 'missed' | 'payout'; orders: number; ms: number }

async function main(): Promise<void> {
  const t0 = performance.now();
  const since = () => `${((performance.now() - t0) / 1000).toFixed(0)} s`;
  const n = settings.orders;
  const pairs = planPairs(Math.min(1_000, Math.max(10, Math.round(n / 100))));
  const orders = planOrders(n, pairs, settings.DAY_SEED);
  const world = await startBenchWorld('day-bench', true);
  const children: ChildProcess[] = [];
  const connection = await Connection.connect({ address: world.services.temporalAddress });
  let sweeper: { stop(): Promise<void> } | undefined;
  try {
    const client = new Client({ connection });
    const taskQueue = `day-bench-${Date.now()}`;
    const env = {
      DATABASE_URL: world.dbUrl, TEMPORAL_ADDRESS: world.services.temporalAddress, TEMPORAL_TASK_QUEUE: taskQueue, RAZORPAY_BASE_URL: world.sandbox.baseUrl,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'error', RAZORPAY_WRITE_RPS: String(settings.RAZORPAY_WRITE_RPS), RAZORPAY_READ_RPS: String(settings.RAZORPAY_READ_RPS),
      WORKER_CPU_NICE: '10', LATE_CAPTURE_RECHECK_MS: String(settings.DAY_RECHECK_MS),
      // The sweeps' cadence as the bench runs them: a batched order's capture waits for the once-more
      // look's window by it (payouts/captureWindow.ts).
      MISSED_WEBHOOK_SWEEP_EVERY_MS: String(settings.DAY_SWEEP_EVERY_S * 1000),
      CAPTURE_BY_WINDOW: process.env.CAPTURE_BY_WINDOW ?? 'off',
    };
    const api = appChild('api', env);
    const worker = appChild('worker', env);
    children.push(api.proc, worker.proc);
    const ports = JSON.parse(await api.firstLine) as { api: number; baseline: number };
    await worker.firstLine;
    const apiUrl = `http://127.0.0.1:${ports.api}`;
    await world.sandbox.control.setWebhookTarget(`${apiUrl}/webhooks/razorpay`);
    const ordering = `Bearer ${(await mintApiKey(world.db, { name: 'bench-day', roles: ['ordering'], mintedBy: 'bench' })).key}`;
    const accounts = await seedPairs(world, pairs);
    await fundWallets(world, apiUrl, ordering, pairs, orders);
    const gatewayOrders = await createGatewayOrders(world, orders);
    log(`setup (${since()}): ${n.toLocaleString('en-IN')} orders on ${pairs.length} pairs (${countBy(pairs, (p) => p.schedule)}), methods ${countBy(orders, (o) => o.method)}; `
      + `app budget writes ${settings.RAZORPAY_WRITE_RPS}/s reads ${settings.RAZORPAY_READ_RPS}/s, sandbox limit writes ${settings.BENCH_SANDBOX_WRITE_RPS}/s reads ${settings.BENCH_SANDBOX_READ_RPS}/s; `
      + `capture listing every ${process.env.CAPTURE_LISTING_GATHER_MS ?? world.base.CAPTURE_LISTING_GATHER_MS} ms at most (CAPTURE_LISTING_GATHER_MS), once-more look after ${settings.DAY_RECHECK_MS} ms; batched captures by window ${env.CAPTURE_BY_WINDOW} (CAPTURE_BY_WINDOW); hourly and daily batches closed by ops at the end; load ${loadAverage()}`);

    // From here Razorpay's own webhooks for the online orders' payments are not delivered: the bench
    // posts each capture itself (the measured webhook). The transfers' webhooks are delivered.
    const online = orders.filter((o) => o.method === 'online').length;
    await world.sandbox.control.injectWebhookFault('lose', { events: ['payment.authorized', 'payment.captured', 'order.paid'], count: 3 * online });
    await world.sandbox.control.setPlatformBalance(n * ORDER.netPaise * 2);
    await world.sandbox.control.setRateLimit({ writeRps: settings.BENCH_SANDBOX_WRITE_RPS, readRps: settings.BENCH_SANDBOX_READ_RPS, burst: settings.BENCH_SANDBOX_BURST });
    const pathsBefore = await world.sandbox.control.callPathCounts();
    const transfersBefore = (await world.sandbox.control.transfers()).length;

    const agent = keepAliveAgent();
    const curve = lunchCurve(n, settings.DAY_PEAK_PER_SECOND, WINDOW_S);
    const peakRate = Math.max(...curve) / WINDOW_S;
    let rawSeq = 0;
    const baseline = await openLoop({ host: '127.0.0.1', port: ports.baseline, rate: peakRate, durationMs: WINDOW_S * 1000, agent,
      request: () => ({ path: '/baseline', body: '{}', headers: { 'content-type': 'application/json', 'x-razorpay-event-id': `evt_raw_${rawSeq++}` } }) });
    log(`baseline (raw INSERT at the peak's ${peakRate.toFixed(1)} req/s for ${WINDOW_S} s): p99 ${baseline.p99.toFixed(1)} ms; load ${loadAverage()}`);
    log(`the day: ${curve.length} windows of ${WINDOW_S} s, ${curve[0]} orders in the first, ${Math.max(...curve)} at the peak`);

    const sweeps: SweepRun[] = [];
    const payments = new Map<string, Schedule>();
    let placed = 0;
    sweeper = startSweeps(client, taskQueue, () => placed, sweeps);
    const checkpoints: Checkpoint[] = [];
    const windows: OpenLoopResult[] = [];
    let next = 0;
    for (const [k, count] of curve.entries()) {
      const slice = orders.slice(next, next + count);
      next += count;
      const w = await runWindow(world, { apiPort: ports.api, agent, ordering, gatewayOrders, payments, slice });
      windows.push(w);
      placed = next;
      if (k % 6 === 5 || k === curve.length - 1) log(`window ${k + 1}/${curve.length} (${since()}): ${placed.toLocaleString('en-IN')} orders, captures p99 ${w.p99.toFixed(1)} ms (${ratio(w.p99, baseline.p99)} raw INSERT), load ${w.load}`);
      while (checkpoints.length < CHECKPOINTS.length && placed >= CHECKPOINTS[checkpoints.length]! * n) {
        checkpoints.push(await checkpoint(world, client, taskQueue, placed, { api: api.proc.pid!, worker: worker.proc.pid! }));
      }
    }
    const settledIn = await closeAndDrain(world, client, taskQueue, orders, since);
    await sweeper.stop();
    agent.destroy();

    const transfers = (await world.sandbox.control.transfers()).slice(transfersBefore);
    const classOf = classifier(accounts, orders, gatewayOrders, payments);
    // The API names the orders it places; the plan knows them by their client reference.
    const ids = new Map((await world.db.query<{ id: string; ref: string }>(`SELECT id, client_reference AS ref FROM orders WHERE client_reference LIKE 'ord_day_%'`)).rows.map((x) => [x.ref, x.id]));
    const byWindow = (await world.db.query<{ id: string }>(`SELECT id FROM payments WHERE capture_confirmed_by = 'window'`)).rows.map((x) => x.id);
    const passPages = (await world.db.query<{ run_for: string | null; pages: number }>(`SELECT run_for, pages FROM provider_listing_passes WHERE kind = 'payments'`)).rows;
    const confirmedBy = (await world.db.query<{ by: string | null; n: number }>(
      `SELECT capture_confirmed_by AS by, count(*)::int AS n FROM payments WHERE order_id IS NOT NULL AND status = 'captured' GROUP BY 1 ORDER BY 2 DESC`)).rows;
    const waited = (await world.db.query<{ n: number }>('SELECT count(*)::int AS n FROM payouts WHERE capture_window_since IS NOT NULL')).rows[0]!.n;
    log(`  captures confirmed by: ${confirmedBy.map((x) => `${x.by ?? 'not confirmed'} ${x.n.toLocaleString('en-IN')}`).join(', ')}; payouts that waited for a window ${waited.toLocaleString('en-IN')}`);
    report({ n, pairs, orders, windows, baseline, checkpoints, sweeps, settledIn, transfers, classOf, since, ids, byWindow, passPages,
      paths: diff(await world.sandbox.control.callPathCounts(), pathsBefore), fired: await world.sandbox.control.faultsFired() });
    const statuses = (await world.db.query<{ status: string; code: string | null; n: number }>(
      `SELECT status, last_code AS code, count(*)::int AS n FROM payouts GROUP BY 1, 2 ORDER BY 3 DESC`)).rows;
    log(`  payouts: ${statuses.map((x) => `${x.status}${x.code ? ` (${x.code})` : ''} ${x.n.toLocaleString('en-IN')}`).join(', ')}`);
  } finally {
    // The sweeps' calls first: a call retried on a closed connection throws from its timer, and that
    // crash would hide the error that ended the day (CI saw only "Channel has been shut down").
    await sweeper?.stop().catch((err: unknown) => log(`  a sweep run failed while stopping: ${String(err)}`));
    await connection.close();
    await closeBenchWorld(world, children);
  }
}

const countBy = <T>(xs: readonly T[], key: (x: T) => string): string =>
  [...xs.reduce((m, x) => m.set(key(x), (m.get(key(x)) ?? 0) + 1), new Map<string, number>())].map(([k, v]) => `${k} ${v.toLocaleString('en-IN')}`).join(', ');

const diff = (after: Record<string, number>, before: Record<string, number>): Record<string, number> =>
  Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - (before[k] ?? 0)]).filter(([, v]) => (v as number) > 0));

/** Employers, vendors on their own linked accounts, pairs on their schedules, one employee each. */
async function seedPairs(world: BenchWorld, pairs: readonly Pair[]): Promise<Map<string, Pair>> {
  const byAccount = new Map<string, Pair>();
  const rows = [];
  for (const p of pairs) {
    const account = await world.sandbox.control.createLinkedAccount({ name: p.vendorId });
    byAccount.set(account, p);
    rows.push({ ...p, account });
  }
  const employers = [...new Set(pairs.map((p) => p.employerId))];
  await world.db.query(`INSERT INTO employers (id, name) SELECT x, x FROM unnest($1::text[]) x`, [employers]);
  await world.db.query(
    `INSERT INTO employees (id, employer_id, registered_by) SELECT DISTINCT "employeeId", "employerId", 'bench' FROM jsonb_to_recordset($1::jsonb) AS x("employeeId" text, "employerId" text)`,
    [JSON.stringify(pairs)]);
  await world.db.query(
    `INSERT INTO vendors (id, name, linked_account_id) SELECT "vendorId", "vendorId", account FROM jsonb_to_recordset($1::jsonb) AS x("vendorId" text, account text)`,
    [JSON.stringify(rows)]);
  await world.db.query(
    // The daily cutoff an hour before the bench starts (IST): the day's batches close ~23 h on, not
    // during the run (ops close them at its end), whatever the hour it runs at.
    `INSERT INTO employer_vendor (employer_id, vendor_id, settlement_mode, commission_bps, payout_schedule, payout_cutoff_ist)
     SELECT "employerId", "vendorId", 'platform_transfer', $2, schedule, date_trunc('minute', (now() AT TIME ZONE 'Asia/Kolkata') - interval '1 hour')::time
       FROM jsonb_to_recordset($1::jsonb) AS x("employerId" text, "vendorId" text, schedule text)`,
    [JSON.stringify(rows), ORDER.commissionBps]);
  return byAccount;
}

/** Each employer's wallet for its orders' subsidies, each employee's for their wallet orders, through
 * the top-up flow (POST /v1/wallets/…/top-ups, paid at the sandbox, credited by its webhook). */
async function fundWallets(world: BenchWorld, apiUrl: string, ordering: string, pairs: readonly Pair[], orders: readonly PlannedOrder[]): Promise<void> {
  const needs = new Map<string, number>();
  const add = (key: string, paise: number) => needs.set(key, (needs.get(key) ?? 0) + paise);
  for (const p of pairs) { add(`employer/${p.employerId}`, 100_000); add(`employee/${p.employeeId}`, 100_000); }
  for (const o of orders) {
    add(`employer/${o.pair.employerId}`, ORDER.subsidyPaise);
    if (o.method === 'wallet') add(`employee/${o.pair.employeeId}`, ORDER.customerSharePaise);
  }
  for (const [owner, paise] of needs) {
    const res = await fetch(`${apiUrl}/v1/wallets/${owner}/top-ups`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: ordering }, body: JSON.stringify({ amountPaise: paise }) });
    if (res.status !== 201) throw new Error(`top-up of ${owner} refused: ${res.status} ${await res.text()}`);
    await world.sandbox.control.payOrder(((await res.json()) as { topup: { gatewayOrderId: string } }).topup.gatewayOrderId);
  }
  await world.sandbox.control.drainWebhooks(120_000);
  const { rows } = await world.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM wallet_topups WHERE status = 'credited'`);
  if (rows[0]!.n !== needs.size) throw new Error(`${rows[0]!.n} of ${needs.size} top-ups credited`);
}

/** Each online order's gateway order, made at the sandbox before the day (the checkout's call, not
 * the payouts'). */
async function createGatewayOrders(world: BenchWorld, orders: readonly PlannedOrder[]): Promise<Map<number, string>> {
  const sdk = createSdk({ ...world.base, RAZORPAY_BASE_URL: world.sandbox.baseUrl });
  const out = new Map<number, string>();
  const online = orders.filter((o) => o.method === 'online');
  for (let i = 0; i < online.length; i += 100) {
    await Promise.all(online.slice(i, i + 100).map(async (o) => {
      const created = await sdk.orders.create({ amount: ORDER.customerSharePaise, currency: 'INR', receipt: orderId(o) }) as { id: string };
      out.set(o.index, created.id);
    }));
  }
  return out;
}

const orderId = (o: PlannedOrder): string => `ord_day_${o.index}`;

/** One window: its online orders written as placed and paid at the sandbox, their captures posted
 * open loop (measured) beside the wallet and cash orders placed through the API (not measured). */
async function runWindow(world: BenchWorld, w: { apiPort: number; agent: ReturnType<typeof keepAliveAgent>; ordering: string; gatewayOrders: Map<number, string>; payments: Map<string, Schedule>; slice: PlannedOrder[] }): Promise<OpenLoopResult> {
  const online = w.slice.filter((o) => o.method === 'online');
  const others = w.slice.filter((o) => o.method !== 'online');
  await world.db.query(
    `INSERT INTO orders (id, client_reference, employer_id, vendor_id, employee_id, total_paise, subsidy_paise, customer_share_paise, commission_bps,
       commission_paise, vendor_net_paise, payment_method, status, gateway_order_id)
     SELECT id, id, "employerId", "vendorId", "employeeId", $2, $3, $4, $5, $6, $7, 'online', 'pending', "gatewayOrderId"
       FROM jsonb_to_recordset($1::jsonb) AS x(id text, "employerId" text, "vendorId" text, "employeeId" text, "gatewayOrderId" text)`,
    [JSON.stringify(online.map((o) => ({ id: orderId(o), ...o.pair, gatewayOrderId: w.gatewayOrders.get(o.index) }))),
      ORDER.totalPaise, ORDER.subsidyPaise, ORDER.customerSharePaise, ORDER.commissionBps, ORDER.commissionPaise, ORDER.netPaise]);
  const captures: SignedCapture[] = [];
  for (let i = 0; i < online.length; i += 50) {
    captures.push(...await Promise.all(online.slice(i, i + 50).map(async (o) => {
      const payment = await world.sandbox.control.payOrder(w.gatewayOrders.get(o.index)!);
      w.payments.set(payment.id, o.pair.schedule);
      return signedCapture(world.base, `evt_day_${o.index}`, payment);
    })));
  }
  const placing = others.length === 0 ? Promise.resolve(null) : openLoop({ host: '127.0.0.1', port: w.apiPort, rate: others.length / WINDOW_S, durationMs: WINDOW_S * 1000, agent: w.agent,
    request: (i) => {
      const o = others[i]!;
      return { path: '/v1/orders', headers: { 'content-type': 'application/json', authorization: w.ordering }, body: JSON.stringify({
        clientReference: orderId(o), employerId: o.pair.employerId, vendorId: o.pair.vendorId, employeeId: o.pair.employeeId,
        totalPaise: ORDER.totalPaise, subsidyPaise: ORDER.subsidyPaise, customerSharePaise: ORDER.customerSharePaise, paymentMethod: o.method }) };
    } });
  const posting = openLoop({ host: '127.0.0.1', port: w.apiPort, rate: Math.max(online.length, 1) / WINDOW_S, durationMs: online.length === 0 ? 0 : WINDOW_S * 1000, agent: w.agent,
    request: (i) => {
      return { path: '/webhooks/razorpay', ...captures[i]! };
    } });
  const [measured, placedResult] = await Promise.all([posting, placing]);
  if (placedResult && placedResult.errors > 0) throw new Error(`${placedResult.errors} of ${others.length} wallet and cash orders were not placed`);
  return measured;
}

/** The sweeps as their two Schedules run them, each every DAY_SWEEP_EVERY_S on its own (a run starts
 * an interval after the previous one started; a batched order's capture waits for the once-more look
 * by that cadence: captureWindow.ts), timed. */
function startSweeps(client: Client, taskQueue: string, orders: () => number, runs: SweepRun[]): { stop(): Promise<void> } {
  let stopped = false;
  const every = (kind: SweepRun['kind'], run: (i: number) => Promise<unknown>) => (async () => {
    const first = performance.now();
    for (let i = 0; !stopped; i++) {
      const due = first + (i + 1) * settings.DAY_SWEEP_EVERY_S * 1000;
      while (!stopped && performance.now() < due) await new Promise((r) => setTimeout(r, 500));
      if (stopped) return;
      const at = orders();
      const t = performance.now();
      try {
        await run(i);
        runs.push({ kind, orders: at, ms: performance.now() - t });
      } catch (err) {
        // One failed run is a finding, printed; the next runs as the Schedule's would.
        log(`  ${kind} sweep run ${i + 1} failed after ${((performance.now() - t) / 1000).toFixed(1)} s: ${String(err)}`);
      }
    }
  })();
  const loops = [
    every('missed', (i) => client.workflow.execute(missedWebhookSweepWorkflow, { workflowId: `day-missed-${taskQueue}-${i}`, taskQueue, args: [{}] })),
    every('payout', (i) => client.workflow.execute(payoutSweepWorkflow, { workflowId: `day-payouts-${taskQueue}-${i}`, taskQueue, args: [{}] })),
  ];
  return { async stop() { stopped = true; await Promise.all(loops); } };
}

/** Memory, PostgreSQL's size and a recon of the day so far, at a share of the orders. */
async function checkpoint(world: BenchWorld, client: Client, taskQueue: string, orders: number, pids: { api: number; worker: number }): Promise<Checkpoint> {
  const pgMb = Number((await world.db.query<{ b: string }>('SELECT pg_database_size(current_database())::text AS b')).rows[0]!.b) / 1024 / 1024;
  const day = istDateOf(new Date());
  const t = performance.now();
  await client.workflow.execute(reconWorkflow, { workflowId: `day-recon-${taskQueue}-${orders}`, taskQueue, args: [{ from: day, to: day }] });
  const reconMs = performance.now() - t;
  const c = { orders, apiMb: rssMb(pids.api), workerMb: rssMb(pids.worker), sandboxMb: process.memoryUsage.rss() / 1024 / 1024, pgMb, reconMs };
  log(`checkpoint at ${orders.toLocaleString('en-IN')} orders: RSS API ${c.apiMb.toFixed(0)} MB, worker ${c.workerMb.toFixed(0)} MB, sandbox ${c.sandboxMb.toFixed(0)} MB; PostgreSQL ${c.pgMb.toFixed(0)} MB; recon ${(reconMs / 1000).toFixed(1)} s; load ${loadAverage()}`);
  return c;
}

/** Once every order is in (per-order payouts settled, batched orders joined), ops close the open
 * batches, as the cutoff would; returns the seconds from that close to the last batch settled. */
async function closeAndDrain(world: BenchWorld, client: Client, taskQueue: string, orders: readonly PlannedOrder[], since: () => string): Promise<number> {
  const paying = orders.filter((o) => o.method !== 'cash');
  const batched = paying.filter((o) => o.pair.schedule !== 'per_order').length;
  const perOrder = paying.length - batched;
  const count = async (sql: string) => (await world.db.query<{ n: number }>(sql)).rows[0]!.n;
  const deadline = Date.now() + Math.max(600_000, (perOrder / settings.RAZORPAY_WRITE_RPS) * 2_000);
  while (Date.now() < deadline) {
    const { joined, settled } = (await world.db.query<{ joined: number; settled: number }>(
      `SELECT (SELECT count(*)::int FROM payout_batch_orders) AS joined,
              (SELECT count(*)::int FROM payouts WHERE status = 'settled' AND batch_id IS NULL) AS settled`)).rows[0]!;
    if (joined >= batched && settled >= perOrder) break;
    await new Promise((r) => setTimeout(r, 2_000));
  }
  const open = (await world.db.query<{ id: string; cutoff_at: Date }>(`SELECT id, cutoff_at FROM payout_batches WHERE status = 'open'`)).rows;
  const closedAt = performance.now();
  for (const b of open) await signalCloseBatchNow(client, taskQueue, { batchId: b.id, cutoffAt: b.cutoff_at.toISOString() }, 'bench');
  log(`the last cutoff (${since()}): ${open.length} open batch(es) closed by ops; load ${loadAverage()}`);
  const batches = await count('SELECT count(*)::int AS n FROM payout_batches');
  while (Date.now() < deadline + 600_000) {
    if (await count(`SELECT count(*)::int AS n FROM payouts WHERE status = 'settled' AND batch_id IS NOT NULL`) >= batches) break;
    await new Promise((r) => setTimeout(r, 1_000));
  }
  return (performance.now() - closedAt) / 1000;
}

/** Which pair or class each call was about: a transfer by its recipient, a payment or gateway order
 * by the order it was made for. */
function classifier(accounts: Map<string, Pair>, orders: readonly PlannedOrder[], gatewayOrders: Map<number, string>, payments: Map<string, Schedule>) {
  const byGatewayOrder = new Map([...gatewayOrders].map(([index, id]) => [id, orders[index]!.pair.schedule]));
  const accountOfVendor = new Map([...accounts].map(([account, pair]) => [pair.vendorId, account]));
  return {
    account: (id: string) => accounts.get(id)?.schedule,
    gatewayOrder: (id: string) => byGatewayOrder.get(id),
    payment: (id: string) => payments.get(id),
    accountOfVendor: (vendorId: string) => accountOfVendor.get(vendorId),
  };
}

interface Report {
  n: number; pairs: readonly Pair[]; orders: readonly PlannedOrder[]; windows: OpenLoopResult[]; baseline: OpenLoopResult;
  checkpoints: Checkpoint[]; sweeps: SweepRun[]; settledIn: number; transfers: RzpTransfer[]; classOf: ReturnType<typeof classifier>;
  paths: Record<string, number>; fired: Record<string, number>; since: () => string;
  /** Our order id of each planned order, by its client reference. */
  ids: Map<string, string>;
  /** The payments whose captures the once-more look's windows confirmed (no capture pass ran for them). */
  byWindow: readonly string[];
  /** Each capture listing pass's pages and the order whose payout ran it. */
  passPages: ReadonlyArray<{ run_for: string | null; pages: number }>;
}

function report(r: Report): void {
  const schedules: Schedule[] = ['daily', 'hourly', 'per_order'];
  const ordersOf = (s: Schedule) => r.orders.filter((o) => o.pair.schedule === s);
  const transferClass = new Map(r.transfers.map((t) => [t.id, r.classOf.account(t.recipient)]));
  const calls: Record<Schedule | 'windows' | 'passes' | 'shared', number> = { daily: 0, hourly: 0, per_order: 0, windows: 0, passes: 0, shared: 0 };
  for (const [key, count] of Object.entries(r.paths)) {
    const [endpoint, path] = key.split(' ') as [string, string];
    // Creates are counted from the ledger below (the path names no transfer).
    if (endpoint === 'transfers.create') continue;
    const id = path.split('?')[0]!.split('/')[3] ?? '';
    const cls = endpoint.startsWith('transfers.') ? transferClass.get(id)
      : endpoint === 'orders.payments' ? r.classOf.gatewayOrder(id)
      : endpoint === 'payments.fetch' ? r.classOf.payment(id) : undefined;
    // A listing with `to` is a once-more look window's, one without a capture pass's.
    const listing = endpoint === 'payments.list' ? (new URLSearchParams(path.split('?')[1] ?? '').has('to') ? 'windows' : 'passes') : undefined;
    calls[cls ?? listing ?? 'shared'] += count;
  }
  // A transfer's create is its class's; a create the limiter refused is not in the sandbox's ledger.
  for (const t of r.transfers) { const cls = transferClass.get(t.id); if (cls) calls[cls] += 1; }
  // The windows look once more at every online order: given to each class by its online orders. A
  // capture pass is run by the payout that waited for it (a pass confirms every capture it lists, of
  // any class): its calls go to that payout's class, by the pass's pages.
  const windowConfirmed: Record<Schedule, number> = { daily: 0, hourly: 0, per_order: 0 };
  for (const id of r.byWindow) { const cls = r.classOf.payment(id); if (cls) windowConfirmed[cls] += 1; }
  const onlineOf = (s: Schedule) => ordersOf(s).filter((o) => o.method === 'online').length;
  const online = r.orders.filter((o) => o.method === 'online').length;
  const classOfOrder = new Map(r.orders.map((o) => [r.ids.get(orderId(o)) ?? orderId(o), o.pair.schedule]));
  const passPagesOf: Record<Schedule, number> = { daily: 0, hourly: 0, per_order: 0 };
  for (const p of r.passPages) { const cls = p.run_for ? classOfOrder.get(p.run_for) : undefined; if (cls) passPagesOf[cls] += p.pages; }
  const passPagesAll = schedules.reduce((sum, s) => sum + passPagesOf[s], 0);
  log(`\nday bench: ${r.n.toLocaleString('en-IN')} orders on ${r.pairs.length} pairs; total ${r.since()}; load ${loadAverage()}`);
  log(`  provider calls per order by class (the sandbox's counts; shared listings: the once-more look's windows ${calls.windows.toLocaleString('en-IN')}, and other calls about no one order ${calls.shared.toLocaleString('en-IN')}, given to each class by its online orders; capture passes ${calls.passes.toLocaleString('en-IN')}, to the class of the payout that ran each, by its pages):`);
  for (const s of schedules) {
    const k = ordersOf(s).length;
    const shared = ((calls.windows + calls.shared) * onlineOf(s)) / Math.max(online, 1) + (calls.passes * passPagesOf[s]) / Math.max(passPagesAll, 1);
    const perOrder = k === 0 ? Number.NaN : (calls[s] + shared) / k;
    const goal = GOALS[s];
    // The same calls with every listing spread by online orders (as before issue 37's windows served
    // batched captures): the goal read the other way, printed beside.
    const spread = k === 0 ? Number.NaN : (calls[s] + ((calls.windows + calls.shared + calls.passes) * onlineOf(s)) / Math.max(online, 1)) / k;
    log(`    ${s.padEnd(9)} ${k.toLocaleString('en-IN').padStart(8)} orders: ${perOrder.toFixed(3)} calls/order${Number.isNaN(goal) ? '' : ` (goal ≤ ${goal}: ${perOrder <= goal ? 'met' : 'NOT met'}; ${ratio(perOrder, goal)} the goal)`}; every listing spread by online orders ${spread.toFixed(3)}; captures confirmed by a window ${windowConfirmed[s].toLocaleString('en-IN')} of ${onlineOf(s).toLocaleString('en-IN')} online; pass pages run for it ${passPagesOf[s].toLocaleString('en-IN')}`);
  }
  const total = schedules.reduce((sum, s) => sum + calls[s], 0) + calls.windows + calls.shared + calls.passes;
  log(`    all classes: ${(total / Math.max(r.n, 1)).toFixed(3)} calls/order (${total.toLocaleString('en-IN')} calls for ${r.n.toLocaleString('en-IN')} orders)`);
  log(`  refused by the sandbox's limiter (429): writes ${r.fired['ratelimit:write'] ?? 0}, reads ${r.fired['ratelimit:read'] ?? 0}`);
  log(`  ${exactlyOnce(r)}`);
  log(`  from the last cutoff to the last batch settled: ${r.settledIn.toFixed(0)} s`);
  const p99s = r.windows.map((w) => w.p99);
  log(`  webhook p99 per ${WINDOW_S} s window: median ${median(p99s).toFixed(1)} ms, worst ${Math.max(...p99s).toFixed(1)} ms (${ratio(Math.max(...p99s), r.baseline.p99)} the raw INSERT's ${r.baseline.p99.toFixed(1)} ms); windows over 50 ms: ${p99s.filter((p) => p >= 50).length} of ${p99s.length}`);
  const first = r.checkpoints[0];
  for (const c of r.checkpoints) {
    const per = (x: number) => (x * 1000) / c.orders;
    log(`  at ${c.orders.toLocaleString('en-IN').padStart(8)} orders: RSS API ${c.apiMb.toFixed(0)} MB, worker ${c.workerMb.toFixed(0)} MB, sandbox ${c.sandboxMb.toFixed(0)} MB; PostgreSQL ${per(c.pgMb).toFixed(2)} MB per 1,000 orders${first ? ` (${ratio(per(c.pgMb), (first.pgMb * 1000) / first.orders)} the first)` : ''}; recon ${(c.reconMs / 1000).toFixed(1)} s = ${per(c.reconMs).toFixed(0)} ms per 1,000 orders${first ? ` (${ratio(per(c.reconMs), (first.reconMs * 1000) / first.orders)})` : ''}`);
  }
  const early = r.sweeps.filter((s) => s.orders <= 0.2 * r.n);
  const late = r.sweeps.filter((s) => s.orders >= 0.8 * r.n);
  const m = (xs: SweepRun[], kind: SweepRun['kind']) => median(xs.filter((x) => x.kind === kind).map((x) => x.ms));
  const runsOf = (xs: SweepRun[]) => xs.filter((x) => x.kind === 'missed').length;
  log(`  sweeps per run (median, ${runsOf(early)} run(s) in the first fifth of the orders / ${runsOf(late)} in the last): missed-webhook ${m(early, 'missed').toFixed(0)} / ${m(late, 'missed').toFixed(0)} ms (${ratio(m(late, 'missed'), m(early, 'missed'))}), payout ${m(early, 'payout').toFixed(0)} / ${m(late, 'payout').toFixed(0)} ms (${ratio(m(late, 'payout'), m(early, 'payout'))})`);
  log(`  calls by endpoint: ${byEndpoint(r.paths)}`);
}

const byEndpoint = (paths: Record<string, number>): string =>
  [...Object.entries(paths).reduce((m, [k, v]) => m.set(k.split(' ')[0]!, (m.get(k.split(' ')[0]!) ?? 0) + v), new Map<string, number>())]
    .sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v.toLocaleString('en-IN')}`).join(', ');

/** Every order paid exactly once, from the sandbox's transfers against the plan: a per-order pair's
 * order by one transfer of its net under its id; a batched pair's orders by transfers whose sum is
 * their nets' sum, one per batch; cash orders by none. */
function exactlyOnce(r: Report): string {
  const problems: string[] = [];
  const byOrder = new Map<string, RzpTransfer[]>();
  const batchTransfers = new Map<string, number>();
  const batchPaidTo = new Map<string, number>();
  for (const t of r.transfers) {
    const notes = t.notes as Record<string, string>;
    if (notes.order_id) byOrder.set(notes.order_id, [...(byOrder.get(notes.order_id) ?? []), t]);
    if (notes.batch_id) {
      batchTransfers.set(notes.batch_id, (batchTransfers.get(notes.batch_id) ?? 0) + 1);
      batchPaidTo.set(t.recipient, (batchPaidTo.get(t.recipient) ?? 0) + t.amount);
    }
  }
  for (const [id, k] of batchTransfers) if (k > 1) problems.push(`batch ${id} paid by ${k} transfers`);
  const owedByBatch = new Map<string, number>();
  for (const o of r.orders) {
    const ts = byOrder.get(r.ids.get(orderId(o))!) ?? [];
    if (o.method === 'cash' || o.pair.schedule !== 'per_order') {
      if (ts.length > 0) problems.push(`${orderId(o)} (${o.method}, ${o.pair.schedule}) paid by a transfer of its own`);
      if (o.method !== 'cash') owedByBatch.set(o.pair.vendorId, (owedByBatch.get(o.pair.vendorId) ?? 0) + ORDER.netPaise);
    } else if (ts.length !== 1 || ts[0]!.amount !== ORDER.netPaise) {
      problems.push(`${orderId(o)}: ${ts.length} transfer(s) ${ts.map((t) => t.amount).join(' + ')}`);
    }
  }
  for (const [vendorId, paise] of owedByBatch) {
    const paid = batchPaidTo.get(r.classOf.accountOfVendor(vendorId) ?? '') ?? 0;
    if (paid !== paise) problems.push(`${vendorId}: owed ${paise} paise by batch, its batch transfers at the sandbox sum to ${paid}`);
  }
  return problems.length === 0
    ? `every order paid exactly once, judged from the sandbox's ${r.transfers.length.toLocaleString('en-IN')} transfers against the plan (per-order pairs: one transfer of the net each; ${owedByBatch.size} batched vendors: one transfer per batch, summing to their orders' nets; cash: none)`
    : `NOT exactly once: ${problems.length} problem(s): ${problems.slice(0, 10).join('; ')}`;
}

runBench(main);
