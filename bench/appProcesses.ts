/** The app's processes and world for the load benches (bench:webhooks, bench:peak): the API in its
 * own process (buildApi with the production wiring's Temporal payout starter, plus a raw-INSERT
 * baseline route on a second port), a worker process (the production worker set and the outbox
 * drainer with its pacing), one employer–vendor pair on a sandbox linked account, and orders seeded
 * in bulk as placed and awaiting payment, each with a signed payment.captured ready to post.
 *
 * Run as `node … bench/appProcesses.ts api|worker` by appChild(); the env says where everything is. */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import Fastify from 'fastify';
import { Pool } from 'pg';
import { buildApi } from '../src/api/server';
import { warmUpApi } from '../src/api/warmUp';
import { loadConfig, type Config } from '../src/config/config';
import { migrate } from '../src/db/migrate';
import { createPool, poolOptionsFrom, type Db } from '../src/db/pool';
import { ensureDatabase, startServices, type RunningServices } from '../src/devstack/services';
import { createGateway } from '../src/gateway';
import { hmacSha256Hex } from '../src/gateway/signatures';
import { startOutboxDrainer, startPacingFrom } from '../src/outbox/drainer';
import { temporalPayoutStarter } from '../src/payouts/temporalStarter';
import { lowerCpuPriority } from '../src/startup/cpuPriority';
import { sandboxOptionsFrom, startSandbox, type RunningSandbox } from '../src/sandbox';
import { createWorker } from '../src/worker';

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const rzp = (prefix: string) => `${prefix}_${Array.from(randomBytes(14), (b) => ALNUM[b % ALNUM.length]).join('')}`;

async function serveApi(): Promise<void> {
  const config = loadConfig(process.env);
  const pool = { ...poolOptionsFrom(config), max: 10 };
  const db = createPool(config.DATABASE_URL!, pool);
  const temporal = new Client({ connection: await Connection.connect({ address: config.TEMPORAL_ADDRESS }), namespace: config.TEMPORAL_NAMESPACE });
  const api = await buildApi({ config, db, gateway: createGateway(config), temporal, payoutStarter: temporalPayoutStarter(temporal, config.TEMPORAL_TASK_QUEUE, db) });
  await warmUpApi(db, pool.min ?? 0); // as src/api/main.ts does before it listens
  await api.listen({ port: 0, host: '127.0.0.1' });
  // The baseline: Fastify and pg, nothing of the app. Same pool size as the API's.
  const raw = new Pool({ connectionString: config.DATABASE_URL, max: 10 });
  await raw.query('CREATE TABLE IF NOT EXISTS bench_raw_events (event_id text PRIMARY KEY, at timestamptz NOT NULL DEFAULT now())');
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
  lowerCpuPriority(config.WORKER_CPU_NICE); // as src/worker.ts does, before the SDK's threads start
  const db = createPool(config.DATABASE_URL!, 10);
  const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
  const client = new Client({ connection: await Connection.connect({ address: config.TEMPORAL_ADDRESS }), namespace: config.TEMPORAL_NAMESPACE });
  const worker = await createWorker({ connection, namespace: config.TEMPORAL_NAMESPACE, taskQueue: config.TEMPORAL_TASK_QUEUE, deps: { db, config, gateway: createGateway(config) } });
  // As src/worker.ts starts it: paced to the write budget.
  const drainer = startOutboxDrainer({
    db, payoutStarter: temporalPayoutStarter(client, config.TEMPORAL_TASK_QUEUE, db),
    pacing: startPacingFrom(config),
  });
  process.stdout.write('worker ready\n');
  process.once('SIGTERM', () => { void drainer.stop().then(() => worker.shutdown()); });
  await worker.run();
  process.exit(0);
}

export interface BenchWorld {
  services: RunningServices;
  /** Where PostgreSQL's data (postgres/) and Temporal's file live. */
  stateDir: string;
  dbUrl: string;
  db: Db;
  /** The default config the sandbox and the signed webhooks use. */
  base: Config;
  sandbox: RunningSandbox;
  /** In order, after the bench (newest first). */
  cleanups: Array<() => Promise<unknown>>;
}

/** Temporal and PostgreSQL (`durable`: fsync and synchronous commits on, Temporal on its SQLite
 * file, as `npm run dev` and production run; else both in memory / fsync off), a migrated database,
 * the sandbox in this process (transfers processed at once, no webhook target yet) and the pair. */
export async function startBenchWorld(name: string, durable: boolean): Promise<BenchWorld> {
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), `${name}-`));
  fs.chmodSync(stateDir, 0o755);
  const services = await startServices({ projectRoot: path.resolve(__dirname, '..'), stateDir, persistent: durable, temporalPort: 0, temporalUiPort: null, postgresPort: 0, externalDatabaseUrl: process.env.DATABASE_URL || undefined });
  const cleanups: Array<() => Promise<unknown>> = [() => services.stop(), async () => fs.rmSync(stateDir, { recursive: true, force: true })];
  const dbUrl = await ensureDatabase(services.adminDatabaseUrl, `${name.replace(/-/g, '_')}_${Date.now()}`);
  const db = createPool(dbUrl, 4);
  cleanups.unshift(() => db.end());
  await migrate(db);
  const base = loadConfig({});
  const sandbox = await startSandbox({ ...sandboxOptionsFrom(base), port: 0, webhookUrl: null, transferProcessingDelayMs: 0 });
  cleanups.unshift(() => sandbox.close());
  await seedBenchPair(db, await sandbox.control.createLinkedAccount({ name: 'Bench Vendor' }));
  return { services, stateDir, dbUrl, db, base, sandbox, cleanups };
}

