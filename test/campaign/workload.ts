/** The campaign's workload against the running topology: reference data through the admin API,
 * wallets topped up through the sandbox checkout, then each planned order placed with the
 * `ordering` key at its planned time and taken down its route (checkout, browser callback, failed
 * and late-authorised payments, cash confirmation, cancellation). What happened is recorded in the
 * order's history for the checker; nothing here decides whether the system was right. */
import { hmacSha256Hex } from '../../src/gateway/signatures';
import { SANDBOX_SECRETS } from '../../src/devstack/topologyEnv';
import { seedPair, topUpEmployer } from '../../src/devstack/topologyScenario';
import type { Topology } from '../../src/devstack/topologyTypes';
import type { RzpTransfer } from '../../src/gateway/types';
import type { OrderView } from '../../src/moneyin/orderView';
import { callRetrying, heldWrite, LEFT_THE_QUEUE, sleep, waitFor } from './calls';
import { batchRoute } from './batchWorkload';
import { refundFromDashboard } from './dashboard';
import type { BatchVendor, CampaignPlan, EmployerKey, PlannedOrder, WorldVendor } from './plan';

/** What a lost request of ours would have left at Razorpay: a direct transfer from the platform
 * balance carrying the payout's note, made with the platform's key (looked for before asking again,
 * since the campaign's API faults hit this endpoint too). */
async function transferAsALostRequestWould(t: Topology, p: { account: string; amountPaise: number; payoutId: string; orderId: string }): Promise<RzpTransfer> {
  const auth = Buffer.from(`${SANDBOX_SECRETS.RAZORPAY_KEY_ID}:${SANDBOX_SECRETS.RAZORPAY_KEY_SECRET}`).toString('base64');
  const deadline = Date.now() + 60_000;
  for (;;) {
    const made = (await t.sandbox.transfers({ recipient: p.account })).find((x) => x.notes && !Array.isArray(x.notes) && x.notes.transaction_id === p.payoutId);
    if (made) return made;
    const res = await fetch(`${t.sandboxUrl}/v1/transfers`, {
      method: 'POST', headers: { authorization: `Basic ${auth}`, 'content-type': 'application/json' },
      body: JSON.stringify({ account: p.account, amount: p.amountPaise, currency: 'INR', notes: { transaction_id: p.payoutId, order_id: p.orderId } }),
    }).catch(() => null);
    if (res?.ok) return (await res.json()) as RzpTransfer;
    if (Date.now() > deadline) throw new Error(`the transfer for payout ${p.payoutId} was refused: ${res ? `${res.status} ${await res.text()}` : 'no answer'}`);
    await sleep(1_000);
  }
}

export interface World {
  tag: string;
  employers: Record<EmployerKey, string>;
  vendors: Record<WorldVendor, string>;
  /** The vendor's linked account in the sandbox (null: the vendor has none). */
  accounts: Record<WorldVendor, string | null>;
  /** The hourly pairs of one batch scenario each, and the own vendors the workload makes (batch_reversed). */
  batch?: { vendors: Record<BatchVendor, string>; accounts: Record<BatchVendor, string>; own: Array<{ vendorId: string; account: string }> };
}

/** Every vendor of the campaign with its account: the world's, the batch scenarios', the own ones. */
export function campaignVendors(world: World, histories: readonly OrderHistory[] = []): Array<{ vendorId: string; account: string | null }> {
  const listed = [
    ...(Object.keys(world.vendors) as WorldVendor[]).map((k) => ({ vendorId: world.vendors[k], account: world.accounts[k] })),
    ...(world.batch ? (Object.keys(world.batch.vendors) as BatchVendor[]).map((k) => ({ vendorId: world.batch!.vendors[k], account: world.batch!.accounts[k] as string | null })) : []),
    ...(world.batch?.own ?? []),
    ...histories.flatMap((h) => (h.ownVendor ? [{ vendorId: h.ownVendor.vendorId, account: h.ownVendor.account }] : [])),
  ];
  return [...new Map(listed.map((v) => [v.vendorId, v])).values()];
}

