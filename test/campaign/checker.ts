/** The checker: what the provider's ledger (the sandbox's transfers and refunds) and PostgreSQL say
 * about every planned order, against what the plan asked for — never what the workflows report
 * about themselves. Pure: `checkOrders` takes both ledgers as read and returns verdicts. */
import type { RzpRefund, RzpTransfer } from '../../src/gateway/types';
import { ORDER_KINDS, type OrderKind } from './plan';
import { checkBatched, checkBatchScenario, checkOutsideRefund, checkReversalOwed, checkSwitching } from './orderChecks';
import { campaignVendors, vendorOf, type OrderHistory, type World } from './workload';

export interface DbLedger {
  orders: Map<string, { status: string; vendorId: string; vendorNetPaise: number; subsidyPaise: number; commissionPaise: number; totalPaise: number }>;
  payouts: Map<string, { status: string; amountPaise: number; providerTransferId: string | null; linkedAccountId: string; lastCode: string | null }>;
  splits: Map<string, { status: string; amountPaise: number; providerTransferId: string | null; linkedAccountId: string }>;
  ledger: Map<string, { route: string; amountPaise: number }>;
  openLedger: Set<string>;
  obligations: Map<string, number>;
  refunds: Array<{ orderId: string | null; paymentId: string; status: string; gatewayRefundId: string | null }>;
  /** Active memberships of the orders' offline lines in settlement lines (open or paid). */
  settlementMembers: Array<{ orderId: string; reference: string; status: string; vendorId: string; amountPaise: number }>;
  /** Refunds made outside the app, as our rows recorded them, and the clawback lines they wrote. */
  outsideRefunds: Array<{ id: string; orderId: string; action: string; clawbackPaise: number | null; status: string }>;
  clawbacks: Map<string, number>;
  /** Settlement lines recorded paid for the campaign's vendors, with what their members add up to. */
  paidSettlementLines: Array<{ reference: string; vendorId: string; amountPaise: number; utr: string; membersPaise: number }>;
  /** What a split order's reversals left owed offline (transfer_reversal lines), by order. */
  reversalLines: Map<string, Array<{ reversalId: string; reversedPaise: number; owedPaise: number; open: boolean; paidBy: string | null }>>;
  /** The batch each order joined (a pair on a schedule), and each such batch with its own payout. */
  batchOf: Map<string, string>;
  batches: Map<string, { status: string; members: string[]; payout: { status: string; amountPaise: number; providerTransferId: string | null; linkedAccountId: string } | null }>;
  /** Reversals recorded against a batch's transfer (issue 36 item 1). */
  batchReversals?: Array<{ id: string; transferId: string; batchId: string; amountPaise: number }>;
}

export interface ProviderLedger {
  transfers: RzpTransfer[];
  refunds: RzpRefund[];
  /** Refunds whose webhooks reached us at least once (a refund.* event delivered): the others our
   * rows could only learn of from the sweep's look at the payment. */
  heardRefundIds: ReadonlySet<string>;
  platformAccountSource: (t: RzpTransfer) => boolean;
}

export interface OrderVerdict {
  history: OrderHistory;
  /** Live transfers the provider holds for the order (processed, not reversed). */
  liveTransfers: number;
  expectedTransfers: 0 | 1;
  duplicates: number;
  lost: boolean;
  stuck: boolean;
  parked: boolean;
  disagreements: string[];
  violations: string[];
}

export interface CheckResult {
  verdicts: OrderVerdict[];
  /** Transfers the provider holds that belong to no planned order (a double payment, or worse). */
  unattributed: RzpTransfer[];
  violations: string[];
  /** The campaign's batches: how many, the orders in them, and the live transfers that paid them;
   * the batch scenarios that took place (reversed, refunded before or after the batch paid). */
  batches: { count: number; orders: number; liveTransfers: number; reversed?: number; reversedUnheard?: number; refundedBefore?: number; refundedAfter?: number };
}

