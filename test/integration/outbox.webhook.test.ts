/** Issue 12 item 1: the webhook replies at the speed of one transaction. The API here is built with
 * a payout starter that never answers (Temporal hung): the webhook never asks it — the reply comes
 * at once, with the payouts_outbox row committed beside the payout, due at once — and a drainer
 * started later (after a first one claimed the row and died) starts the workflow, once; the wake the
 * API sends just after the commit reaches a drainer that would otherwise poll only once a minute. Real API, PostgreSQL,
 * Temporal and the sandbox. */
import type { AddressInfo } from 'node:net';
import { randomBytes, randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { buildApi } from '../../src/api/server';
import { payoutWorkflowId } from '../../src/contracts/payout';
import { claimDue, startOutboxDrainer, type OutboxDrainer } from '../../src/outbox/drainer';
import type { PayoutStarter } from '../../src/payouts/starter';
import { temporalPayoutStarter } from '../../src/payouts/temporalStarter';
import { isolatedPool, testServices } from '../support/db';
import { mintRoleKeys } from '../support/apiKeys';
import { startTestSandbox } from '../support/sandbox';
import { eventually, http, postWebhook, seedPair, topUp, uniqueRef, type MoneyInHarness } from './moneyinHarness';
import { envelope } from './webhooksHarness';

const EMPLOYER = 'emp_outbox';
const VENDOR = 'ven_outbox';

describe('outbox: the webhook does not wait for Temporal', () => {
  let h: MoneyInHarness;
  let connection: Connection;
  let client: Client;
  const taskQueue = `outbox-${randomBytes(4).toString('hex')}`; // no worker polls it: a started run just waits
  const hungStarts: string[] = [];
  let drainer: OutboxDrainer | undefined;

  beforeAll(async () => {
    const { db } = await isolatedPool();
    const started = await startTestSandbox();
    const hangs: PayoutStarter = { startPayout: (orderId) => { hungStarts.push(orderId); return new Promise<void>(() => {}); } };
    const app = await buildApi({ config: started.config, db, gateway: started.gateway, payoutStarter: hangs });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    await started.sandbox.control.setWebhookTarget(`${baseUrl}/webhooks/razorpay`);
    h = {
      db, config: started.config, gateway: started.gateway, sandbox: started.sandbox, app, baseUrl, payoutStarts: [], keys: await mintRoleKeys(db),
      async close() { await started.sandbox.close(); await app.close(); await db.end(); },
    };
    await seedPair(h, { employerId: EMPLOYER, vendorId: VENDOR, commissionBps: 1_900 });
    await topUp(h, 'employer', EMPLOYER, 1_000_000);
    connection = await Connection.connect({ address: testServices().temporalAddress });
    client = new Client({ connection, namespace: 'default' });
  });

  afterAll(async () => {
    await drainer?.stop();
    await h?.close();
    await connection?.close();
  });

  test('when the payout starter hangs, the capture webhook is answered in < 200 ms without asking it, the outbox row committed due at once, and a drainer started after a first drainer died holding it starts the workflow once', async () => {
    const placed = await http(h, 'POST', '/v1/orders', {
      clientReference: uniqueRef('outbox'), employerId: EMPLOYER, vendorId: VENDOR, employeeId: 'e-outbox',
      totalPaise: 10_000, subsidyPaise: 9_000, customerSharePaise: 1_000, paymentMethod: 'online',
    });
    expect(placed.status).toBe(201);
    const { orderId, gatewayOrderId } = placed.body.order;
    await h.sandbox.control.setWebhookDelivery(false);
    const payment = await h.sandbox.control.authorizeOrder(gatewayOrderId);
    const captured = { ...payment, status: 'captured', captured: true };
    const body = envelope(h, 'payment.captured', { payment: captured });

    const t0 = performance.now();
    const reply = await postWebhook(h, body, { eventId: `evt_${randomUUID()}` });
    const elapsedMs = performance.now() - t0;
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ duplicate: false });
    expect(elapsedMs).toBeLessThan(200);
    expect(hungStarts).toEqual([]); // the API leaves the start to the drainer

    // Committed with the reply: the order is paid, the payout pending, its start in the outbox.
    expect((await h.db.query('SELECT status FROM orders WHERE id = $1', [orderId])).rows).toEqual([{ status: 'paid' }]);
    expect((await h.db.query('SELECT status FROM payouts WHERE order_id = $1', [orderId])).rows).toEqual([{ status: 'pending' }]);
    const outbox = await h.db.query<{ kind: string; attempts: number; due: boolean }>(
      'SELECT kind, attempts, next_attempt_at <= now() AS due FROM payouts_outbox WHERE order_id = $1', [orderId]);
    expect(outbox.rows).toEqual([{ kind: 'start_payout', attempts: 0, due: true }]);

    // A first drainer claims the row and dies.
    expect((await claimDue(h.db, 10, 400)).map((r) => r.orderId)).toEqual([orderId]);
    expect(await claimDue(h.db, 10)).toEqual([]); // held by the dead drainer's lease

    // A drainer started now, with the real Temporal starter.
    const real = temporalPayoutStarter(client, taskQueue, h.db);
    const starts: string[] = [];
    drainer = startOutboxDrainer({ db: h.db, payoutStarter: { async startPayout(id) { starts.push(id); await real.startPayout(id); } }, pollMs: 100 });
    const left = await eventually(async () => (await h.db.query('SELECT count(*)::int AS n FROM payouts_outbox')).rows[0].n as number, (n) => n === 0, 10_000);
    expect(left).toBe(0);
    const handle = client.workflow.getHandle(payoutWorkflowId(orderId));
    const described = await handle.describe();
    expect(described.status.name).toBe('RUNNING');
    expect(described.taskQueue).toBe(taskQueue);

    await new Promise((r) => setTimeout(r, 500)); // more polls change nothing
    expect(starts).toEqual([orderId]);
    // A second start (a late API try, the sweep) joins the same run.
    await real.startPayout(orderId);
    expect((await client.workflow.getHandle(payoutWorkflowId(orderId)).describe()).runId).toBe(described.runId);
    await handle.terminate('test over');
    await drainer.stop();
  });

  /** A placed order, authorised at the sandbox, and the signed payment.captured body for it. */
  async function capturedOrder(label: string): Promise<{ orderId: string; body: string }> {
    const placed = await http(h, 'POST', '/v1/orders', {
      clientReference: uniqueRef(label), employerId: EMPLOYER, vendorId: VENDOR, employeeId: 'e-outbox',
      totalPaise: 10_000, subsidyPaise: 9_000, customerSharePaise: 1_000, paymentMethod: 'online',
    });
    const { orderId, gatewayOrderId } = placed.body.order;
    const payment = await h.sandbox.control.authorizeOrder(gatewayOrderId);
    return { orderId, body: envelope(h, 'payment.captured', { payment: { ...payment, status: 'captured', captured: true } }) };
  }

  test('when a capture webhook commits, the NOTIFY sent after it wakes a drainer that polls once a minute and the workflow starts within 2 s', async () => {
    const real = temporalPayoutStarter(client, taskQueue, h.db);
    const starts: string[] = [];
    const listening = startOutboxDrainer({ db: h.db, payoutStarter: { async startPayout(id) { starts.push(id); await real.startPayout(id); } }, pollMs: 60_000 });
    try {
      await new Promise((r) => setTimeout(r, 300)); // its first pass (at start) is over; it now waits on LISTEN
      const { orderId, body } = await capturedOrder('outbox-notify');
      expect((await postWebhook(h, body, { eventId: `evt_${randomUUID()}` })).status).toBe(200);
      const left = await eventually(async () => (await h.db.query('SELECT count(*)::int AS n FROM payouts_outbox WHERE order_id = $1', [orderId])).rows[0].n as number, (n) => n === 0, 2_000);
      expect(left).toBe(0);
      expect(starts).toEqual([orderId]);
      await client.workflow.getHandle(payoutWorkflowId(orderId)).terminate('test over');
    } finally {
      await listening.stop();
    }
  });

  test('when the same capture is delivered again, the duplicate writes no second outbox row', async () => {
    const { orderId, body } = await capturedOrder('outbox-dup');
    const first = await postWebhook(h, body, { eventId: `evt_${randomUUID()}` });
    const again = await postWebhook(h, body, { eventId: `evt_${randomUUID()}` }); // a new event id for the same fact
    const same = await postWebhook(h, body, { eventId: `evt_${randomUUID()}` });
    expect([first.status, again.status, same.status]).toEqual([200, 200, 200]);
    const rows = await h.db.query('SELECT count(*)::int AS n FROM payouts_outbox WHERE order_id = $1', [orderId]);
    // The drainer from the first test may already have taken it: never more than one.
    expect(rows.rows[0].n).toBeLessThanOrEqual(1);
    expect((await h.db.query('SELECT count(*)::int AS n FROM payouts WHERE order_id = $1', [orderId])).rows[0].n).toBe(1);
  });
});