/** The vendor id and account an order of `key` goes to (null for `own`: made by the workload). */
export function vendorOf(world: World, key: string): { vendorId: string; account: string | null } | null {
  if (key in world.vendors) return { vendorId: world.vendors[key as WorldVendor], account: world.accounts[key as WorldVendor] };
  if (world.batch && key in world.batch.vendors) return { vendorId: world.batch.vendors[key as BatchVendor], account: world.batch.accounts[key as BatchVendor] };
  return null;
}

export interface OrderHistory {
  planned: PlannedOrder;
  orderId: string | null;
  gatewayOrderId: string | null;
  vendorNetPaise: number | null;
  /** Payments the customer made at the sandbox checkout (failed ones included). */
  paymentIds: string[];
  /** Requests the client had to repeat (5xx or no answer) before one was answered. */
  retries: number;
  /** What went wrong on the client's side (the order could not be taken down its route). */
  error: string | null;
  /** forged_capture: the payment id the forged webhook named. */
  forgedPaymentId?: string;
  /** reversed_transfer: the transfer reversed from the Dashboard, its reversal, and whether our rows
   * heard of it in time for ops (its webhook may be given up: then only recon can tell). */
  reversed?: { transferId: string; reversalId: string; seen: boolean };
  /** dashboard_refund: refunds at the provider our rows never recorded (set by the checker; recon must raise each). */
  unrecordedRefundIds?: string[];
  /** paid_externally, batch_reversed: the order's own vendor and linked account, and the transfer ops marked it paid with. */
  ownVendor?: { vendorId: string; account: string; markedWith?: string };
  /** The batch scenarios: the batch the order joined, and (a Dashboard refund) whether the batch was
   * still open when the refund was made; (a reversal) what ops decided. */
  batch?: { batchId: string | null; refundedWhile?: 'open' | 'closed'; refundId?: string; decided?: 'retry' | 'pay-offline'; owedBack?: true };
}

const PAIRS: Array<{ employer: EmployerKey; vendor: WorldVendor; mode: 'platform_transfer' | 'corporate_direct' | 'manual_offline'; schedule?: 'hourly' }> = [
  ...(['direct_a', 'direct_b', 'direct_c', 'split', 'nolink', 'flaky', 'shut'] as const).map((vendor) => ({ employer: 'main' as const, vendor, mode: 'platform_transfer' as const })),
  // Paid on a schedule: its orders join the hour's batch; ops close each batch once the run is quiet
  // (the campaign is shorter than an hour), as the cutoff would.
  { employer: 'main', vendor: 'batched', mode: 'platform_transfer', schedule: 'hourly' },
  { employer: 'corporate', vendor: 'direct_a', mode: 'corporate_direct' },
  { employer: 'offline', vendor: 'direct_b', mode: 'manual_offline' },
];
/** The batch scenarios' pairs (the switching pair starts per order; admin switches it mid-run). */
const BATCH_PAIRS: Array<{ vendor: BatchVendor; schedule: 'hourly' | 'per_order' }> = [
  { vendor: 'batch_hold', schedule: 'hourly' }, { vendor: 'batch_claw', schedule: 'hourly' }, { vendor: 'switcher', schedule: 'per_order' },
];
export const COMMISSION_BPS = 1_900;

/** Linked accounts in the sandbox, vendors, employers and pairs through the admin API, and every
 * wallet the plan draws on topped up through the checkout (with a margin). */
