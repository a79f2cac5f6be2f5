/** PostgreSQL side of payouts: reading a payout, the claim, recording outcomes, settlement and the
 * human decisions. Every status change is a compare-and-swap whose allowed "from" set comes from the
 * state machine; every outcome is an append-only payout_attempts row written in the same transaction.
 * Functions are idempotent so the database activities that call them may be retried. */
import { randomUUID } from 'node:crypto';
import type { PayoutStatus, PayoutView } from '../contracts/payout';
import { inTransaction, type Db, type Tx } from '../db/pool';
import type { PaymentMethod, Route, SettlementMode } from '../domain/routing';
import { payableRouteFor } from '../moneyin/orderRules';
import { balanceGate } from './balanceWall';
import { joinsBatch, type PayoutSchedule } from '../domain/batchWindow';
import { payoutIdOf } from '../domain/payoutIds';
import { oweOrders } from '../ledger/orderObligations';
import { recordPayoutInLedger, whyNoTransfer } from '../ledger/payoutDischarges';
import { logger } from '../logger';
import { isTerminal, requireNextStatus, statusesAllowing, type PayoutEvent } from './stateMachine';

type Queryable = Db | Tx;

export const PAYOUT_ATTEMPT_OUTCOMES = ['accepted', 'rejected', 'unknown', 'recovered', 'not_found', 'settled', 'failed_after_accept', 'not_sent', 'reversed'] as const;
export type AttemptOutcome = (typeof PAYOUT_ATTEMPT_OUTCOMES)[number];

/** A new idempotency key after a definitive rejection (Razorpay: 4–36 characters). */
export function freshIdempotencyKey(): string {
  return randomUUID();
}

/** The columns that replace the key: a fresh key has never been sent, so its age starts again. */
export function freshKeyColumns(): { idempotency_key: string; key_first_sent_at: null } {
  return { idempotency_key: freshIdempotencyKey(), key_first_sent_at: null };
}

/** The column that gives a payout its attempt back: the claim counted one, and what followed was no
 * decision of the provider about this payout (a release, a kept key's re-send, the balance wall). */
export function attemptGivenBack(payout: { attemptLimit: number }): { attempt_limit: number } {
  return { attempt_limit: payout.attemptLimit + 1 };
}

interface PayoutRow {
  id: string; order_id: string | null; batch_id: string | null; vendor_id: string; linked_account_id: string; amount_paise: number;
  status: PayoutStatus; attempts: number; attempt_limit: number | null; claimed_at: Date | null;
  idempotency_key: string; provider_transfer_id: string | null; last_code: string | null;
  external_reference: string | null; next_attempt_at: Date | null; claimed_by_run: string | null;
  key_first_sent_at: Date | null; provider_may_know_since: Date | null;
}

function toView(row: PayoutRow, attemptCap: number): PayoutView {
  return {
    id: row.id,
    orderId: (row.order_id ?? row.batch_id)!,
    batchId: row.batch_id,
    vendorId: row.vendor_id,
    linkedAccountId: row.linked_account_id,
    amountPaise: row.amount_paise,
    status: row.status,
    attempts: row.attempts,
    attemptLimit: row.attempt_limit ?? attemptCap,
    claimedAt: row.claimed_at ? row.claimed_at.toISOString() : null,
    idempotencyKey: row.idempotency_key,
    providerTransferId: row.provider_transfer_id,
    lastCode: row.last_code,
    externalReference: row.external_reference,
    nextAttemptAt: row.next_attempt_at ? row.next_attempt_at.toISOString() : null,
  };
}

/** The payout of an order, or by the same key a batch's own payout (its batch id): both columns are
 * unique and no batch id is an order id, so the ops surfaces and the runs reach either by one key. */
export async function findPayoutByOrder(db: Queryable, orderId: string, attemptCap: number): Promise<PayoutView | null> {
  const { rows } = await db.query<PayoutRow>('SELECT * FROM payouts WHERE order_id = $1 OR batch_id = $1', [orderId]);
  return rows[0] ? toView(rows[0], attemptCap) : null;
}

export async function findPayoutById(db: Queryable, payoutId: string, attemptCap: number): Promise<PayoutView | null> {
  const { rows } = await db.query<PayoutRow>('SELECT * FROM payouts WHERE id = $1', [payoutId]);
  return rows[0] ? toView(rows[0], attemptCap) : null;
}

export async function lockPayout(tx: Tx, payoutId: string, attemptCap: number): Promise<PayoutView> {
  const { rows } = await tx.query<PayoutRow>('SELECT * FROM payouts WHERE id = $1 FOR UPDATE', [payoutId]);
  if (!rows[0]) throw new Error(`payout ${payoutId} does not exist`);
  return toView(rows[0], attemptCap);
}

