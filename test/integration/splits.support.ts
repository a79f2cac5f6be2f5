/** A stack for the split, transfer-webhook and refund tests of issue 10 (items 3, 4, 9): an isolated
 * database, the Razorpay sandbox delivering signed webhooks to the real API, an in-process worker
 * whose activities read a clock the test can move (Razorpay's retry window for failed splits is
 * days), the ops refund queue on its own listener, and small helpers over HTTP. */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import Fastify from 'fastify';
import { opsRefundRoutes } from '../../src/api/routes/opsRefunds';
import { installErrorHandler } from '../../src/api/errors';
import { buildApi } from '../../src/api/server';
import { installRouteAuth } from '../../src/auth/routeAuth';
import { loadConfig, type Config } from '../../src/config/config';
import { missedWebhookSweepWorkflowId, type MissedWebhookSweepResult } from '../../src/contracts/missedWebhookSweep';
import { splitTransferSweepWorkflowId, type SplitTransferSweepResult } from '../../src/contracts/splitTransfer';
import type { Db } from '../../src/db/pool';
import { createGateway } from '../../src/gateway';
import { hmacSha256Hex } from '../../src/gateway/signatures';
import type { Gateway } from '../../src/gateway/types';
import { temporalPayoutStarter } from '../../src/payouts/temporalStarter';
import { startSandbox, type RunningSandbox, type SandboxOptions } from '../../src/sandbox';
import { missedWebhookSweepWorkflow } from '../../src/workflows/missedWebhookSweep';
import { splitTransferSweepWorkflow } from '../../src/workflows/splitTransfer';
import { mintRoleKeys, type RoleKeys } from '../support/apiKeys';
import { isolatedPool } from '../support/db';
import { startTestWorker, type TestTemporal } from '../support/temporal';

export interface SplitStack {
  db: Db;
  /** The stack's own database (isolatedPool). */
  databaseUrl: string;
  config: Config;
  gateway: Gateway;
  sandbox: RunningSandbox;
  control: RunningSandbox['control'];
  temporal: TestTemporal;
  api: FastifyInstance;
  apiUrl: string;
  opsUrl: string;
  keys: RoleKeys;
  /** The worker's activity clock is the wall clock shifted by this (ms). */
  shiftClock(ms: number): void;
  close(): Promise<void>;
}

export async function startSplitStack(opts: { name: string; env?: Record<string, string>; sandbox?: Partial<SandboxOptions> }): Promise<SplitStack> {
  const { db, url: databaseUrl } = await isolatedPool();
  const defaults = loadConfig();
  const sandbox = await startSandbox({
    keyId: defaults.RAZORPAY_KEY_ID, keySecret: defaults.RAZORPAY_KEY_SECRET, webhookSecret: defaults.RAZORPAY_WEBHOOK_SECRET,
    webhookRetryBaseMs: 100, webhookMaxAttempts: 4, ...opts.sandbox,
  });
  const taskQueue = `${opts.name}-${Date.now()}`;
  const config = loadConfig({ ...process.env, RAZORPAY_BASE_URL: sandbox.baseUrl, TEMPORAL_TASK_QUEUE: taskQueue, ...opts.env });
  const gateway = createGateway(config);
  let shiftMs = 0;
  const temporal = await startTestWorker({ db, config, gateway, now: () => new Date(Date.now() + shiftMs) }, taskQueue);
  const api = await buildApi({ config, db, gateway, temporal: temporal.client, payoutStarter: temporalPayoutStarter(temporal.client, taskQueue) });
  const apiUrl = await api.listen({ port: 0, host: '127.0.0.1' });
  await sandbox.control.setWebhookTarget(`${apiUrl}/webhooks/razorpay`);
  // The ops refund routes as server.ts will register them (one line there, outside these files).
  const ops = Fastify({ logger: false });
  installErrorHandler(ops);
  installRouteAuth(ops, db);
  await ops.register(async (scope) => opsRefundRoutes(scope, { db }));
  const opsUrl = await ops.listen({ port: 0, host: '127.0.0.1' });
  const keys = await mintRoleKeys(db);
  return {
    db, databaseUrl, config, gateway, sandbox, control: sandbox.control, temporal, api, apiUrl, opsUrl, keys,
    shiftClock(ms) { shiftMs = ms; },
    async close() {
      await ops.close();
      await api.close();
      await temporal.close();
      await sandbox.close();
      await db.end();
    },
  };
}

export interface Answer { status: number; body: any } // eslint-disable-line @typescript-eslint/no-explicit-any