export async function buildWorld(t: Topology, plan: CampaignPlan, log: (line: string) => void): Promise<World> {
  const tag = `s${plan.seed}`;
  const accounts = {} as Record<WorldVendor, string | null>;
  for (const key of ['direct_a', 'direct_b', 'direct_c', 'split', 'flaky', 'shut', 'batched'] as const) {
    accounts[key] = await t.sandbox.createLinkedAccount({ name: `Campaign ${key}`, status: key === 'shut' ? 'suspended' : 'activated' });
  }
  accounts.nolink = null;
  const vendors = Object.fromEntries(Object.keys(accounts).map((k) => [k, `ven_${k}_${tag}`])) as Record<WorldVendor, string>;
  const employers = { main: `emp_main_${tag}`, corporate: `emp_corp_${tag}`, offline: `emp_offline_${tag}` };
  for (const pair of PAIRS) {
    await seedPair(t, { employerId: employers[pair.employer], vendorId: vendors[pair.vendor], linkedAccountId: accounts[pair.vendor], commissionBps: COMMISSION_BPS, settlementMode: pair.mode, payoutSchedule: pair.schedule });
  }
  const batch: NonNullable<World['batch']> = { vendors: {} as Record<BatchVendor, string>, accounts: {} as Record<BatchVendor, string>, own: [] };
  for (const pair of BATCH_PAIRS) {
    batch.accounts[pair.vendor] = await t.sandbox.createLinkedAccount({ name: `Campaign ${pair.vendor}`, status: 'activated' });
    batch.vendors[pair.vendor] = `ven_${pair.vendor}_${tag}`;
    await seedPair(t, { employerId: employers.main, vendorId: batch.vendors[pair.vendor], linkedAccountId: batch.accounts[pair.vendor], commissionBps: COMMISSION_BPS, settlementMode: 'platform_transfer', payoutSchedule: pair.schedule });
  }
  await t.sandbox.setPlatformBalance(100_000_000_000);
  for (const key of Object.keys(employers) as EmployerKey[]) {
    const need = plan.orders.filter((o) => o.employer === key).reduce((s, o) => s + o.subsidyPaise, 0);
    if (need > 0) await topUpEmployer(t, employers[key], Math.ceil(need * 1.2) + 10_000, 60_000);
  }
  const employees = new Map<string, number>();
  for (const o of plan.orders.filter((x) => x.paymentMethod === 'wallet')) employees.set(o.employeeId, (employees.get(o.employeeId) ?? 0) + o.totalPaise - o.subsidyPaise);
  for (const [employeeId, need] of employees) {
    // Registered with the employer of their wallet orders first: only then does the wallet take a top-up and pay (issue 21 item 10).
    const employer = employers[plan.orders.find((o) => o.paymentMethod === 'wallet' && o.employeeId === employeeId)!.employer];
    await callRetrying(t, 'admin', 'PUT', `/v1/admin/employers/${employer}/employees/${employeeId}`);
    const { body } = await callRetrying(t, 'ordering', 'POST', `/v1/wallets/employee/${employeeId}/top-ups`, { amountPaise: need + 10_000, clientReference: `campaign-${tag}-${employeeId}` });
    await t.sandbox.payOrder(body.checkout.orderId);
  }
  // Employee top-ups are credited by their webhooks: wait, so that a wallet order never races them.
  for (const [employeeId, need] of employees) {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const answer = await callRetrying(t, 'ordering', 'GET', `/v1/wallets/employee/${employeeId}`, undefined, { accept: [404] });
      if (answer.status === 200 && answer.body.wallet.balancePaise >= need) break;
      if (Date.now() > deadline) throw new Error(`the wallet of ${employeeId} was not credited`);
      await sleep(250);
    }
  }
  log(`world: ${Object.keys(vendors).length + BATCH_PAIRS.length} vendors, ${PAIRS.length + BATCH_PAIRS.length} pairs, ${Object.keys(employers).length} employers and ${employees.size} employee wallets topped up through the checkout`);
  return { tag, employers, vendors, accounts, batch };
}

/** Admin puts the switching pair on another schedule (applies to the next payout that fires). */
export async function switchSchedule(t: Topology, world: World, to: 'hourly' | 'per_order'): Promise<void> {
  await callRetrying(t, 'admin', 'PUT', `/v1/admin/employers/${world.employers.main}/vendors/${world.batch!.vendors.switcher}`, { settlementMode: 'platform_transfer', commissionBps: COMMISSION_BPS, payoutSchedule: to });
}

/** Ops close the batched pair's open batches, as each one's cutoff would (the campaign is shorter than
 * the hour, unless it crosses the top of one): each closes and pays by one transfer. */