export async function insertAttempt(tx: Tx, a: {
  payoutId: string; attemptNo: number; idempotencyKey: string; outcome: AttemptOutcome;
  providerCode?: string | null; providerTransferId?: string | null; raw?: unknown; runId?: string | null;
}): Promise<void> {
  await tx.query(
    `INSERT INTO payout_attempts (payout_id, attempt_no, idempotency_key, outcome, provider_code, provider_transfer_id, raw, workflow_run_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (payout_id, attempt_no, outcome) DO NOTHING`,
    [a.payoutId, a.attemptNo, a.idempotencyKey, a.outcome, a.providerCode ?? null, a.providerTransferId ?? null,
      a.raw === undefined ? null : JSON.stringify(a.raw), a.runId ?? null],
  );
}

/** Compare-and-swap of the status through the state machine; returns false when the row had moved on. */
export async function transition(tx: Tx, view: PayoutView, event: PayoutEvent, set: Record<string, unknown> = {}): Promise<PayoutStatus | null> {
  if (!statusesAllowing(event).includes(view.status)) return null;
  const to = requireNextStatus(view.status, event);
  const columns = Object.keys(set);
  const assignments = columns.map((c, i) => `${c} = $${i + 3}`);
  const { rowCount } = await tx.query(
    `UPDATE payouts SET status = $2, updated_at = now()${assignments.length ? ', ' + assignments.join(', ') : ''}
     WHERE id = $1 AND status = $${columns.length + 3}`,
    [view.id, to, ...columns.map((c) => set[c]), view.status],
  );
  if (rowCount !== 1) return null;
  if (view.batchId) await moveBatchMembers(tx, view.batchId, view.status, to);
  // The payout's transfer in the ledger, in this transaction (a claim's before any request leaves).
  await recordPayoutInLedger(tx, view.id, to);
  return to;
}

/** A batch's members follow its own payout. Reaching a final status, the members, `batched` until
 * now, take it (the batch's transfer paid them, ops paid them by hand or cancelled them, or they are
 * owed offline). Leaving a final status (settled, then its transfer reversed: owed again), the
 * members that took it go back to `batched`: none reads paid while the provider holds the money
 * back, and none is a payout ops could pay on its own beside the batch. */
async function moveBatchMembers(tx: Tx, batchId: string, from: PayoutStatus, to: PayoutStatus): Promise<void> {
  const took = isTerminal(to) ? { status: to, members: 'batched' } : isTerminal(from) ? { status: 'batched', members: from } : null;
  if (!took) return;
  await tx.query(
    `UPDATE payouts p SET status = $2, updated_at = now(), settled_at = CASE WHEN $2 = 'settled' THEN now() END
     FROM payout_batch_orders m WHERE m.batch_id = $1 AND p.order_id = m.order_id AND p.status = $3`,
    [batchId, took.status, took.members]);
}

// ---------------------------------------------------------------------------------------------
// Fire time: routing, kill switch and the claim, in one transaction.

interface PayableOrderRow {
  order_status: string; employer_id: string; vendor_id: string; payment_method: PaymentMethod;
  subsidy_paise: number; commission_paise: number; vendor_net_paise: number;
  settlement_mode: SettlementMode; vendor_account: string | null;
  split_transfer_paise: number | null; split_linked_account_id: string | null;
  payout_schedule: PayoutSchedule | null;
}

async function lockPayableOrder(tx: Tx, orderId: string): Promise<PayableOrderRow | null> {
  const { rows } = await tx.query<PayableOrderRow>(
    `SELECT o.status AS order_status, o.employer_id, o.vendor_id, o.payment_method, o.subsidy_paise,
            o.commission_paise, o.vendor_net_paise, ev.settlement_mode, v.linked_account_id AS vendor_account,
            o.split_transfer_paise, o.split_linked_account_id, ev.payout_schedule
     FROM orders o
     JOIN vendors v ON v.id = o.vendor_id
     LEFT JOIN employer_vendor ev ON ev.employer_id = o.employer_id AND ev.vendor_id = o.vendor_id
     WHERE o.id = $1 FOR SHARE OF o`,
    [orderId],
  );
  const row = rows[0];
  if (row) row.settlement_mode ??= 'platform_transfer';
  return row ?? null;
}

/** Money in's rule, at fire time: a split only if the gateway order carries one; otherwise what
 * would be a split is a direct transfer (the platform holds the customer's money). */
function routeOf(order: PayableOrderRow): Route {
  return payableRouteFor({
    paymentMethod: order.payment_method,
    subsidyPaise: order.subsidy_paise,
    commissionPaise: order.commission_paise,
    vendorNetPaise: order.vendor_net_paise,
    splitTransferPaise: order.split_transfer_paise,
    splitLinkedAccountId: order.split_linked_account_id,
  }, { settlementMode: order.settlement_mode, linkedAccountId: order.vendor_account });
}

