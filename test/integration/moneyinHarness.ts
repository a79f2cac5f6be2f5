/** Money-in integration harness: the real API listening on a free port, a fresh PostgreSQL copy,
 * the Razorpay sandbox delivering signed webhooks to that port, and small HTTP helpers. */
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../src/api/server';
import type { Config } from '../../src/config/config';
import type { Db } from '../../src/db/pool';
import { createGateway } from '../../src/gateway';
import { hmacSha256Hex } from '../../src/gateway/signatures';
import type { Gateway } from '../../src/gateway/types';
import { startWorkerPollers } from '../../src/startup/pollers';
import type { PayoutStarter } from '../../src/payouts/starter';
import { isolatedPool } from '../support/db';
import { mintKey, mintRoleKeys, type AuthHeader, type RoleKeys } from '../support/apiKeys';
import { startTestSandbox } from '../support/sandbox';

type Sandbox = Awaited<ReturnType<typeof startTestSandbox>>['sandbox'];

export interface MoneyInHarness {
  db: Db;
  config: Config;
  gateway: Gateway;
  sandbox: Sandbox;
  app: FastifyInstance;
  baseUrl: string;
  /** Order ids the payout layer was asked to start, in order: by the API after a commit (callback,
   * wallet, cash) or by the harness's outbox drainer (a webhook's payout, after the reply). */
  payoutStarts: string[];
  /** One API key per role, minted in this harness's database. */
  keys: RoleKeys;
  close(): Promise<void>;
}

/** `config` overrides the app's side only (the sandbox keeps signing with its own secrets). */
export async function startMoneyInHarness(opts: { config?: Partial<Config> } = {}): Promise<MoneyInHarness> {
  const { db } = await isolatedPool();
  const started = await startTestSandbox();
  const sandbox = started.sandbox;
  const config: Config = { ...started.config, ...opts.config };
  const gateway = createGateway(config);
  const payoutStarts: string[] = [];
  const keys = await mintRoleKeys(db);
  const payoutStarter: PayoutStarter = { async startPayout(orderId) { payoutStarts.push(orderId); } };
  const app = await buildApi({ config, db, gateway, payoutStarter });
  // As the worker does: a webhook leaves its payout's start to the drainer, and a refund it could not read to the follower.
  const drainer = startWorkerPollers({ db, gateway, payoutStarter, attemptCap: config.PAYOUT_ATTEMPT_CAP, outboxPollMs: 100, refundPollMs: 250 });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  await sandbox.control.setWebhookTarget(`${baseUrl}/webhooks/razorpay`);
  return {
    db, config, gateway, sandbox, app, baseUrl, payoutStarts, keys,
    async close() {
      await sandbox.close();
      await app.close();
      await drainer.stop();
      await db.end();
    },
  };
}

export interface HttpAnswer { status: number; body: any } // eslint-disable-line @typescript-eslint/no-explicit-any

