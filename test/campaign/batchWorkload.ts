/** The workload's payout-batch scenarios (issue 36): an order of an hourly pair whose batch is refunded
 * from the Dashboard before or after it pays, or whose batch's one transfer the Dashboard reverses and
 * ops then retry or pay offline. What happened is recorded in the order's history for the checker. */
import type { Topology } from '../../src/devstack/topologyTypes';
import { callRetrying, LEFT_THE_QUEUE, waitFor } from './calls';
import { refundFromDashboard } from './dashboard';
import type { OrderHistory } from './workload';

interface PayoutSeen { id: string; status: string; providerTransferId: string | null; lastCode: string | null; amountPaise: number }
interface BatchSeen { batchId: string; status: 'open' | 'closed'; payout: { status: string; providerTransferId: string | null; lastCode: string | null } | null }

export interface RouteHelpers {
  pay: () => Promise<{ id: string }>;
  payoutNow: () => Promise<PayoutSeen | undefined>;
  retried: { onRetry: () => void };
}

const batchOfOrder = async (t: Topology, orderId: string): Promise<BatchSeen | null> =>
  ((await callRetrying(t, 'ops', 'GET', `/ops/payouts/${orderId}`, undefined, { accept: [404] })).body?.batch as BatchSeen | null | undefined) ?? null;
const batchPayout = async (t: Topology, batchId: string): Promise<PayoutSeen | undefined> =>
  (await callRetrying(t, 'ops', 'GET', `/ops/payouts/${batchId}`, undefined, { accept: [404] })).body?.payout as PayoutSeen | undefined;
const closeNow = (t: Topology, batchId: string, retried: RouteHelpers['retried']) =>
  callRetrying(t, 'ops', 'POST', `/ops/batches/${batchId}/close`, { reason: 'fault campaign: the scenario closes its window now' }, { ...retried, accept: [404, 409] }); // 404: a restore forgot the batch

export async function batchRoute(t: Topology, h: OrderHistory, c: RouteHelpers): Promise<void> {
  const o = h.planned;
  const payment = await c.pay();
  const customerShare = o.totalPaise - o.subsidyPaise;
  // Joined its window's batch once the capture is heard (its webhooks may be given up: the sweep finds
  // it; a 1,000-order run took over three minutes for one whose capture check met 429s).
  await waitFor(c.payoutNow, (p) => p?.status === 'batched', 480_000);
  const joined = await batchOfOrder(t, h.orderId!);
  h.batch = { batchId: joined?.batchId ?? null };
  /** The Dashboard's refund; whether a batch of its had closed (its sum fixed) when it was made. */
  const refund = async () => {
    h.batch!.refundedWhile = (await batchOfOrder(t, h.orderId!))?.status === 'closed' ? 'closed' : 'open';
    h.batch!.refundId = await refundFromDashboard(t, payment.id, customerShare);
  };
  if (!joined && o.kind === 'batch_reversed') return; // nothing to reverse: judged as a plain batched order
  if (o.kind === 'batch_refund_before' || !joined) {
    // Refunded while the batch is open (nobody closes it before the quiesce): nothing has left for it.
    // Not joined in time: refunded all the same, before any money left (the checker expects it held).
    await refund();
    await waitFor(c.payoutNow, (p) => p !== undefined && p.status !== 'batched', 60_000);
    return;
  }
  await closeNow(t, joined.batchId, c.retried);
  // Under load a batch can take minutes to pay; the checker judges whatever it reached.
  const settled = await waitFor(() => batchPayout(t, joined.batchId), (p) => p?.status === 'settled' && p.providerTransferId !== null, 240_000);
  if (o.kind === 'batch_refund_after') {
    await refund();
    return;
  }
  if (!settled) return; // never paid in time: judged as a plain batched order
  await reverseBatch(t, h, joined.batchId, settled.providerTransferId!, c.retried);
}

/** The Dashboard reverses the batch's settled transfer; once the batch is parked for ops, they decide. */
async function reverseBatch(t: Topology, h: OrderHistory, batchId: string, transferId: string, retried: RouteHelpers['retried']): Promise<void> {
  const reversal = await t.sandbox.reverseTransferFromDashboard(transferId, { notes: { by: 'dashboard', campaign: h.planned.clientReference } });
  h.reversed = { transferId, reversalId: reversal.id, seen: false };
  const isParked = (p: PayoutSeen | undefined) => p?.status === 'parked' && p.lastCode === 'TRANSFER_REVERSED';
  // Its webhook may be given up for good: then our rows never hear it and recon must raise it.
  if (!(await waitFor(() => batchPayout(t, batchId), isParked, 180_000))) return;
  h.reversed.seen = true;
  const exp = h.planned.expect;
  const decision = exp.transfers === 'batched' && exp.reversedThen === 'pay_offline' ? 'pay-offline' : 'retry';
  const decide = () => callRetrying(t, 'ops', 'POST', `/ops/payouts/${batchId}/${decision}`, { reason: 'fault campaign: the batch transfer was reversed from the Dashboard' }, { ...retried, accept: LEFT_THE_QUEUE });
  if (LEFT_THE_QUEUE.includes((await decide()).status)) {
    // It left the queue (a restore forgot the park, or its run moved): ops look again once it is back.
    const back = await waitFor(() => batchPayout(t, batchId), isParked, 180_000);
    if (!back) {
      const now = await batchPayout(t, batchId);
      if (now?.status === 'settled' && now.providerTransferId === transferId) h.reversed.seen = false;
      else throw new Error(`the batch payout left the queue before ops decided, and did not come back (${now?.status ?? 'no row'})`);
      return;
    }
    const again = await decide();
    if (LEFT_THE_QUEUE.includes(again.status)) throw new Error(`ops could not decide on batch ${batchId}: ${JSON.stringify(again.body)}`);
  }
  h.batch!.decided = decision;
}