function ledgerRouteName(route: Route): string {
  switch (route.kind) {
    case 'offline_ledger': return route.reason;
    case 'corporate_direct': return 'corporate_direct';
    case 'split': return 'split';
    case 'direct_transfer': return 'direct_transfer';
  }
}

/** What the vendor is owed outside a direct transfer; idempotent (one row per order). Every order
 * has its offline-ledger amount so transfers can be switched off without a backfill. */
async function recordOfflineOwing(tx: Tx, orderId: string, order: PayableOrderRow, route: Route): Promise<void> {
  const ledgerAmount = route.kind === 'offline_ledger' ? route.amountPaise : order.vendor_net_paise;
  await tx.query(
    `INSERT INTO offline_ledger (order_id, employer_id, vendor_id, amount_paise, route)
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT (order_id) DO NOTHING`,
    [orderId, order.employer_id, order.vendor_id, ledgerAmount, ledgerRouteName(route)],
  );
  if (route.kind === 'corporate_direct') {
    await tx.query(
      `INSERT INTO vendor_obligations (order_id, employer_id, vendor_id, amount_paise)
       VALUES ($1, $2, $3, $4) ON CONFLICT (order_id) DO NOTHING`,
      [orderId, order.employer_id, order.vendor_id, route.amountPaise],
    );
  }
  await oweOrders(tx, [orderId]); // after the employer's obligation: its rail is employer direct
}

/** The row may be older than the provider's ledger (issue 23 item 4: a completed run over an open
 * row, or a run that recorded a send the row no longer shows): the next send asks the provider first
 * (activities/payout.ts, the gate), over a window from the earliest moment any send for it could have
 * been made, the order's creation (or the batch window's start). Any open status: a `processing`
 * row's resolver lists from it too, and an `accepted` row whose transfer failed meanwhile asks before
 * its next send; the mark stays until the resolver has a finding. */
