/** Issue 9, item 8: the production topology, proven here. src/devstack/topology.ts starts every
 * piece as its own OS process, configured only through its environment — migrations and key
 * minting by their CLIs, the Razorpay sandbox, two APIs behind a round-robin load balancer, two
 * workers owning the Schedules — on the shared test Temporal server and PostgreSQL server (a fresh
 * database, a task queue of its own). Everything is driven from outside, as in production: the API
 * with minted keys through the load balancer, Razorpay's side through the sandbox's HTTP control
 * routes, the workers by signals to their processes. */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { payoutWorkflowId } from '../../src/contracts/payout';
import { createPool, inTransaction, type Db } from '../../src/db/pool';
import { startTopology } from '../../src/devstack/topology';
import { callApiOk, placeOrder, seedPair, topUpEmployer, waitForPayout } from '../../src/devstack/topologyScenario';
import type { Topology } from '../../src/devstack/topologyTypes';
import { installTemporalCli } from '../../src/devstack/temporal';
import { markPaid } from '../../src/moneyin/markPaid';
import { SCHEDULE_IDS } from '../../src/wiring';
import { testServices } from '../support/db';

const root = path.resolve(__dirname, '../..');
const run = promisify(execFile);

/** ₹100, 99% subsidised (the customer pays ₹1 online), 19% commission: the vendor is owed ₹81. */
const TOTAL = 10_000;
const SUBSIDY = 9_900;
const COMMISSION_BPS = 1_900;
const VENDOR_NET = 8_100;