export async function call(url: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** Posts a body as Razorpay would, correctly signed with the webhook secret (which may have leaked). */
export async function postSignedWebhook(s: SplitStack, rawBody: string, eventId = `evt_${randomBytes(7).toString('hex')}`): Promise<Answer> {
  const res = await fetch(`${s.apiUrl}/webhooks/razorpay`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-razorpay-event-id': eventId, 'x-razorpay-signature': hmacSha256Hex(rawBody, s.config.RAZORPAY_WEBHOOK_SECRET) },
    body: rawBody,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** A transfer webhook envelope around `transfer`, as the sandbox (and Razorpay) sends it. */
export function transferEvent(s: SplitStack, event: 'transfer.processed' | 'transfer.failed', transfer: unknown): string {
  return JSON.stringify({
    entity: 'event', account_id: s.config.RAZORPAY_PLATFORM_ACCOUNT_ID, event, contains: ['transfer'],
    payload: { transfer: { entity: transfer } }, created_at: Math.floor(Date.now() / 1000),
  });
}

/** Employer, vendor with a linked account, their pair (19%), and a funded employer wallet, via the API. */
export async function seedVendor(s: SplitStack, tag: string): Promise<{ employerId: string; vendorId: string; linkedAccountId: string }> {
  const employerId = `emp_${tag}`;
  const vendorId = `ven_${tag}`;
  const linkedAccountId = await s.control.createLinkedAccount();
  const admin = s.keys.admin;
  expect((await call(s.apiUrl, 'POST', '/v1/admin/employers', { id: employerId, name: employerId }, admin)).status).toBeLessThan(300);
  expect((await call(s.apiUrl, 'POST', '/v1/admin/vendors', { id: vendorId, name: vendorId, linkedAccountId }, admin)).status).toBeLessThan(300);
  expect((await call(s.apiUrl, 'PUT', `/v1/admin/employers/${employerId}/vendors/${vendorId}`, { settlementMode: 'platform_transfer', commissionBps: 1_900 }, admin)).status).toBe(200);
  return { employerId, vendorId, linkedAccountId };
}

let refs = 0;
/** An unsubsidised ₹100 online order: its Razorpay order carries an ₹81 split to the vendor. */
export async function placeSplitOrder(s: SplitStack, v: { employerId: string; vendorId: string }, totalPaise = 10_000): Promise<{ orderId: string; gatewayOrderId: string; splitPaise: number }> {
  const placed = await call(s.apiUrl, 'POST', '/v1/orders', {
    clientReference: `split-${Date.now()}-${++refs}`, employerId: v.employerId, vendorId: v.vendorId, employeeId: 'e-split',
    totalPaise, subsidyPaise: 0, customerSharePaise: totalPaise, paymentMethod: 'online',
  }, s.keys.ordering);
  expect(placed.status).toBe(201);
  expect(placed.body.order.splitTransferPaise).toBeGreaterThanOrEqual(100);
  return { orderId: placed.body.order.orderId, gatewayOrderId: placed.body.order.gatewayOrderId, splitPaise: placed.body.order.splitTransferPaise };
}

export async function splitRow(db: Db, orderId: string) {
  const { rows } = await db.query('SELECT * FROM split_transfers WHERE order_id = $1', [orderId]);
  return rows[0] as { status: string; provider_status: string | null; provider_transfer_id: string | null; first_failed_at: Date | null; final_at: Date | null; processed_after_final: boolean } | undefined;
}

export async function openOfflineLedger(db: Db, orderId: string): Promise<Array<{ amount_paise: number; route: string }>> {
  return (await db.query('SELECT amount_paise, route FROM offline_ledger_open WHERE order_id = $1', [orderId])).rows;
}

export function runSplitSweep(s: SplitStack): Promise<SplitTransferSweepResult> {
  return s.temporal.client.workflow.execute(splitTransferSweepWorkflow, {
    workflowId: splitTransferSweepWorkflowId(randomBytes(4).toString('hex')), taskQueue: s.temporal.taskQueue, args: [{}],
  });
}

export function runMissedWebhookSweep(s: SplitStack): Promise<MissedWebhookSweepResult> {
  return s.temporal.client.workflow.execute(missedWebhookSweepWorkflow, {
    workflowId: missedWebhookSweepWorkflowId(randomBytes(4).toString('hex')), taskQueue: s.temporal.taskQueue, args: [{ olderThanMs: 1 }],
  });
}

/** Polls until a condition holds; fails with the last value (payoutSeed's helper). */
export { eventually as until } from './payoutSeed';