export async function closeOpenBatches(t: Topology, world: World, vendorIds: readonly string[] = [world.vendors.batched, ...Object.values(world.batch?.vendors ?? {}), ...(world.batch?.own ?? []).map((v) => v.vendorId)]): Promise<number> {
  // One listing for every vendor (the topology is the campaign's alone), not one per vendor.
  const { body } = await callRetrying(t, 'ops', 'GET', '/ops/batches?status=open&limit=500');
  const open = (body.batches as Array<{ batchId: string; vendorId: string }>).filter((b) => vendorIds.includes(b.vendorId));
  for (const b of open) await callRetrying(t, 'ops', 'POST', `/ops/batches/${b.batchId}/close`, { reason: 'fault campaign: the run is quiet; its cutoff is later' }, { accept: [409] });
  return open.length;
}

/** Places every planned order at its time and takes it down its route; resolves when all are done. */
export async function runWorkload(t: Topology, plan: CampaignPlan, world: World, startedAt: number, onProgress: (done: number) => void): Promise<OrderHistory[]> {
  let done = 0;
  return Promise.all(plan.orders.map(async (planned) => {
    await sleep(Math.max(0, startedAt + planned.atMs - Date.now()));
    const history: OrderHistory = { planned, orderId: null, gatewayOrderId: null, vendorNetPaise: null, paymentIds: [], retries: 0, error: null };
    try {
      await takeDownItsRoute(t, world, history);
    } catch (err) {
      history.error = err instanceof Error ? err.message : String(err);
    }
    onProgress(++done);
    return history;
  }));
}

