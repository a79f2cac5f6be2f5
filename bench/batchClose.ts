/** `npm run bench:batch-close`: a daily batch of 60,000 orders for one employer–vendor pair closes and
 * pays ONE transfer (issue 36 item 5), beside a 5-order batch of another pair closed the same way.
 *
 * The members are seeded in bulk (orders, their confirmed payments, their payouts already `batched`,
 * their offline-ledger lines and their payout_batch_orders rows, as test/integration/payoutSeed.ts's
 * seedPaidOrder and a join leave them) with INSERT … SELECT generate_series. The batch's run is then
 * started as joiners start it: BENCH_JOINER_STARTS (default 1,000) idempotent starts, which must add
 * nothing to its history. Ops close it early (the closeBatchNow signal the console sends), and the
 * real workflow closes it (the sum read from the database), claims, sends, and waits for settlement
 * (polled: the sandbox delivers no webhooks here).
 *
 * Figures: the close (signal to the batch row closed), the whole run (signal to settled, the members
 * included), the batch run's history length for both batches, the transfers at the sandbox, and the
 * load average. Temporal and PostgreSQL run as `npm run dev` runs them (fsync on, Temporal on its
 * SQLite file); the worker runs in this process. */
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { NativeConnection } from '@temporalio/worker';
import { z } from 'zod';
import { loadConfig } from '../src/config/config';
import { payoutWorkflowId, type PayoutWorkflowResult } from '../src/contracts/payout';
import { payoutBatchWorkflowId } from '../src/contracts/payoutBatch';
import { createPool, type Db } from '../src/db/pool';
import { batchIdOf, windowAt } from '../src/domain/batchWindow';
import { createGateway } from '../src/gateway';
import { signalCloseBatchNow, startBatchRun } from '../src/payouts/batchStarter';
import { createWorker } from '../src/worker';
import { closeBenchWorld, startBenchWorld } from './appProcesses';
import { loadAverage, log, runBench } from './harness';

const settings = z.object({
  BENCH_BATCH_ORDERS: z.coerce.number().int().min(1).default(60_000),
  BENCH_JOINER_STARTS: z.coerce.number().int().min(1).default(1_000),
}).parse(process.env);

/** As seedPaidOrder's default order: ₹100, ₹99 subsidy, ₹1 paid online, 19% commission, ₹81 net. */
const ORDER = { total: 10_000, subsidy: 9_900, bps: 1_900, commission: 1_900, net: 8_100 } as const;

interface Pair { employerId: string; vendorId: string; account: string }
interface SeededBatch { batchId: string; cutoffAt: string; orders: number; sumPaise: number }

async function seedPair(db: Db, tag: string, account: string): Promise<Pair> {
  const pair = { employerId: `emp_${tag}`, vendorId: `ven_${tag}`, account };
  await db.query('INSERT INTO employers (id, name) VALUES ($1, $1)', [pair.employerId]);
  await db.query('INSERT INTO vendors (id, name, linked_account_id) VALUES ($1, $1, $2)', [pair.vendorId, account]);
  await db.query(`INSERT INTO employer_vendor (employer_id, vendor_id, settlement_mode, commission_bps, payout_schedule)
                  VALUES ($1, $2, 'platform_transfer', $3, 'daily')`, [pair.employerId, pair.vendorId, ORDER.bps]);
  return pair;
}