/** The app's processes stopped first, then the world, newest first; a failing step does not stop the rest. */
export async function closeBenchWorld(world: Pick<BenchWorld, 'cleanups'>, children: ChildProcess[]): Promise<void> {
  await stopChildren(children);
  for (const cleanup of world.cleanups) await cleanup().catch(() => {});
}

export interface AppChild { proc: ChildProcess; firstLine: Promise<string> }

/** Starts this file as the API or the worker; firstLine is the API's ports (JSON) or 'worker ready'. */
export function appChild(mode: 'api' | 'worker', env: Record<string, string>, nodeArgs: string[] = []): AppChild {
  const proc = spawn(process.execPath, [...nodeArgs, ...process.execArgv, __filename, mode], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
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

/** SIGTERM each child, SIGKILL what has not exited 5 s later. */
export async function stopChildren(children: ChildProcess[]): Promise<void> {
  for (const c of children) c.kill('SIGTERM');
  await Promise.all(children.map((c) => new Promise((r) => {
    if (c.exitCode !== null) { r(null); return; }
    const t = setTimeout(() => { c.kill('SIGKILL'); r(null); }, 5_000);
    c.once('exit', () => { clearTimeout(t); r(null); });
  })));
}

/** One employer and one vendor on a linked account at the sandbox, paid by platform transfer at 19%. */
export async function seedBenchPair(db: Db, account: string): Promise<void> {
  await db.query(`INSERT INTO employers (id, name) VALUES ('emp_bench', 'Bench')`);
  await db.query(`INSERT INTO vendors (id, name, linked_account_id) VALUES ('ven_bench', 'Bench', $1)`, [account]);
  await db.query(`INSERT INTO employer_vendor (employer_id, vendor_id, settlement_mode, commission_bps) VALUES ('emp_bench', 'ven_bench', 'platform_transfer', 1900)`);
}

export interface SeededOrder { id: string; gatewayOrderId: string; paymentId: string; eventId: string }
export interface SignedCapture { body: string; headers: Record<string, string> }

/** `n` orders as placed: ₹100, 90% subsidised, customer share ₹10, awaiting payment on their gateway
 * order; and for each a signed payment.captured of the customer share (the full webhook path runs:
 * event id, order lock, payment row, markPaid, payout row, outbox row, then the payout). */
export async function seedPendingOrders(db: Db, n: number, config: Config): Promise<Array<SeededOrder & { capture: SignedCapture }>> {
  const orders = Array.from({ length: n }, (_, i) => ({ id: rzp('ord'), gatewayOrderId: rzp('order'), paymentId: rzp('pay'), eventId: `evt_bench_${i}_${randomBytes(4).toString('hex')}` }));
  for (let i = 0; i < orders.length; i += 5000) {
    await db.query(
      `INSERT INTO orders (id, client_reference, employer_id, vendor_id, employee_id, total_paise, subsidy_paise, customer_share_paise, commission_bps,
         commission_paise, vendor_net_paise, payment_method, status, gateway_order_id)
       SELECT id, id, 'emp_bench', 'ven_bench', 'e-bench', 10000, 9000, 1000, 1900, 1900, 8100, 'online', 'pending', gateway_order_id
         FROM jsonb_to_recordset($1::jsonb) AS x(id text, "gatewayOrderId" text) CROSS JOIN LATERAL (SELECT x."gatewayOrderId" AS gateway_order_id) g`,
      [JSON.stringify(orders.slice(i, i + 5000))]);
  }
  const created = Math.floor(Date.now() / 1000);
  return orders.map((o) => ({ ...o, capture: signedCapture(config, o.eventId, {
    id: o.paymentId, entity: 'payment', amount: 1000, currency: 'INR', status: 'captured', order_id: o.gatewayOrderId, method: 'upi',
    captured: true, fee: 20, tax: 0, notes: [], created_at: created - 5,
  }) }));
}

/** A payment.captured event for `payment`, as Razorpay signs it with our webhook secret. */
export function signedCapture(config: Pick<Config, 'RAZORPAY_PLATFORM_ACCOUNT_ID' | 'RAZORPAY_WEBHOOK_SECRET'>, eventId: string, payment: object): SignedCapture {
  const body = JSON.stringify({
    entity: 'event', account_id: config.RAZORPAY_PLATFORM_ACCOUNT_ID, event: 'payment.captured', contains: ['payment'],
    created_at: Math.floor(Date.now() / 1000), payload: { payment: { entity: payment } },
  });
  return { body, headers: { 'content-type': 'application/json', 'x-razorpay-event-id': eventId, 'x-razorpay-signature': hmacSha256Hex(body, config.RAZORPAY_WEBHOOK_SECRET) } };
}

if (require.main === module) {
  const mode = process.argv[2];
  const entry = mode === 'api' ? serveApi : mode === 'worker' ? serveWorker : null;
  if (!entry) {
    process.stderr.write('usage: appProcesses.ts api|worker (started by the benches)\n');
    process.exit(2);
  }
  entry().catch((err) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}