async function eventually<T>(read: () => Promise<T>, done: (v: T) => boolean, ms: number, what: string): Promise<T> {
  const deadline = Date.now() + ms;
  let last: T | undefined;
  let lastErr: unknown;
  for (;;) {
    try {
      last = await read();
      if (done(last)) return last;
    } catch (err) {
      lastErr = err;
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms; last value ${JSON.stringify(last)}${lastErr ? `, last error ${String(lastErr)}` : ''}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** On the shared dev server, and on a self-hosted Temporal cluster of its own (issue 23: four
 * server processes, persistence and visibility on the test PostgreSQL server), the same promises. */
describe.each([
  ['the shared Temporal dev server', 'dev'],
  ['a self-hosted Temporal cluster (frontend, history, matching, worker as processes; PostgreSQL persistence)', 'cluster'],
] as const)('the production topology on %s: separate processes, configured by their environment', (_label, temporalKind) => {
  let topology: Topology;
  let db: Db;
  let client: Client;
  const tag = randomBytes(3).toString('hex');
  const employerId = `emp_topo_${tag}`;
  const namespace = `topology-${tag}`;
  let seq = 0;

  beforeAll(async () => {
    const services = testServices();
    topology = await startTopology({
      ...(temporalKind === 'cluster' ? { temporal: 'cluster' as const } : { temporalAddress: process.env.TEMPORAL_ADDRESS ?? services.temporalAddress }),
      // Schedule ids are per namespace, and other test files own the default namespace's Schedules
      // (they expect to create them): the topology's workers ensure theirs in a namespace of its own.
      namespace,
      // The server's maintenance database: the topology creates and migrates a database of its own.
      databaseUrl: services.adminDatabaseUrl,
      readyTimeoutMs: 150_000,
    });
    db = createPool(topology.databaseUrl, 4);
    client = new Client({ connection: await Connection.connect({ address: topology.temporalAddress }), namespace: topology.namespace });
    await callApiOk(topology, 'admin', 'POST', '/v1/admin/employers', { id: employerId, name: `Topology employer ${tag}` });
    // Enough for every order's subsidy below.
    await topUpEmployer(topology, employerId, 200_000);
  }, 200_000);

  afterAll(async () => {
    // The Schedules of this test's own namespace would keep firing at a task queue nobody polls.
    if (client) for (const id of SCHEDULE_IDS) await client.schedule.getHandle(id).delete().catch(() => undefined);
    await client?.connection.close();
    await db?.end();
    await topology?.stop();
    if (topology) for (const p of topology.processes()) expect(p.running).toBe(false);
  }, 60_000);

  async function newVendor(): Promise<{ vendorId: string; account: string }> {
    const account = await topology.sandbox.createLinkedAccount();
    const vendorId = `ven_topo_${tag}_${++seq}`;
    await seedPair(topology, { employerId, vendorId, linkedAccountId: account, commissionBps: COMMISSION_BPS });
    return { vendorId, account };
  }

  async function placeUnpaid(vendorId: string): Promise<{ orderId: string; gatewayOrderId: string }> {
    const { order, checkout } = await placeOrder(topology, { clientReference: `topo-${tag}-${++seq}`, employerId, vendorId, totalPaise: TOTAL, subsidyPaise: SUBSIDY });
    expect(order).toMatchObject({ status: 'pending', vendorNetPaise: VENDOR_NET, customerSharePaise: TOTAL - SUBSIDY });
    expect(checkout).toMatchObject({ orderId: order.gatewayOrderId, amountPaise: TOTAL - SUBSIDY });
    return { orderId: order.orderId, gatewayOrderId: checkout!.orderId };
  }

  async function payoutRow(orderId: string) {
    const { rows } = await db.query<{ id: string; status: string; amount_paise: number; linked_account_id: string; provider_transfer_id: string | null }>(
      'SELECT id, status, amount_paise, linked_account_id, provider_transfer_id FROM payouts WHERE order_id = $1', [orderId]);
    return rows[0];
  }

  async function attemptOutcomes(payoutId: string): Promise<string[]> {
    const { rows } = await db.query<{ outcome: string }>('SELECT outcome FROM payout_attempts WHERE payout_id = $1 ORDER BY id', [payoutId]);
    return rows.map((r) => r.outcome);
  }

  /** Exactly one live transfer to `account`: processed, the vendor's net, under this order's payout. */
  async function expectOneTransfer(account: string, orderId: string) {
    const transfers = await eventually(() => topology.sandbox.transfers({ recipient: account }), (t) => t.length > 0 && t.every((x) => x.status === 'processed'), 10_000, `transfers to ${account}`);
    expect(transfers).toHaveLength(1);
    expect(transfers[0]).toMatchObject({ amount: VENDOR_NET, status: 'processed', notes: { order_id: orderId } });
    return transfers[0]!;
  }

  const payoutHandle = (orderId: string): WorkflowHandle => client.workflow.getHandle(payoutWorkflowId(orderId));

  test('1. orders placed through the load balancer (both APIs serve) and paid at checkout are each paid once: one ₹81 transfer per order, payouts settled', async () => {
    const vendors = [];
    for (let i = 0; i < 6; i += 1) vendors.push(await newVendor());
    const servedBefore = topology.proxyServed();
    const orders = [];
    for (const v of vendors) {
      const placed = await placeUnpaid(v.vendorId);
      await topology.sandbox.payOrder(placed.gatewayOrderId);
      orders.push({ ...v, ...placed });
    }
    const served = topology.proxyServed().map((n, i) => n - servedBefore[i]!);
    expect(served.every((n) => n > 0)).toBe(true);

    for (const o of orders) await waitForPayout(topology, o.orderId, ['settled'], 60_000);
    for (const o of orders) {
      const transfer = await expectOneTransfer(o.account, o.orderId);
      expect(await payoutRow(o.orderId)).toMatchObject({ status: 'settled', amount_paise: VENDOR_NET, linked_account_id: o.account, provider_transfer_id: transfer.id });
    }
  }, 120_000);

  test('2. the workers have ensured the four Schedules, on this topology\'s namespace and task queue', async () => {
    const cli = await installTemporalCli(root);
    const listed = await eventually(async () => {
      const { stdout } = await run(cli, ['schedule', 'list', '--address', topology.temporalAddress, '--namespace', topology.namespace, '-o', 'json'], { maxBuffer: 16 << 20 });
      return (JSON.parse(stdout || '[]') as Array<{ scheduleId?: string }>).map((s) => s.scheduleId);
    }, (ids) => SCHEDULE_IDS.every((id) => ids.includes(id)), 20_000, 'temporal schedule list');
    expect(listed).toEqual(expect.arrayContaining(['payout-sweep', 'missed-webhook-sweep', 'split-transfer-sweep', 'recon-daily']));
    for (const id of SCHEDULE_IDS) {
      const schedule = await client.schedule.getHandle(id).describe();
      expect(schedule.action).toMatchObject({ type: 'startWorkflow', taskQueue: topology.taskQueue });
      expect(schedule.state.paused).toBe(false);
    }
  }, 30_000);

  test('3. a payout whose start was lost (the webhook committed, the process died before starting the workflow) is started by the Schedule\'s sweep and paid once', async () => {
    const { vendorId, account } = await newVendor();
    const { orderId, gatewayOrderId } = await placeUnpaid(vendorId);
    // The webhook must not mark it paid (and start the payout) as well: Razorpay cannot reach us.
    await topology.sandbox.setWebhookDelivery(false);
    try {
      const payment = await topology.sandbox.payOrder(gatewayOrderId);
      expect(payment.status).toBe('captured');
      // What the webhook's transaction commits, and nothing after: no workflow start.
      const paid = await inTransaction(db, (tx) => markPaid(tx, orderId, { via: 'webhook', paymentId: payment.id }));
      expect(paid).toMatchObject({ transitioned: true, route: { kind: 'direct_transfer' } });

      const payout = await waitForPayout(topology, orderId, ['settled'], 45_000);
      expect(payout.status).toBe('settled');
      // Started from inside a worker — by the sweep's activity — not by an API.
      const history = await payoutHandle(orderId).fetchHistory();
      const starter = history.events?.[0]?.workflowExecutionStartedEventAttributes?.identity;
      expect(topology.workers.map((w) => w.identity)).toContain(starter);
    } finally {
      await topology.sandbox.setWebhookDelivery(true);
    }
    await topology.sandbox.drainWebhooks(15_000);
    const transfer = await expectOneTransfer(account, orderId);
    expect(await payoutRow(orderId)).toMatchObject({ status: 'settled', provider_transfer_id: transfer.id });
  }, 90_000);

  test('4. SIGKILL of the worker holding an in-flight transfer: it restarts, the other worker carries on, exactly one transfer is made', async () => {
    const { vendorId, account } = await newVendor();
    const { orderId, gatewayOrderId } = await placeUnpaid(vendorId);
    const before = (await topology.sandbox.callCounts())['transfers.create'] ?? 0;
    // The next transfer is committed at the provider and its answer held past every timeout.
    await topology.sandbox.injectFault({ endpoint: 'transfers.create', fault: { kind: 'delay_after_commit', ms: 60_000 }, calls: [1] });
    try {
      await topology.sandbox.payOrder(gatewayOrderId);
      await eventually(async () => (await topology.sandbox.callCounts())['transfers.create'] ?? 0, (n) => n > before, 30_000, 'the transfer call');

      // The worker whose identity the pending sendDirectTransfer activity names is the one to kill.
      const holder = await eventually(async () => {
        const description = await payoutHandle(orderId).describe();
        const pending = description.raw.pendingActivities?.find((a) => a.activityType?.name === 'sendDirectTransfer');
        return pending?.lastWorkerIdentity ?? null;
      }, (id) => !!id, 10_000, 'the pending transfer activity');
      const victim = topology.workers.find((w) => w.identity === holder);
      expect(victim).toBeDefined();
      const killedPid = victim!.pid;
      const exit = await victim!.kill('SIGKILL');
      expect(exit?.signal).toBe('SIGKILL');
      expect(await payoutRow(orderId)).toMatchObject({ status: 'processing' });

      await victim!.restart();
      expect(victim!.pid).not.toBe(killedPid);
      expect(topology.workers.every((w) => w.running)).toBe(true);
      await waitForPayout(topology, orderId, ['settled'], 60_000);
    } finally {
      await topology.sandbox.clearFaults();
    }
    const transfer = await expectOneTransfer(account, orderId);
    expect((await topology.sandbox.callCounts())['transfers.create']).toBe(before + 1);
    const row = (await payoutRow(orderId))!;
    expect(row).toMatchObject({ status: 'settled', provider_transfer_id: transfer.id });
    expect(await attemptOutcomes(row.id)).toEqual(['unknown', 'recovered', 'settled']);
  }, 150_000);
});
