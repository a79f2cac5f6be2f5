/** Scenario 5: the worker PROCESS dies (SIGKILL) while the transfer call is in flight. The sandbox
 * commits the transfer and holds the answer; the first worker is killed; a second worker starts.
 * The createTransfer activity times out (maximumAttempts 1) → unknown → the resolver finds the
 * transfer under our note → exactly one transfer. */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../../src/config/config';
import { payoutWorkflowId, type PayoutWorkflowResult } from '../../src/contracts/payout';
import { closeBatchNowSignal, payoutBatchWorkflowId } from '../../src/contracts/payoutBatch';
import type { Db } from '../../src/db/pool';
import { startPayoutWorkflow } from '../../src/payouts/temporalStarter';
import { startSandbox, type RunningSandbox } from '../../src/sandbox';
import { isolatedPool, testServices } from '../support/db';
import { attemptOutcomes, eventually, payoutRow, recordHistory, seedPaidOrder } from './payoutSeed';

const root = path.resolve(__dirname, '../..');

describe('payouts: a worker killed mid-transfer', () => {
  let db: Db;
  let dbUrl: string;
  let sandbox: RunningSandbox;
  let client: Client;
  const children: ChildProcess[] = [];
  const taskQueue = `payout-kill-${Date.now()}`;

  beforeAll(async () => {
    ({ db, url: dbUrl } = await isolatedPool());
    const defaults = loadConfig();
    sandbox = await startSandbox({ keyId: defaults.RAZORPAY_KEY_ID, keySecret: defaults.RAZORPAY_KEY_SECRET, webhookSecret: defaults.RAZORPAY_WEBHOOK_SECRET, transferProcessingDelayMs: 200 });
    const connection = await Connection.connect({ address: testServices().temporalAddress });
    client = new Client({ connection, namespace: 'default' });
  });

  afterAll(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await Promise.all(children.map((c) => (c.exitCode === null && c.signalCode === null ? new Promise((r) => c.once('exit', r)) : undefined)));
    await client?.connection.close();
    await sandbox?.close();
    await db?.end();
  });

  /** src/worker.ts as its own process, configured only through the environment. Node itself with
   * tsx's loader (not the `tsx` wrapper, which would be a second process): SIGKILL must hit the worker. */
  function startWorkerProcess(): Promise<ChildProcess> {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'src/worker.ts')], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        DATABASE_URL: dbUrl,
        TEMPORAL_ADDRESS: testServices().temporalAddress,
        TEMPORAL_TASK_QUEUE: taskQueue,
        RAZORPAY_BASE_URL: sandbox.baseUrl,
        LOG_LEVEL: 'info',
        WORKER_SCHEDULES: 'off', // the shared test server's Schedules belong to the tests that check them
        WORKER_HEALTH_PORT: '0',
        GATEWAY_TIMEOUT_MS: '3000',
        PAYOUT_TRANSFER_TIMEOUT_MS: '4000',
        PAYOUT_SETTLEMENT_POLL_MS: '300',
        PAYOUT_RESOLVER_RETRY_MS: '300',
        PAYOUT_STALE_CLAIM_MS: '6000',
        PAYOUT_RETRY_BACKOFF_MS: '200',
      },
    });
    children.push(child);
    return new Promise((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`worker did not start: ${out}`)), 60_000);
      child.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('worker started')) { clearTimeout(timer); resolve(child); }
      });
      child.stderr!.on('data', (chunk: Buffer) => { out += chunk.toString(); });
      child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`worker exited with ${code}: ${out}`)); });
    });
  }

  test('5. when the worker process is SIGKILLed while the transfer call is in flight and a new worker starts, then exactly one transfer is made', async () => {
    const control = sandbox.control;
    const account = await control.createLinkedAccount();
    const order = await seedPaidOrder(db, { linkedAccountId: account });
    const first = await startWorkerProcess();
    // The transfer is committed at the provider, then the answer is held far past every timeout.
    await control.injectFault({ endpoint: 'transfers.create', fault: { kind: 'delay_after_commit', ms: 60_000 }, calls: [1] });
    await startPayoutWorkflow(client, taskQueue, order.orderId);
    await eventually(async () => (await control.callCounts())['transfers.create'] ?? 0, (n) => n === 1, 30_000);
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    expect(await payoutRow(db, order.orderId)).toMatchObject({ status: 'processing', attempts: 1 });

    await startWorkerProcess();
    const result = (await client.workflow.getHandle(payoutWorkflowId(order.orderId)).result()) as PayoutWorkflowResult;
    expect(result).toMatchObject({ kind: 'finished', status: 'settled', attempts: 1 });

    const transfers = await control.transfers({ recipient: account });
    expect(transfers).toHaveLength(1);
    expect(transfers[0]).toMatchObject({ amount: 8_100, notes: { transaction_id: order.payoutId, order_id: order.orderId } });
    expect((await control.callCounts())['transfers.create']).toBe(1);
    expect(await payoutRow(db, order.orderId)).toMatchObject({ status: 'settled', provider_transfer_id: transfers[0]!.id });
    expect(await attemptOutcomes(db, order.payoutId!)).toEqual(['unknown', 'recovered', 'settled']);
    await recordHistory(client, payoutWorkflowId(order.orderId), 'payout-worker-killed');
  });

  test('5b. when the worker process is SIGKILLed while an hourly batch\'s transfer is in flight and a new worker starts, then the batch pays its orders with exactly one transfer', async () => {
    const control = sandbox.control;
    const account = await control.createLinkedAccount();
    const first = await seedPaidOrder(db, { linkedAccountId: account });
    await db.query(`UPDATE employer_vendor SET payout_schedule = 'hourly' WHERE employer_id = $1 AND vendor_id = $2`, [first.employerId, first.vendorId]);
    const second = await seedPaidOrder(db, { linkedAccountId: account, pair: first });
    const worker = await startWorkerProcess();
    for (const o of [first, second]) await startPayoutWorkflow(client, taskQueue, o.orderId);
    const joined = await Promise.all([first, second].map((o) => client.workflow.getHandle(payoutWorkflowId(o.orderId)).result() as Promise<PayoutWorkflowResult>));
    const batchId = joined[0]!.kind === 'batched' ? joined[0]!.batchId : '';
    expect(joined.map((r) => r.kind === 'batched' && r.batchId)).toEqual([batchId, batchId]);
    const createsBefore = (await control.callCounts())['transfers.create'] ?? 0;
    await control.injectFault({ endpoint: 'transfers.create', fault: { kind: 'delay_after_commit', ms: 60_000 }, calls: [1] });
    await client.workflow.getHandle(payoutBatchWorkflowId(batchId)).signal(closeBatchNowSignal, { actor: 'test' });
    await eventually(async () => (await control.callCounts())['transfers.create'] ?? 0, (n) => n === createsBefore + 1, 30_000);
    worker.kill('SIGKILL');
    await new Promise((r) => worker.once('exit', r));
    const carrier = (await db.query('SELECT id, status, attempts FROM payouts WHERE batch_id = $1', [batchId])).rows[0];
    expect(carrier).toMatchObject({ status: 'processing', attempts: 1 });

    await startWorkerProcess();
    const result = (await client.workflow.getHandle(payoutBatchWorkflowId(batchId)).result()) as PayoutWorkflowResult;
    expect(result).toMatchObject({ kind: 'finished', status: 'settled', attempts: 1 });
    const transfers = await control.transfers({ recipient: account });
    expect(transfers).toHaveLength(1);
    expect(transfers[0]).toMatchObject({ amount: 2 * 8_100, notes: { transaction_id: carrier.id, batch_id: batchId } });
    expect((await control.callCounts())['transfers.create']).toBe(createsBefore + 1);
    expect(await attemptOutcomes(db, carrier.id)).toEqual(['unknown', 'recovered', 'settled']);
    const members = await db.query('SELECT status FROM payouts WHERE order_id = ANY($1)', [[first.orderId, second.orderId]]);
    expect(members.rows.map((r) => r.status)).toEqual(['settled', 'settled']);
    await recordHistory(client, payoutBatchWorkflowId(batchId), 'payout-batch-worker-killed');
  });
});