/** `n` paid orders of the pair, joined to today's open daily batch: one statement per table. */
async function seedJoinedBatch(db: Db, pair: Pair, tag: string, n: number): Promise<SeededBatch> {
  const window = windowAt('daily', new Date());
  const batchId = batchIdOf(pair, window);
  await db.query(`INSERT INTO payout_batches (id, employer_id, vendor_id, schedule, window_start, cutoff_at) VALUES ($1, $2, $3, 'daily', $4, $5)`,
    [batchId, pair.employerId, pair.vendorId, window.start, window.cutoff]);
  // Ids `ord_<tag><i>`, `pay_<tag><i>`, `order_<tag><i>`: $1 is the tag, $2 the count.
  await db.query(
    `INSERT INTO orders (id, client_reference, employer_id, vendor_id, employee_id, total_paise, subsidy_paise, customer_share_paise,
       commission_bps, commission_paise, vendor_net_paise, payment_method, status, paid_at, gateway_order_id, paid_via, paid_payment_id)
     SELECT 'ord_' || $1 || i, 'ref_' || $1 || i, $3, $4, 'emp-1', ${ORDER.total}, ${ORDER.subsidy}, ${ORDER.total - ORDER.subsidy},
            ${ORDER.bps}, ${ORDER.commission}, ${ORDER.net}, 'online', 'paid', now(), 'order_' || $1 || i, 'webhook', 'pay_' || $1 || i
       FROM generate_series(1, $2::int) i`, [tag, n, pair.employerId, pair.vendorId]);
  await db.query(
    `INSERT INTO payments (id, gateway_order_id, order_id, amount_paise, status, method, captured_at, raw, capture_confirmed_at)
     SELECT 'pay_' || $1 || i, 'order_' || $1 || i, 'ord_' || $1 || i, ${ORDER.total - ORDER.subsidy}, 'captured', 'card', now(), '{}', now()
       FROM generate_series(1, $2::int) i`, [tag, n]);
  // The payouts as a join leaves them: `batched`, no retry due, no claim.
  await db.query(
    `WITH s AS (SELECT i, gen_random_uuid() AS u FROM generate_series(1, $2::int) i)
     INSERT INTO payouts (id, order_id, vendor_id, linked_account_id, amount_paise, idempotency_key, status)
     SELECT u, 'ord_' || $1 || i, $3, $4, ${ORDER.net}, u::text, 'batched' FROM s`, [tag, n, pair.vendorId, pair.account]);
  await db.query(
    `INSERT INTO offline_ledger (order_id, employer_id, vendor_id, amount_paise, route)
     SELECT 'ord_' || $1 || i, $3, $4, ${ORDER.net}, 'direct_transfer' FROM generate_series(1, $2::int) i`, [tag, n, pair.employerId, pair.vendorId]);
  await db.query(
    `INSERT INTO payout_batch_orders (order_id, batch_id, amount_paise)
     SELECT 'ord_' || $1 || i, $3, ${ORDER.net} FROM generate_series(1, $2::int) i`, [tag, n, batchId]);
  await db.query('ANALYZE orders, payments, payouts, offline_ledger, payout_batch_orders');
  return { batchId, cutoffAt: window.cutoff.toISOString(), orders: n, sumPaise: n * ORDER.net };
}

const historyOf = async (client: Client, batchId: string) => (await client.workflow.getHandle(payoutBatchWorkflowId(batchId)).fetchHistory()).events ?? [];
const historyLength = async (client: Client, batchId: string) => (await historyOf(client, batchId)).length;

/** The run's events by type, and the failures it recorded (a step that timed out and was retried). */
async function historyBreakdown(client: Client, batchId: string): Promise<string> {
  const counts = new Map<string, number>();
  const failures: string[] = [];
  for (const e of await historyOf(client, batchId)) {
    const type = String(temporal.api.enums.v1.EventType[Number(e.eventType)] ?? e.eventType).replace('EVENT_TYPE_', '').toLowerCase();
    counts.set(type, (counts.get(type) ?? 0) + 1);
    const failure = e.markerRecordedEventAttributes?.failure ?? e.workflowTaskFailedEventAttributes?.failure ?? e.activityTaskFailedEventAttributes?.failure;
    if (failure) failures.push(`${type}: ${failure.message ?? ''}`);
    if (e.workflowTaskTimedOutEventAttributes || e.activityTaskTimedOutEventAttributes) failures.push(type);
  }
  return `${[...counts].map(([t, n]) => `${t} ${n}`).join(', ')}${failures.length ? `; failures: ${failures.join(' | ')}` : ''}`;
}

/** Starts as `starts` joiners would (ten at a time), then waits until the run is idle before its cutoff. */
async function startAsJoiners(client: Client, taskQueue: string, batch: SeededBatch, starts: number): Promise<{ lengthAfterFirst: number; lengthAfterAll: number; ms: number }> {
  await startBatchRun(client, taskQueue, batch);
  const idle = async () => {
    let before = -1;
    for (;;) {
      await new Promise((r) => setTimeout(r, 500));
      const now = await historyLength(client, batch.batchId);
      if (now === before) return now;
      before = now;
    }
  };
  const lengthAfterFirst = await idle();
  const t0 = performance.now();
  for (let i = 1; i < starts; i += 10) {
    await Promise.all(Array.from({ length: Math.min(10, starts - i) }, () => startBatchRun(client, taskQueue, batch)));
  }
  const ms = performance.now() - t0;
  return { lengthAfterFirst, lengthAfterAll: await idle(), ms };
}

/** Ops close the batch early; the figures of its close and its payment. */
async function closeAndPay(db: Db, client: Client, taskQueue: string, batch: SeededBatch) {
  const t0 = performance.now();
  await signalCloseBatchNow(client, taskQueue, batch, 'bench');
  let closeMs = NaN;
  while (Number.isNaN(closeMs)) {
    const { rows } = await db.query<{ status: string }>('SELECT status FROM payout_batches WHERE id = $1', [batch.batchId]);
    if (rows[0]?.status === 'closed') closeMs = performance.now() - t0;
    else await new Promise((r) => setTimeout(r, 20));
  }
  const result = await client.workflow.getHandle(payoutWorkflowId(batch.batchId)).result() as PayoutWorkflowResult;
  const paidMs = performance.now() - t0;
  const { rows: members } = await db.query<{ status: string; n: number }>(
    `SELECT p.status, count(*)::int AS n FROM payout_batch_orders m JOIN payouts p ON p.order_id = m.order_id WHERE m.batch_id = $1 GROUP BY 1 ORDER BY 1`, [batch.batchId]);
  return { result, closeMs, paidMs, members, history: await historyLength(client, batch.batchId) };
}