export async function markProviderMayKnow(db: Queryable, orderId: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE payouts p SET provider_may_know_since = COALESCE(p.provider_may_know_since,
            (SELECT o.created_at FROM orders o WHERE o.id = p.order_id),
            (SELECT b.window_start FROM payout_batches b WHERE b.id = p.batch_id), p.created_at)
      WHERE (p.order_id = $1 OR p.batch_id = $1) AND p.status IN ('pending', 'failed', 'processing', 'accepted')`, [orderId]);
  return rowCount === 1;
}

export type ClaimResult =
  | { kind: 'claimed'; payout: PayoutView }
  | { kind: 'lost'; statusSeen: PayoutStatus | null }
  /** Held back: ops' kill switch, or the balance wall (this payout is not the probe). */
  | { kind: 'paused'; payout: PayoutView; by: 'kill_switch' | 'balance_wall' }
  | { kind: 'no_transfer'; reason: string; payout: PayoutView | null }
  /** The pair pays on a schedule: the order joins its batch (payouts/batches.ts) instead of a claim. */
  | { kind: 'batch_due'; payout: PayoutView };

export async function transfersPaused(db: Queryable): Promise<boolean> {
  const { rows } = await db.query<{ paused: boolean }>('SELECT paused FROM transfer_switch WHERE id = 1');
  return rows[0]?.paused ?? false;
}

/** Claims the order's payout for one transfer attempt: routes it at fire time (a payout that no longer
 * goes by direct transfer becomes `rerouted`), honours the kill switch, then compare-and-swaps
 * `pending|failed → processing` with `attempts < limit`. Zero rows is a lost claim, recorded once per run. */
export async function claimPayout(db: Db, orderId: string, opts: { attemptCap: number; runId: string; balanceProbeMs: number; providerMayKnow?: boolean }): Promise<ClaimResult> {
  return inTransaction(db, async (tx) => {
    const order = await lockPayableOrder(tx, orderId);
    // After the order's lock, as every path takes them (order, then payout).
    if (opts.providerMayKnow) await markProviderMayKnow(tx, orderId);
    if (!order || order.order_status !== 'paid') return { kind: 'no_transfer', reason: `order is ${order?.order_status ?? 'missing'}`, payout: null };
    const route = routeOf(order);
    const existing = await tx.query<PayoutRow>('SELECT * FROM payouts WHERE order_id = $1 FOR UPDATE', [orderId]);
    let payout = existing.rows[0] ? toView(existing.rows[0], opts.attemptCap) : null;
    const claimedByRun = existing.rows[0]?.claimed_by_run ?? null;

    if (route.kind !== 'direct_transfer') {
      await recordOfflineOwing(tx, orderId, order, route);
      if (payout && (await transition(tx, payout, { type: 'reroute' }))) {
        payout = await lockPayout(tx, payout.id, opts.attemptCap);
      }
      return { kind: 'no_transfer', reason: `route ${ledgerRouteName(route)}`, payout };
    }
    if (!payout) {
      // Money in normally writes this row when the order is paid; a route that changed to direct
      // transfer since then gets its row here. The payout id (the order determines it) is also the
      // first idempotency key.
      const id = payoutIdOf(orderId);
      await tx.query(
        `INSERT INTO payouts (id, order_id, vendor_id, linked_account_id, amount_paise, idempotency_key)
         VALUES ($1::uuid, $2, $3, $4, $5, $1::text) ON CONFLICT (order_id) DO NOTHING`,
        [id, orderId, order.vendor_id, route.linkedAccountId, route.amountPaise],
      );
      await recordOfflineOwing(tx, orderId, order, route);
      payout = toView((await tx.query<PayoutRow>('SELECT * FROM payouts WHERE order_id = $1 FOR UPDATE', [orderId])).rows[0]!, opts.attemptCap);
    }
    // A pair on an hourly or daily schedule: an order whose key never went out joins its batch
    // instead (after its capture is confirmed: batches.ts); one that already sent goes on alone, and
    // so does one marked just above or before (its send asks the provider first; nothing found clears
    // the mark, and the next claim joins).
    const sent = existing.rows[0];
    if (joinsBatch({ schedule: order.payout_schedule, status: payout.status, keySent: !!sent?.key_first_sent_at, providerMayKnow: !!sent?.provider_may_know_since })) {
      return { kind: 'batch_due', payout };
    }
    return claimPayoutRow(tx, payout, { claimedByRun, linkedAccountId: route.linkedAccountId, ...opts });
  });
}

/** The claim itself, for an order's payout or a batch's, under the row lock: a payout ops decided
 * to pay by hand is never claimed; the balance wall and the kill switch hold it; otherwise the
 * compare-and-swap `pending|failed → processing` with `attempts < limit`. */
export async function claimPayoutRow(tx: Tx, payout: PayoutView, opts: {
  claimedByRun: string | null; linkedAccountId: string; attemptCap: number; runId: string; balanceProbeMs: number;
}): Promise<ClaimResult> {
  // Ops decided to pay it by hand (under this same row lock): never claimed, and no lost race
  // either; the run ends on it.
  if (payout.status === 'offline') return { kind: 'no_transfer', reason: 'ops decided to pay it offline', payout };
  // A retry of this run's claim whose first try committed (its completion was lost): still ours.
  if (payout.status === 'processing' && opts.claimedByRun === opts.runId) return { kind: 'claimed', payout };
  const claimable = statusesAllowing({ type: 'claim' }).includes(payout.status) && payout.attempts < payout.attemptLimit;
  // The balance wall first: taking the probe updates the switch row, which must come before this
  // transaction reads it FOR SHARE (two claims that both held it shared would deadlock upgrading).
  if (claimable && (await balanceGate(tx, payout.id, opts.balanceProbeMs)) === 'wait') return { kind: 'paused', payout, by: 'balance_wall' };
  const { rows: sw } = await tx.query<{ paused: boolean }>('SELECT paused FROM transfer_switch WHERE id = 1 FOR SHARE');
  if (claimable && sw[0]?.paused) return { kind: 'paused', payout, by: 'kill_switch' };
  // Exactly once, by the ledger: never a transfer for a net another instrument pays or may still pay,
  // for nothing owed, or for other than what is owed.
  const refused = claimable
    ? await whyNoTransfer(tx, { id: payout.id, vendorId: payout.vendorId, orderId: payout.batchId ? null : payout.orderId, batchId: payout.batchId ?? null, amountPaise: payout.amountPaise })
    : null;
  if (refused) {
    logger.error({ payoutId: payout.id, orderId: payout.orderId, batchId: payout.batchId, why: refused }, 'payout not claimed: the ledger says no transfer of it may go');
    return { kind: 'no_transfer', reason: refused, payout };
  }
  const claimed = claimable && (await transition(tx, payout, { type: 'claim' }, {
    attempts: payout.attempts + 1,
    linked_account_id: opts.linkedAccountId,
    next_attempt_at: null,
    claimed_by_run: opts.runId,
  }));
  if (!claimed) {
    await tx.query(
      `INSERT INTO payout_lost_claims (workflow_run_id, order_id, status_seen) VALUES ($1, $2, $3)
       ON CONFLICT (workflow_run_id) DO NOTHING`,
      [opts.runId, payout.orderId, payout.status],
    );
    return { kind: 'lost', statusSeen: payout.status };
  }
  // claimed_at comes from the database clock so every claim is compared on one clock. The new
  // claim has sent nothing yet, and its resolver has not failed yet.
  await tx.query('UPDATE payouts SET claimed_at = now(), request_sent_at = NULL, resolver_failing_since = NULL WHERE id = $1', [payout.id]);
  return { kind: 'claimed', payout: await lockPayout(tx, payout.id, opts.attemptCap) };
}
