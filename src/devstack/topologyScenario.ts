/** Scenario helpers on a running topology: the API through the load balancer, as the ordering
 * client, admin and ops call it, and the smoke order `npm run topology` places. */
import { randomBytes } from 'node:crypto';
import type { OrderView } from '../moneyin/orderView';
import type { TopologyRole } from './topologyEnv';
import type { Topology } from './topologyTypes';

export interface ApiAnswer { status: number; body: any } // eslint-disable-line @typescript-eslint/no-explicit-any

type Caller = Pick<Topology, 'proxyUrl' | 'keys'>;

/** One request through the load balancer with the key of `role` (X-Actor: topology). */
export async function callApi(t: Caller, role: TopologyRole, method: string, route: string, body?: unknown): Promise<ApiAnswer> {
  const res = await fetch(`${t.proxyUrl}${route}`, {
    method,
    headers: { authorization: `Bearer ${t.keys[role]}`, 'x-actor': 'topology', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = null;
  try { parsed = text ? JSON.parse(text) : null; } catch { parsed = text; }
  return { status: res.status, body: parsed };
}

/** callApi, failing unless the answer is 2xx. */
export async function callApiOk(t: Caller, role: TopologyRole, method: string, route: string, body?: unknown): Promise<ApiAnswer['body']> {
  const answer = await callApi(t, role, method, route, body);
  if (answer.status < 200 || answer.status >= 300) throw new Error(`${method} ${route} as ${role} → ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body;
}

async function until<T>(probe: () => Promise<T | null>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown = null;
  for (;;) {
    const value = await probe().catch((err: unknown) => { last = err; return null; });
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Employer, vendor (with the linked account) and their pair's terms, through the admin API. */
export async function seedPair(t: Caller, p: { employerId: string; vendorId: string; linkedAccountId: string | null; commissionBps: number; settlementMode?: string; payoutSchedule?: string }): Promise<void> {
  await callApiOk(t, 'admin', 'POST', '/v1/admin/employers', { id: p.employerId, name: p.employerId });
  await callApiOk(t, 'admin', 'POST', '/v1/admin/vendors', { id: p.vendorId, name: p.vendorId, linkedAccountId: p.linkedAccountId });
  await callApiOk(t, 'admin', 'PUT', `/v1/admin/employers/${p.employerId}/vendors/${p.vendorId}`, {
    settlementMode: p.settlementMode ?? 'platform_transfer', commissionBps: p.commissionBps, ...(p.payoutSchedule ? { payoutSchedule: p.payoutSchedule } : {}),
  });
}

async function walletBalance(t: Caller, employerId: string): Promise<number> {
  const answer = await callApi(t, 'ordering', 'GET', `/v1/wallets/employer/${employerId}`);
  if (answer.status === 404) return 0;
  if (answer.status !== 200) throw new Error(`GET wallet ${employerId} → ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.wallet.balancePaise as number;
}

/** Tops up an employer wallet the real way: a top-up order, the sandbox checkout, the webhook
 * through the load balancer; resolves once the balance shows it. */
export async function topUpEmployer(t: Caller & Pick<Topology, 'sandbox'>, employerId: string, amountPaise: number, timeoutMs = 30_000): Promise<number> {
  const before = await walletBalance(t, employerId);
  const { checkout } = await callApiOk(t, 'ordering', 'POST', `/v1/wallets/employer/${employerId}/top-ups`, { amountPaise });
  await t.sandbox.payOrder(checkout.orderId);
  return until(async () => { const b = await walletBalance(t, employerId); return b >= before + amountPaise ? b : null; }, timeoutMs, `top-up of ${employerId}`);
}

export interface PlacedOrder { order: OrderView; checkout: { keyId: string; orderId: string; amountPaise: number } | null }

/** POST /v1/orders as the ordering client (an online order unless told otherwise). */
export async function placeOrder(t: Caller, o: {
  clientReference: string; employerId: string; vendorId: string; employeeId?: string; totalPaise: number; subsidyPaise: number; paymentMethod?: 'online' | 'wallet' | 'cash';
}): Promise<PlacedOrder> {
  return callApiOk(t, 'ordering', 'POST', '/v1/orders', {
    clientReference: o.clientReference, employerId: o.employerId, vendorId: o.vendorId, employeeId: o.employeeId ?? 'employee-1',
    totalPaise: o.totalPaise, subsidyPaise: o.subsidyPaise, customerSharePaise: o.totalPaise - o.subsidyPaise, paymentMethod: o.paymentMethod ?? 'online',
  }) as Promise<PlacedOrder>;
}

export interface PayoutAnswer { status: string; lastCode: string | null; providerTransferId: string | null; attempts: number; [k: string]: unknown }

/** The ops view of an order's payout, or null while there is none. */
export async function payoutOf(t: Caller, orderId: string): Promise<PayoutAnswer | null> {
  const answer = await callApi(t, 'ops', 'GET', `/ops/payouts/${orderId}`);
  if (answer.status === 404) return null;
  if (answer.status !== 200) throw new Error(`GET /ops/payouts/${orderId} → ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.payout as PayoutAnswer;
}

/** Resolves with the payout once its status is one of `statuses`. */
export function waitForPayout(t: Caller, orderId: string, statuses: readonly string[], timeoutMs = 60_000): Promise<PayoutAnswer> {
  return until(async () => { const p = await payoutOf(t, orderId); return p && statuses.includes(p.status) ? p : null; }, timeoutMs, `payout of ${orderId} to be ${statuses.join(' or ')}`);
}

/** The smoke check: the 99%-subsidised ₹100 order end to end (checkout, webhook through the load
 * balancer, payout on a worker, transfer in the sandbox's ledger). */
export async function smokeOrder(t: Topology, log: (line: string) => void = () => undefined): Promise<{ orderId: string; transferId: string }> {
  const tag = randomBytes(3).toString('hex');
  const employerId = `emp_smoke_${tag}`;
  const vendorId = `ven_smoke_${tag}`;
  const account = await t.sandbox.createLinkedAccount({ name: 'Topology Smoke' });
  await seedPair(t, { employerId, vendorId, linkedAccountId: account, commissionBps: 1_900 });
  await topUpEmployer(t, employerId, 10_000);
  const { order, checkout } = await placeOrder(t, { clientReference: `smoke-${tag}`, employerId, vendorId, totalPaise: 10_000, subsidyPaise: 9_900 });
  if (!checkout) throw new Error(`order ${order.orderId} has no checkout`);
  await t.sandbox.payOrder(checkout.orderId);
  log(`smoke: order ${order.orderId} paid at checkout (₹${(order.customerSharePaise / 100).toFixed(2)}); waiting for the payout of ₹${(order.vendorNetPaise / 100).toFixed(2)}`);
  const payout = await waitForPayout(t, order.orderId, ['settled', 'parked', 'review'], 60_000);
  if (payout.status !== 'settled') throw new Error(`smoke: payout of ${order.orderId} is ${payout.status} (${payout.lastCode ?? 'no code'})`);
  const transfers = (await t.sandbox.transfers({ recipient: account })).filter((x) => x.status === 'processed');
  if (transfers.length !== 1 || transfers[0]!.amount !== order.vendorNetPaise) throw new Error(`smoke: the sandbox holds ${JSON.stringify(transfers.map((x) => [x.id, x.amount, x.status]))} for ${account}`);
  log(`smoke: payout settled — transfer ${transfers[0]!.id} of ₹${(transfers[0]!.amount / 100).toFixed(2)} to ${account}, agrees with the sandbox's ledger`);
  return { orderId: order.orderId, transferId: transfers[0]!.id };
}