async function main(): Promise<void> {
  const world = await startBenchWorld('batch-close-bench', true);
  const { services, dbUrl, sandbox } = world;
  const db = world.db;
  try {
    const n = settings.BENCH_BATCH_ORDERS;
    await sandbox.control.setPlatformBalance((n + 5) * ORDER.net * 2);
    const large = await seedPair(db, 'large', await sandbox.control.createLinkedAccount({ name: 'Large Vendor' }));
    const small = await seedPair(db, 'small', await sandbox.control.createLinkedAccount({ name: 'Small Vendor' }));
    let t = performance.now();
    const largeBatch = await seedJoinedBatch(db, large, 'l', n);
    const seedS = (performance.now() - t) / 1000;
    const smallBatch = await seedJoinedBatch(db, small, 's', 5);
    log(`seeded ${n.toLocaleString('en-IN')} joined orders in ${seedS.toFixed(1)} s (and 5 for the small pair); load ${loadAverage()}`);

    const taskQueue = `batch-close-bench-${Date.now()}`;
    const config = loadConfig({ ...process.env, DATABASE_URL: dbUrl, TEMPORAL_ADDRESS: services.temporalAddress, TEMPORAL_TASK_QUEUE: taskQueue,
      RAZORPAY_BASE_URL: sandbox.baseUrl, LOG_LEVEL: process.env.LOG_LEVEL ?? 'error', PAYOUT_SETTLEMENT_POLL_MS: '1000' });
    const workerDb = createPool(dbUrl, 10);
    world.cleanups.unshift(() => workerDb.end());
    const workerConnection = await NativeConnection.connect({ address: services.temporalAddress });
    const worker = await createWorker({ connection: workerConnection, namespace: 'default', taskQueue, deps: { db: workerDb, config, gateway: createGateway(config) } });
    const running = worker.run();
    world.cleanups.unshift(async () => { worker.shutdown(); await running; await workerConnection.close(); });
    const connection = await Connection.connect({ address: services.temporalAddress });
    world.cleanups.unshift(() => connection.close());
    const client = new Client({ connection, namespace: 'default' });

    const starts = settings.BENCH_JOINER_STARTS;
    const joined = await startAsJoiners(client, taskQueue, largeBatch, starts);
    const smallJoined = await startAsJoiners(client, taskQueue, smallBatch, 5);
    log(`joiners' starts: ${starts.toLocaleString('en-IN')} starts of the large batch's run in ${(joined.ms / 1000).toFixed(1)} s; its history ${joined.lengthAfterFirst} events after the first, ${joined.lengthAfterAll} after all (small batch: ${smallJoined.lengthAfterAll}); load ${loadAverage()}`);

    const smallPaid = await closeAndPay(db, client, taskQueue, smallBatch);
    t = performance.now();
    const largePaid = await closeAndPay(db, client, taskQueue, largeBatch);
    const transfers = await sandbox.control.transfers({ recipient: large.account });
    log(`close of ${n.toLocaleString('en-IN')} orders: ${largePaid.closeMs.toFixed(0)} ms (signal to the batch row closed with its sum); paid and settled with its members ${(largePaid.paidMs / 1000).toFixed(1)} s; load ${loadAverage()}`);
    log(`close of 5 orders: ${smallPaid.closeMs.toFixed(0)} ms; paid and settled ${(smallPaid.paidMs / 1000).toFixed(1)} s`);
    log(`batch run history: ${largePaid.history} events with ${n.toLocaleString('en-IN')} members, ${smallPaid.history} with 5 (Temporal's limit: 51,200)`);
    log(`large batch run's events: ${await historyBreakdown(client, largeBatch.batchId)}`);
    log(`small batch run's events: ${await historyBreakdown(client, smallBatch.batchId)}`);
    log(`result: ${JSON.stringify(largePaid.result)}; members ${JSON.stringify(largePaid.members)}`);
    log(`sandbox transfers to the large vendor: ${transfers.length} — ${transfers.map((t2) => `${t2.id} ${t2.amount} paise ${t2.status} notes.batch_id=${Array.isArray(t2.notes) ? '' : t2.notes.batch_id}`).join('; ')}`);
    const ok = transfers.length === 1 && transfers[0]!.amount === largeBatch.sumPaise && transfers[0]!.status === 'processed'
      && largePaid.members.length === 1 && largePaid.members[0]!.status === 'settled' && largePaid.members[0]!.n === n
      && joined.lengthAfterAll === joined.lengthAfterFirst;
    log(ok ? `OK: one transfer of ${largeBatch.sumPaise} paise (${n} × ${ORDER.net}); the joiners' starts added no event` : 'NOT OK: see the lines above');
    if (!ok) process.exitCode = 1;
  } finally {
    await closeBenchWorld(world, []);
  }
}

runBench(main);