async function takeDownItsRoute(t: Topology, world: World, h: OrderHistory): Promise<void> {
  const o = h.planned;
  const retried = { onRetry: () => { h.retries += 1; } };
  if (o.vendor === 'own') {
    // A vendor of its own, its account suspended: its payout parks and stays parked for ops.
    const account = await t.sandbox.createLinkedAccount({ name: `Campaign own ${o.index}`, status: 'suspended' });
    h.ownVendor = { vendorId: `ven_own${o.index}_${world.tag}`, account };
    await callRetrying(t, 'admin', 'POST', '/v1/admin/vendors', { id: h.ownVendor.vendorId, name: h.ownVendor.vendorId, linkedAccountId: account }, { ...retried, accept: [409] });
    await callRetrying(t, 'admin', 'PUT', `/v1/admin/employers/${world.employers[o.employer]}/vendors/${h.ownVendor.vendorId}`, { settlementMode: 'platform_transfer', commissionBps: COMMISSION_BPS }, retried);
  }
  if (o.vendor === 'own_batch') {
    // An hourly vendor of its own: its batch has this order alone, so the reversal takes back no one else's money.
    const account = await t.sandbox.createLinkedAccount({ name: `Campaign own batch ${o.index}`, status: 'activated' });
    h.ownVendor = { vendorId: `ven_ownb${o.index}_${world.tag}`, account };
    await callRetrying(t, 'admin', 'POST', '/v1/admin/vendors', { id: h.ownVendor.vendorId, name: h.ownVendor.vendorId, linkedAccountId: account }, { ...retried, accept: [409] });
    await callRetrying(t, 'admin', 'PUT', `/v1/admin/employers/${world.employers[o.employer]}/vendors/${h.ownVendor.vendorId}`, { settlementMode: 'platform_transfer', commissionBps: COMMISSION_BPS, payoutSchedule: 'hourly' }, retried);
    // Bank details, so that finance's settlement runs can pay it if ops pay the batch offline.
    await callRetrying(t, 'admin', 'PUT', `/v1/admin/vendors/${h.ownVendor.vendorId}/bank-details`, { accountNumber: String(919_000_000_000 + o.index), ifsc: 'UTIB0000123', beneficiaryName: `Campaign own batch ${o.index}` }, retried);
    world.batch?.own.push({ vendorId: h.ownVendor.vendorId, account });
  }
  const placed = await callRetrying(t, 'ordering', 'POST', '/v1/orders', {
    clientReference: o.clientReference, employerId: world.employers[o.employer], vendorId: h.ownVendor?.vendorId ?? vendorOf(world, o.vendor)!.vendorId, employeeId: o.employeeId,
    totalPaise: o.totalPaise, subsidyPaise: o.subsidyPaise, customerSharePaise: o.totalPaise - o.subsidyPaise, paymentMethod: o.paymentMethod,
  }, retried);
  const order = placed.body.order as OrderView;
  h.orderId = order.orderId;
  h.gatewayOrderId = order.gatewayOrderId;
  h.vendorNetPaise = order.vendorNetPaise;
  const gw = order.gatewayOrderId;
  const pay = async () => {
    const payment = await t.sandbox.payOrder(gw!);
    h.paymentIds.push(payment.id);
    return payment;
  };
  const cancel = () => callRetrying(t, 'ordering', 'POST', `/v1/orders/${order.orderId}/cancel`, undefined, retried);
  const payoutNow = async () => (await callRetrying(t, 'ops', 'GET', `/ops/payouts/${order.orderId}`, undefined, { accept: [404] })).body?.payout as
    { id: string; status: string; providerTransferId: string | null; lastCode: string | null; amountPaise: number } | undefined;
  /** The order's Route split at the provider, once Razorpay has run it. */
  const splitAtProvider = async () => (await t.sandbox.transfers({ recipient: world.accounts.split! })).find((x) => x.source === gw);
  switch (o.kind) {
    case 'direct_full': case 'wallet': case 'below_minimum': case 'corporate_direct':
      return; // paid at once: nothing to collect online
    case 'cash':
      await callRetrying(t, 'ops', 'POST', `/v1/orders/${order.orderId}/cash-confirmation`, undefined, retried);
      return;
    case 'never_paid':
      return;
    case 'cancelled':
      await cancel();
      return;
    case 'cancelled_then_paid':
      await cancel();
      await sleep(o.lateAfterMs);
      await pay(); // the customer's stale checkout page still pays
      return;
    case 'duplicate_receipt_refund': {
      await cancel();
      // Every webhook of the stale page's payment is lost: the missed-webhook sweep finds the capture
      // and refunds it; that refund's answer is lost after Razorpay made it, so the retry hears
      // 'duplicate receipt', and with the refund's webhooks lost too only the sweep's lookup of the
      // payment's refunds by our receipt can finish it. Exactly one refund must exist.
      await t.sandbox.injectWebhookFault('lose', { bodyIncludes: gw!, count: 3 });
      const payment = await pay();
      // The first three calls: a storm rule added earlier wins a call it also fires on.
      await t.sandbox.injectFault({ endpoint: 'refunds.create', fault: { kind: 'drop_after_commit' }, calls: [1, 2, 3], pathIncludes: payment.id });
      await t.sandbox.injectWebhookFault('lose', { events: ['refund.created', 'refund.processed'], bodyIncludes: payment.id, count: 2 });
      return;
    }
    case 'callback_race': {
      const payment = await pay(); // its webhooks are on their way now
      const callback = { razorpay_order_id: gw, razorpay_payment_id: payment.id, razorpay_signature: hmacSha256Hex(`${gw}|${payment.id}`, SANDBOX_SECRETS.RAZORPAY_KEY_SECRET) };
      await Promise.all([1, 2].map(() => callRetrying(t, 'ordering', 'POST', `/v1/orders/${order.orderId}/payment-callback`, callback, retried)));
      return;
    }
    case 'late_authorisation': {
      const failed = await t.sandbox.failPayment(gw!);
      h.paymentIds.push(failed.id);
      await sleep(o.lateAfterMs);
      await t.sandbox.lateAuthorize(failed.id);
      return;
    }
    case 'reversed_transfer': {
      await pay();
      const payout = payoutNow;
      // Under load a payout can take minutes to settle; one that has not by then is left as it is
      // (the checker then expects a plain settled payout).
      const settled = await waitFor(() => payout(), (p) => p?.status === 'settled' && p.providerTransferId !== null, 240_000);
      if (!settled) return;
      const reversal = await t.sandbox.reverseTransferFromDashboard(settled.providerTransferId!, { notes: { by: 'dashboard', campaign: o.clientReference } });
      h.reversed = { transferId: settled.providerTransferId!, reversalId: reversal.id, seen: false };
      const parked = await waitFor(() => payout(), (p) => p?.status === 'parked' && p.lastCode === 'TRANSFER_REVERSED', 60_000);
      if (!parked) return; // its webhook was lost: recon must raise reversal-not-in-app
      h.reversed.seen = true;
      const decision = o.expect.transfers === 'direct' && o.expect.reversedThen === 'pay_offline' ? 'pay-offline' : 'retry';
      const decide = () => callRetrying(t, 'ops', 'POST', `/ops/payouts/${order.orderId}/${decision}`, { reason: 'fault campaign: the transfer was reversed from the Dashboard' }, { ...retried, accept: LEFT_THE_QUEUE });
      // A 409: the payout left the queue between the look and the decision; a 404: a database restore
      // forgot the payout's row, and its run writes it again. Either way it asks the provider again and
      // parks once more: ops look again, and decide once it is back.
      if (LEFT_THE_QUEUE.includes((await decide()).status)) {
        const back = await waitFor(() => payout(), (p) => p?.status === 'parked' && p.lastCode === 'TRANSFER_REVERSED', 180_000);
        // Back at settled under the reversed transfer: the restore forgot the reversal, and its webhook
        // is not sent again. Our rows are then as after a reversal webhook lost for good (recon must raise
        // reversal-not-in-app), and ops have no payout in the queue to decide on.
        const now = back ? undefined : await payout();
        if (now?.status === 'settled' && now.providerTransferId === h.reversed.transferId) {
          h.reversed.seen = false;
          return;
        }
        if (!back) throw new Error('the payout left the queue before ops decided, and did not come back');
        const again = await decide();
        if (LEFT_THE_QUEUE.includes(again.status)) throw new Error(`ops could not decide: ${JSON.stringify(again.body)}`);
      }
      return;
    }
    case 'dashboard_refund': {
      const payment = await pay();
      // Once our books know the order paid (its webhooks may have been given up: the sweep finds the
      // capture) and the vendor is paid (or after a minute: then the refund holds the payout instead),
      // as someone on the Razorpay Dashboard would: a refund of the customer's share with no receipt of ours.
      await waitFor(payoutNow, (p) => p !== undefined, 180_000);
      await waitFor(payoutNow, (p) => p?.status === 'settled', 60_000);
      await refundFromDashboard(t, payment.id, o.totalPaise - o.subsidyPaise);
      return;
    }
    case 'reversed_split': {
      await pay();
      // Once Razorpay has processed the split, someone reverses it from the Dashboard; whether our rows
      // heard of it is judged by the checker (the split row reversed, else recon must raise it).
      const split = await waitFor(splitAtProvider, (x) => x?.status === 'processed' || x?.status === 'failed', 120_000);
      if (split?.status !== 'processed') return; // never processed in time: judged as a plain split
      const reversal = await t.sandbox.reverseTransferFromDashboard(split.id, { notes: { by: 'dashboard', campaign: o.clientReference } });
      h.reversed = { transferId: split.id, reversalId: reversal.id, seen: false };
      return;
    }
    case 'split_refund_failed_transfer': {
      await cancel();
      // The stale checkout page pays; Razorpay's split fails at once (the platform balance short) and
      // is retried a while later, as Razorpay does: the refund must wait for it, then take it back.
      const payment = await t.sandbox.payOrder(gw!, { failTransfers: true });
      h.paymentIds.push(payment.id);
      await sleep(o.lateAfterMs + 2_000);
      const failed = await splitAtProvider();
      if (failed?.status === 'failed') await t.sandbox.retryFailedTransfers({ only: [failed.id] });
      return;
    }
    case 'dashboard_refund_held': {
      const payment = await pay();
      // Refunded from the Dashboard once the payout has parked (its vendor's account is suspended).
      await waitFor(payoutNow, (p) => p?.status === 'parked', 480_000);
      await refundFromDashboard(t, payment.id, o.totalPaise - o.subsidyPaise);
      return;
    }
    case 'paid_externally': {
      await pay();
      // A 1,000-order run on two cores took almost four minutes to park one (its first attempt waits its turn).
      const parked = await waitFor(payoutNow, (p) => p?.status === 'parked', 480_000);
      if (!parked) throw new Error('its payout never parked, so there was nothing for ops to mark paid');
      // The account is active again and ops find on the Dashboard the transfer a lost request made.
      await t.sandbox.setLinkedAccountStatus(h.ownVendor!.account, 'activated');
      const transfer = await transferAsALostRequestWould(t, { account: h.ownVendor!.account, amountPaise: parked.amountPaise, payoutId: parked.id, orderId: order.orderId });
      const marked = await callRetrying(t, 'ops', 'POST', `/ops/payouts/${order.orderId}/mark-paid-externally`, { reason: 'fault campaign: found on the Razorpay Dashboard', transferId: transfer.id }, { ...retried, accept: LEFT_THE_QUEUE });
      // A 409: the payout left the queue before ops got to it; a 404: a database restore forgot its
      // row (its run writes it again). After a restore the payout asks the provider before sending and
      // finds this very transfer by its note: that is the outcome ops wanted, reached without them
      // (the checker still judges which transfer it holds).
      // Three minutes: a 1,000-order cluster run took 100 s to find it (a slow send's unknown answer first).
      if (marked.status !== 200 && !(await waitFor(payoutNow, (p) => p?.providerTransferId === transfer.id, 180_000))) throw new Error(`ops could not mark it paid: ${JSON.stringify(marked.body)}`);
      h.ownVendor!.markedWith = transfer.id;
      return;
    }
    case 'forged_capture': {
      // Whoever holds the webhook secret can sign a capture; this payment id Razorpay never saw.
      const forged = {
        id: `pay_${o.clientReference.replace(/\W/g, '').slice(-14).padStart(14, 'F')}`, entity: 'payment', amount: o.totalPaise - o.subsidyPaise, currency: 'INR', status: 'captured',
        order_id: gw, method: 'card', captured: true, amount_refunded: 0, refund_status: null, fee: 20, tax: 0, notes: [], error_code: null, error_description: null,
        created_at: Math.floor(Date.now() / 1000),
      };
      const body = JSON.stringify({ entity: 'event', account_id: 'acc_PlatformMeals1', event: 'payment.captured', contains: ['payment'], payload: { payment: { entity: forged } }, created_at: Math.floor(Date.now() / 1000) });
      const post = () => heldWrite(() => fetch(`${t.proxyUrl}/webhooks/razorpay`, {
        method: 'POST', body,
        headers: { 'content-type': 'application/json', 'x-razorpay-event-id': `evt_forged_${o.clientReference}`, 'x-razorpay-signature': hmacSha256Hex(body, SANDBOX_SECRETS.RAZORPAY_WEBHOOK_SECRET) },
      }).then((r) => r.status, () => 0));
      // Sent again while the API answers 5xx or nothing (its PostgreSQL restarting), as Razorpay
      // would send its own; any other answer than 200 is the system refusing it.
      let status = await post();
      for (const deadline = Date.now() + 120_000; (status === 0 || status >= 500) && Date.now() < deadline; status = await post()) await sleep(1_000);
      if (status !== 200) throw new Error(`the forged capture was answered ${status}`);
      h.forgedPaymentId = forged.id;
      return;
    }
    case 'duplicate_capture': case 'split_duplicate_capture': {
      const failed = await t.sandbox.failPayment(gw!);
      h.paymentIds.push(failed.id);
      await pay();
      await sleep(o.lateAfterMs);
      await t.sandbox.lateAuthorize(failed.id); // a second capture on a paid order: refunded
      return;
    }
    case 'batched': case 'schedule_switch':
      if (o.paymentMethod === 'wallet') return; // paid at once from the wallet
      await pay();
      return;
    case 'batch_reversed': case 'batch_refund_before': case 'batch_refund_after':
      return batchRoute(t, h, { pay, payoutNow, retried });
    default:
      if (!gw) throw new Error(`order ${order.orderId} (${o.kind}) has no checkout`);
      await pay();
  }
}
