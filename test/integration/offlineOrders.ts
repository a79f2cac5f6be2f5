/** Orders the offline ledger pays, made through the API as the platform makes them: vendors without a
 * linked account (fully subsidised online orders are paid at once, route no_linked_account), cash
 * orders confirmed at the counter (subsidy − commission, negative when the vendor owes commission
 * back), and vendors' bank details through the admin API. */
import { randomBytes } from 'node:crypto';
import type { PayoutStack } from './payoutStack';

type Stack = Pick<PayoutStack, 'apiUrl' | 'keys' | 'sandbox'>;

export async function call(stack: Pick<PayoutStack, 'apiUrl'>, key: Record<string, string>, method: string, path: string, body?: unknown, contentType = 'application/json') {
  const res = await fetch(`${stack.apiUrl}${path}`, {
    method,
    headers: { ...key, 'x-actor': 'meera', ...(body === undefined ? {} : { 'content-type': contentType }) },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are checked field by field
  let parsed: any = text;
  try { parsed = JSON.parse(text); } catch { /* a CSV */ }
  return { status: res.status, body: parsed, headers: res.headers };
}

async function ok(answer: Promise<{ status: number; body: unknown }>, what: string) {
  const a = await answer;
  if (a.status >= 300) throw new Error(`${what}: ${a.status} ${JSON.stringify(a.body)}`);
  return a.body;
}

/** An employer with a funded wallet (top-up through the sandbox checkout). */
export async function fundedEmployer(stack: Stack, paise = 1_000_000): Promise<string> {
  const employerId = `emp_off_${randomBytes(4).toString('hex')}`;
  await ok(call(stack, stack.keys.admin, 'POST', '/v1/admin/employers', { id: employerId, name: `Employer ${employerId}` }), 'employer');
  const topUp = await ok(call(stack, stack.keys.ordering, 'POST', `/v1/wallets/employer/${employerId}/top-ups`, { amountPaise: paise }), 'top-up') as { topup: { gatewayOrderId: string } };
  await stack.sandbox.control.payOrder(topUp.topup.gatewayOrderId);
  for (let i = 0; i < 100; i += 1) {
    const wallet = await ok(call(stack, stack.keys.ordering, 'GET', `/v1/wallets/employer/${employerId}`), 'wallet') as { wallet: { balancePaise: number } };
    if (wallet.wallet.balancePaise >= paise) return employerId;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`wallet of ${employerId} was not credited`);
}

export interface OfflineVendor { vendorId: string; accountNumber: string | null }

/** A vendor paid offline (no linked account), its pair with the employer, and bank details unless `bank: false`. */
export async function offlineVendor(stack: Stack, employerId: string, opts: { name?: string; commissionBps?: number; bank?: boolean } = {}): Promise<OfflineVendor> {
  const vendorId = `ven_off_${randomBytes(4).toString('hex')}`;
  await ok(call(stack, stack.keys.admin, 'POST', '/v1/admin/vendors', { id: vendorId, name: opts.name ?? `Vendor ${vendorId}`, linkedAccountId: null }), 'vendor');
  await ok(call(stack, stack.keys.admin, 'PUT', `/v1/admin/employers/${employerId}/vendors/${vendorId}`, { settlementMode: 'platform_transfer', commissionBps: opts.commissionBps ?? 1_000 }), 'pair');
  if (opts.bank === false) return { vendorId, accountNumber: null };
  const accountNumber = `${50_100_000_000 + Math.floor(Math.random() * 1_000_000_000)}`;
  await ok(call(stack, stack.keys.admin, 'PUT', `/v1/admin/vendors/${vendorId}/bank-details`, { accountNumber, ifsc: 'HDFC0001234', beneficiaryName: opts.name ?? `Vendor ${vendorId.slice(-8)}` }), 'bank details');
  return { vendorId, accountNumber };
}

let sequence = 0;

/** A fully subsidised online order (nothing to collect: paid when placed); for an offline vendor it
 * is owed offline in full (route no_linked_account). Returns the order id and the vendor's net. */
export async function subsidisedOrder(stack: Stack, employerId: string, vendorId: string, totalPaise: number): Promise<{ orderId: string; netPaise: number }> {
  const placed = await ok(call(stack, stack.keys.ordering, 'POST', '/v1/orders', {
    clientReference: `off-${process.pid}-${Date.now()}-${++sequence}`, employerId, vendorId, employeeId: 'employee-1',
    totalPaise, subsidyPaise: totalPaise, customerSharePaise: 0, paymentMethod: 'online',
  }), 'order') as { order: { orderId: string; vendorNetPaise: number } };
  return { orderId: placed.order.orderId, netPaise: placed.order.vendorNetPaise };
}

/** A cash order confirmed at the counter: the offline line is subsidy − commission (signed). */
export async function cashOrder(stack: Stack, employerId: string, vendorId: string, totalPaise: number, subsidyPaise: number): Promise<{ orderId: string }> {
  const placed = await ok(call(stack, stack.keys.ordering, 'POST', '/v1/orders', {
    clientReference: `cash-${process.pid}-${Date.now()}-${++sequence}`, employerId, vendorId, employeeId: 'employee-2',
    totalPaise, subsidyPaise, customerSharePaise: totalPaise - subsidyPaise, paymentMethod: 'cash',
  }), 'cash order') as { order: { orderId: string } };
  await ok(call(stack, stack.keys.ops, 'POST', `/v1/orders/${placed.order.orderId}/cash-confirmation`, {}), 'cash confirmation');
  return { orderId: placed.order.orderId };
}