/** Calls the API as the ordering service unless `headers` says otherwise (`{}`: no credential). */
export async function http(h: MoneyInHarness, method: string, path: string, body?: unknown, headers: Record<string, string> = h.keys.ordering): Promise<HttpAnswer> {
  const res = await fetch(`${h.baseUrl}${path}`, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

export const admin = (h: MoneyInHarness): AuthHeader => h.keys.admin;
export const ops = (h: MoneyInHarness): AuthHeader => h.keys.ops;
/** A key for one vendor's counter (cash confirmations of its own orders only). */
export const vendorKey = (h: MoneyInHarness, vendorId: string): Promise<AuthHeader> => mintKey(h.db, [`vendor:${vendorId}`], `test-vendor-${vendorId}-${++counter}`);

/** Posts a webhook body as Razorpay would: signed over these exact bytes unless told otherwise. */
export async function postWebhook(h: MoneyInHarness, rawBody: string, opts: { eventId: string; signature?: string | null }): Promise<HttpAnswer> {
  const signature = opts.signature === undefined ? hmacSha256Hex(rawBody, h.config.RAZORPAY_WEBHOOK_SECRET) : opts.signature;
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-razorpay-event-id': opts.eventId };
  if (signature !== null) headers['x-razorpay-signature'] = signature;
  const res = await fetch(`${h.baseUrl}/webhooks/razorpay`, { method: 'POST', headers, body: rawBody });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** Employer, vendor with a linked account, and their pair, through the admin API. */
export async function seedPair(h: MoneyInHarness, p: { employerId: string; vendorId: string; commissionBps: number; settlementMode?: string; linkedAccount?: boolean }): Promise<{ linkedAccountId: string | null }> {
  const linkedAccountId = p.linkedAccount === false ? null : await h.sandbox.control.createLinkedAccount();
  expect((await http(h, 'POST', '/v1/admin/employers', { id: p.employerId, name: p.employerId }, admin(h))).status).toBeLessThan(300);
  expect((await http(h, 'POST', '/v1/admin/vendors', { id: p.vendorId, name: p.vendorId, linkedAccountId }, admin(h))).status).toBeLessThan(300);
  const pair = await http(h, 'PUT', `/v1/admin/employers/${p.employerId}/vendors/${p.vendorId}`, { settlementMode: p.settlementMode ?? 'platform_transfer', commissionBps: p.commissionBps }, admin(h));
  expect(pair.status).toBe(200);
  return { linkedAccountId };
}

/** Registers an employee with their employer (admin): needed before their wallet takes a top-up or pays a wallet order. */
export async function registerEmployee(h: MoneyInHarness, employerId: string, employeeId: string): Promise<void> {
  const res = await http(h, 'PUT', `/v1/admin/employers/${employerId}/employees/${employeeId}`, undefined, admin(h));
  expect([employeeId, res.status < 300]).toEqual([employeeId, true]);
}

/** Tops a wallet up through the real flow: top-up order, sandbox checkout, webhook credit. */
export async function topUp(h: MoneyInHarness, ownerKind: 'employer' | 'employee', ownerId: string, amountPaise: number): Promise<string> {
  const res = await http(h, 'POST', `/v1/wallets/${ownerKind}/${ownerId}/top-ups`, { amountPaise });
  expect(res.status).toBe(201);
  await h.sandbox.control.payOrder(res.body.topup.gatewayOrderId);
  await h.sandbox.control.drainWebhooks();
  return res.body.topup.topupId as string;
}

export async function walletBalance(h: MoneyInHarness, ownerKind: string, ownerId: string): Promise<number> {
  const { rows } = await h.db.query('SELECT balance_paise FROM wallets WHERE owner_kind = $1 AND owner_id = $2', [ownerKind, ownerId]);
  return rows[0]?.balance_paise ?? 0;
}

const MONEY_IN_TABLES = ['orders', 'payments', 'refunds', 'processed_events', 'payouts', 'wallets', 'wallet_entries', 'wallet_topups', 'offline_ledger', 'vendor_obligations', 'split_transfers', 'employees'];

/** Every row of every table money in writes, for before/after comparisons. */
export async function snapshot(db: Db): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const table of MONEY_IN_TABLES) out[table] = (await db.query(`SELECT * FROM ${table} ORDER BY 1`)).rows;
  return out;
}

/** The starts of an order's payout, once its payouts_outbox row is gone (whoever started it, the
 * API's try or the drainer, records the start before it deletes the row). */
export async function payoutStartsOf(h: MoneyInHarness, orderId: string): Promise<string[]> {
  await eventually(async () => (await h.db.query('SELECT count(*)::int AS n FROM payouts_outbox WHERE order_id = $1', [orderId])).rows[0].n as number, (n) => n === 0);
  return h.payoutStarts.filter((id) => id === orderId);
}

export async function eventually<T>(read: () => Promise<T>, accept: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (accept(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
}

let counter = 0;
export const uniqueRef = (prefix: string): string => `${prefix}-${Date.now()}-${++counter}`;

/** For a test that moves the sandbox's clock by days or months: its events carry that time, so the
 * app's replay window (24 h, 5 min ahead) is widened to the sandbox's calendar. */
export const SANDBOX_CLOCK_MOVES: Partial<Config> = { RAZORPAY_WEBHOOK_MAX_AGE_SECONDS: 366 * 86_400, RAZORPAY_WEBHOOK_CLOCK_SKEW_SECONDS: 31 * 86_400 };

/** A harness with one employer–vendor pair (19% commission unless told) and a topped-up employer wallet. */
export async function startHarnessWithPair(p: { employerId: string; vendorId: string; commissionBps?: number; walletPaise?: number; config?: Partial<Config> }): Promise<MoneyInHarness> {
  const h = await startMoneyInHarness({ config: p.config });
  await seedPair(h, { employerId: p.employerId, vendorId: p.vendorId, commissionBps: p.commissionBps ?? 1_900 });
  await topUp(h, 'employer', p.employerId, p.walletPaise ?? 1_000_000);
  return h;
}