export const STUCK_PAYOUT: ReadonlySet<string> = new Set(['pending', 'processing', 'accepted', 'failed']);
export const isLive = (t: RzpTransfer) => t.status === 'processed' && (t.amount_reversed ?? 0) === 0;
export const noteOf = (t: RzpTransfer, key: 'order_id' | 'batch_id'): string | null => (t.notes && !Array.isArray(t.notes) && typeof t.notes[key] === 'string' ? t.notes[key] as string : null);
const notesOrder = (t: RzpTransfer): string | null => noteOf(t, 'order_id');

export function checkOrders(histories: OrderHistory[], world: World, db: DbLedger, provider: ProviderLedger): CheckResult {
  const attributed = new Set<string>();
  const verdicts = histories.map((h) => checkOne(h, world, db, provider, attributed));
  const campaignAccounts = new Set(campaignVendors(world, histories).map((v) => v.account).filter((a): a is string => a !== null));
  const unattributed = provider.transfers.filter((t) => !attributed.has(t.id) && campaignAccounts.has(t.recipient) && t.status !== 'failed');
  const violations = [
    ...verdicts.flatMap((v) => v.violations.map((x) => `${v.history.orderId ?? v.history.planned.clientReference} (${v.history.planned.kind}): ${x}`)),
    ...unattributed.map((t) => `transfer ${t.id} of ${t.amount} paise to ${t.recipient} (${t.status}) belongs to no order of the campaign`),
  ];
  const batchIds = new Set(db.batchOf.values());
  const batches = {
    count: batchIds.size,
    orders: db.batchOf.size,
    liveTransfers: provider.transfers.filter((t) => isLive(t) && batchIds.has(noteOf(t, 'batch_id') ?? '')).length,
    reversed: histories.filter((h) => h.planned.kind === 'batch_reversed' && h.reversed).length,
    reversedUnheard: histories.filter((h) => h.planned.kind === 'batch_reversed' && h.reversed && !h.reversed.seen).length,
    refundedBefore: histories.filter((h) => h.planned.kind === 'batch_refund_before' && h.batch?.refundId).length,
    refundedAfter: histories.filter((h) => h.planned.kind === 'batch_refund_after' && h.batch?.refundId).length,
  };
  return { verdicts, unattributed, violations, batches };
}

function checkOne(h: OrderHistory, world: World, db: DbLedger, provider: ProviderLedger, attributed: Set<string>): OrderVerdict {
  const o = h.planned;
  const v: OrderVerdict = { history: h, liveTransfers: 0, expectedTransfers: 0, duplicates: 0, lost: false, stuck: false, parked: false, disagreements: [], violations: [] };
  if (!h.orderId) {
    v.violations.push(`never placed: ${h.error ?? 'no order id'}`);
    return v;
  }
  if (h.error) v.violations.push(`the client could not take it down its route: ${h.error}`);
  const orderId = h.orderId;
  const order = db.orders.get(orderId);
  if (!order) {
    v.violations.push('placed, but PostgreSQL has no such order');
    return v;
  }
  const batchId = db.batchOf.get(orderId) ?? null;
  const mine = provider.transfers.filter((t) => (provider.platformAccountSource(t) && notesOrder(t) === orderId) || (h.gatewayOrderId !== null && t.source === h.gatewayOrderId) || h.paymentIds.includes(t.source)
    // A batched order is paid by its batch's one transfer, which names the batch.
    || (batchId !== null && provider.platformAccountSource(t) && noteOf(t, 'batch_id') === batchId));
  for (const t of mine) attributed.add(t.id);
  const live = mine.filter(isLive);
  v.liveTransfers = live.length;
  const payout = db.payouts.get(orderId);
  const split = db.splits.get(orderId);
  const ledger = db.ledger.get(orderId);
  const account = h.ownVendor?.account ?? vendorOf(world, o.vendor)?.account ?? null;
  const exp = o.expect;

  if (exp.transfers === 'none' && 'unpaid' in exp) {
    if (order.status !== exp.unpaid) {
      v.violations.push(`order is ${order.status}, planned ${exp.unpaid}`);
      if (order.status === 'pending' || order.status === 'failed') v.stuck = true;
    }
    if (payout) v.violations.push(`an unpaid order has a payout (${payout.status})`);
    if (ledger) v.violations.push(`an unpaid order has an offline ledger row (${ledger.route})`);
  } else if (order.status !== 'paid') {
    v.violations.push(`order is ${order.status}, planned paid`);
    v.stuck = order.status === 'pending' || order.status === 'failed';
  }
  if (order.vendorNetPaise !== order.totalPaise - order.commissionPaise) v.disagreements.push(`vendor net ${order.vendorNetPaise} ≠ total ${order.totalPaise} − commission ${order.commissionPaise}`);

  if (exp.transfers === 'direct') {
    v.expectedTransfers = exp.payout === 'settled' ? 1 : 0;
    // Judged unheard by the client (no parked payout within its wait: a restore had forgotten the
    // payout, or taken it back to settled), yet the rows learnt it later: the payout written again after
    // the restore asked the provider by its note and found its transfer reversed (seed 20261205), or a
    // retried webhook came. It waits in ops' queue under the reversed transfer, the reversal recorded
    // (recon raises nothing).
    const heardLate = exp.reversedThen !== undefined && h.reversed !== undefined && !h.reversed.seen
      && payout?.status === 'parked' && payout.lastCode === 'TRANSFER_REVERSED' && payout.providerTransferId === h.reversed.transferId;
    if (heardLate) {
      h.reversed!.seen = true;
      v.expectedTransfers = 0;
    }
    // Reversed from the Dashboard and its webhook lost: our rows still say settled, the provider has no
    // live transfer, and only recon can tell (reversal-not-in-app, required in recon.ts).
    const reversalUnseen = exp.reversedThen !== undefined && h.reversed !== undefined && !h.reversed.seen;
    if (reversalUnseen) v.expectedTransfers = 0;
    if (exp.reversedThen !== undefined && h.reversed === undefined) v.expectedTransfers = 1;
    // Refunded from the Dashboard before the transfer: held (review, CUSTOMER_REFUNDED), never sent.
    // (or by the capture check, when the payment was refunded before it was confirmed: CAPTURE_NOT_CONFIRMED).
    const heldForRefund = exp.refundedOutside !== undefined && payout?.status === 'review' && ['CUSTOMER_REFUNDED', 'CAPTURE_NOT_CONFIRMED'].includes(payout.lastCode ?? '');
    if (heldForRefund) v.expectedTransfers = 0;
    // Refunded while parked, its webhooks all given up: nothing held it, so it is still parked, and
    // only recon knows of the refund (refund-not-in-app, required in recon.ts).
    const refundUnheard = exp.refundedOutside === 'while_parked' && !db.outsideRefunds.some((r) => r.orderId === orderId) && payout?.status === 'parked';
    if (exp.refundedOutside) checkOutsideRefund(v, db, provider, h, heldForRefund || refundUnheard ? ['payout_held', 'reported'] : ['owed_back']);
    // Never reversed (its payout was too slow to settle for the Dashboard to reverse it): a plain payout.
    const notReversed = exp.reversedThen !== undefined && h.reversed === undefined;
    if (!payout) v.violations.push('no payout row');
    else if (heldForRefund || refundUnheard) v.parked = true;
    else {
      if (STUCK_PAYOUT.has(payout.status)) v.stuck = true;
      v.parked = payout.status === 'parked' || payout.status === 'review';
      if (payout.status !== (notReversed ? 'settled' : exp.payout) && !reversalUnseen && !heardLate) v.violations.push(`payout is ${payout.status}${payout.lastCode ? ` (${payout.lastCode})` : ''}, planned ${exp.payout}`);
      else if (exp.code && payout.lastCode !== exp.code) v.violations.push(`payout is ${payout.status} with ${payout.lastCode ?? 'no code'}, planned ${exp.code}`);
      if (v.parked && !payout.lastCode) v.violations.push('parked without a reason code');
      if (payout.linkedAccountId !== account) v.disagreements.push(`payout to ${payout.linkedAccountId}, the vendor's account is ${account}`);
      if (payout.amountPaise !== order.vendorNetPaise) v.disagreements.push(`payout of ${payout.amountPaise} ≠ vendor net ${order.vendorNetPaise}`);
      if (exp.paidExternally && payout.status === 'settled' && payout.providerTransferId !== h.ownVendor?.markedWith) v.violations.push(`marked paid externally with ${h.ownVendor?.markedWith ?? 'nothing'}, yet the payout holds ${payout.providerTransferId}`);
      if (reversalUnseen) {
        if (payout.status !== 'settled' || payout.providerTransferId !== h.reversed!.transferId) v.violations.push(`a reversal our rows never heard of, yet the payout is ${payout.status} with ${payout.providerTransferId}`);
      } else if (payout.status === 'settled' && (live.length !== 1 || payout.providerTransferId !== live[0]!.id)) v.disagreements.push(`payout settled by ${payout.providerTransferId}, provider's live transfers: ${live.map((t) => t.id).join(', ') || 'none'}`);
    }
    if (ledger?.route !== 'direct_transfer' || ledger.amountPaise !== order.vendorNetPaise) v.disagreements.push(`offline ledger ${JSON.stringify(ledger ?? null)}, expected direct_transfer of ${order.vendorNetPaise}`);
    if (payout?.status === 'settled' && db.openLedger.has(orderId)) v.disagreements.push('settled by transfer, yet listed as owed offline');
  } else if (exp.transfers === 'batched') {
    const at = { orderId, batchId, account, live, netPaise: order.vendorNetPaise };
    if (exp.reversedThen || exp.refundedOutside) checkBatchScenario(v, db, provider, at);
    else checkBatched(v, db, at);
  } else if (exp.transfers === 'per_order_or_batched') {
    checkSwitching(v, db, { orderId, batchId, account, live, netPaise: order.vendorNetPaise });
  } else if (exp.transfers === 'split') {
    // Reversed from the Dashboard: no live transfer; our split row says reversed once it heard, else
    // it still says processed and only recon can tell (reversal-not-in-app, required in recon.ts).
    if (h.reversed) h.reversed.seen = split?.status === 'reversed';
    v.expectedTransfers = h.reversed ? 0 : 1;
    if (payout) v.violations.push(`a split order has a direct-transfer payout (${payout.status})`);
    if (!split) v.violations.push('no split row');
    else {
      if (split.status === 'expected') v.stuck = true;
      if (h.reversed) {
        if (split.providerTransferId !== h.reversed.transferId) v.disagreements.push(`split row says ${split.providerTransferId}, the Dashboard reversed ${h.reversed.transferId}`);
        if (split.status !== 'reversed' && split.status !== 'processed') v.violations.push(`split is ${split.status} after its reversal`);
        if (h.reversed.seen) checkReversalOwed(v, db, orderId, h.reversed.reversalId, split.amountPaise);
      } else if (split.status !== 'processed') v.violations.push(`split is ${split.status}, planned processed`);
      if (split.linkedAccountId !== account || split.amountPaise !== order.vendorNetPaise) v.disagreements.push(`split row of ${split.amountPaise} to ${split.linkedAccountId}, expected ${order.vendorNetPaise} to ${account}`);
      if (split.status === 'processed' && !h.reversed && (live.length !== 1 || split.providerTransferId !== live[0]!.id)) v.disagreements.push(`split row says ${split.providerTransferId}, provider's live transfers: ${live.map((t) => t.id).join(', ') || 'none'}`);
    }
    if (ledger?.route !== 'split') v.disagreements.push(`offline ledger ${JSON.stringify(ledger ?? null)}, expected split`);
    if ((split?.status === 'processed' || split?.status === 'reversed') && db.openLedger.has(orderId)) v.disagreements.push('paid by its split, yet its order line is listed as owed offline');
  } else if ('ledger' in exp) {
    if (payout) v.violations.push(`an offline order has a payout (${payout.status})`);
    const amount = exp.ledger === 'cash' ? order.subsidyPaise - order.commissionPaise : order.vendorNetPaise;
    if (ledger?.route !== exp.ledger || ledger.amountPaise !== amount) v.disagreements.push(`offline ledger ${JSON.stringify(ledger ?? null)}, expected ${exp.ledger} of ${amount}`);
    if (exp.ledger === 'corporate_direct' && db.obligations.get(orderId) !== order.vendorNetPaise) v.disagreements.push(`obligation ${db.obligations.get(orderId) ?? 'missing'}, expected ${order.vendorNetPaise}`);
  }

  for (const t of live) {
    if (t.recipient !== account) v.disagreements.push(`transfer ${t.id} went to ${t.recipient}, the vendor's account is ${account}`);
    // A batch's transfer pays the sum of its orders (checkBatched).
    if (t.amount !== order.vendorNetPaise && exp.transfers !== 'batched' && batchId === null) v.disagreements.push(`transfer ${t.id} of ${t.amount} ≠ vendor net ${order.vendorNetPaise}`);
  }
  if (live.length > v.expectedTransfers) {
    v.duplicates = live.length - v.expectedTransfers;
    v.violations.push(`${live.length} live transfers (${live.map((t) => t.id).join(', ')}), planned ${v.expectedTransfers}`);
  } else if (live.length < v.expectedTransfers) {
    v.lost = !v.stuck;
    v.violations.push(`no live transfer, planned ${v.expectedTransfers}${v.stuck ? ' (still in flight at the deadline)' : ''}`);
  }

  const refundsAtProvider = provider.refunds.filter((r) => h.paymentIds.includes(r.payment_id));
  const liveRefunds = refundsAtProvider.filter((r) => r.status !== 'failed');
  if (liveRefunds.length !== o.refunds) v.violations.push(`${liveRefunds.length} refunds at the provider (${liveRefunds.map((r) => r.id).join(', ')}), planned ${o.refunds}`);
  for (const r of liveRefunds) {
    if ((exp.transfers === 'direct' || exp.transfers === 'batched') && exp.refundedOutside) continue; // ours is an outside refund (checkOutsideRefund)
    const ours = db.refunds.find((x) => x.gatewayRefundId === r.id);
    if (!ours) v.disagreements.push(`refund ${r.id} at the provider is not in PostgreSQL`);
    else if (ours.status !== r.status) {
      v.disagreements.push(`refund ${r.id} is ${ours.status} here, ${r.status} at the provider`);
      if (ours.status === 'requested' || ours.status === 'pending') v.stuck = true;
    }
  }
  for (const d of v.disagreements) v.violations.push(d);
  return v;
}

export interface RouteRow { route: OrderKind; orders: number; transfers: number; duplicates: number; lost: number; stuck: number; parked: number; disagreements: number }

export function tableByRoute(verdicts: OrderVerdict[]): RouteRow[] {
  const rows = new Map<OrderKind, RouteRow>();
  for (const v of verdicts) {
    const route = v.history.planned.kind;
    const row = rows.get(route) ?? { route, orders: 0, transfers: 0, duplicates: 0, lost: 0, stuck: 0, parked: 0, disagreements: 0 };
    row.orders += 1;
    row.transfers += v.liveTransfers;
    row.duplicates += v.duplicates;
    row.lost += v.lost ? 1 : 0;
    row.stuck += v.stuck ? 1 : 0;
    row.parked += v.parked ? 1 : 0;
    row.disagreements += v.disagreements.length > 0 ? 1 : 0;
    rows.set(route, row);
  }
  return ORDER_KINDS.flatMap((k) => rows.get(k) ?? []);
}
