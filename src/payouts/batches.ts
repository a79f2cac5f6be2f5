/** Payout batches in PostgreSQL (issue 22 item 4). An order of a pair on an hourly or daily schedule
 * joins the batch of its window (the window it was paid in, or the one open now once that batch's
 * cutoff has passed or it has closed; an order whose earlier run joined a batch a restore forgot goes
 * back to that one); at the cutoff the batch closes, its sum is fixed, and a payouts row of its own carries the
 * ONE transfer for it through the same claim, outcome, resolver and settlement code as an order's.
 * Joining and closing both lock the batch row (share and update), so no order joins a closed batch,
 * and `payout_batch_orders`' primary key keeps an order in one batch at most. */
import type { PayoutView } from '../contracts/payout';
import { inTransaction, type Db, type Tx } from '../db/pool';
import { logger } from '../logger';
import { batchIdOf, DEFAULT_DAILY_CUTOFF_IST, joinsBatch, nextWindow, windowAt, type BatchSchedule, type BatchWindow, type PayoutSchedule } from '../domain/batchWindow';
import { payoutIdOf } from '../domain/payoutIds';
import { CAPTURE_CHECK_FAILED, CAPTURE_NOT_CONFIRMED, recordCaptureConfirmed, type CaptureCheck } from './captureConfirmation';
import { holdMembersOnUnreadRefunds } from './refundHolds';
import { retryDelayMs } from './rejection';

type RetryPolicy = Parameters<typeof retryDelayMs>[1];
import { claimPayoutRow, findPayoutByOrder, insertAttempt, lockPayout, markProviderMayKnow, transition, type ClaimResult } from './repository';

export type JoinResult =
  | { kind: 'joined'; payout: PayoutView; batchId: string; cutoffAt: string }
  /** Not joined (the row moved on, the pair pays per order again, or the capture held it): the run
   * goes round again on the row as it is now. */
  | { kind: 'not_joined'; payout: PayoutView | null; why: string };

/** How many closed windows a late order may skip before giving up (a bug, not a load). */
const MAX_WINDOWS_SKIPPED = 1_000;

interface ScheduledOrderRow {
  employer_id: string; vendor_id: string; paid_at: Date | null;
  payout_schedule: PayoutSchedule | null; payout_cutoff_ist: string | null;
  /** The database's clock (the transaction's), read with the order: batches close by it. */
  db_now: Date;
}

/** The batch an order belongs to, if any. */
export async function batchOfOrder(db: Pick<Db, 'query'>, orderId: string): Promise<{ batchId: string; cutoffAt: string } | null> {
  const { rows } = await db.query<{ id: string; cutoff_at: Date }>(
    'SELECT b.id, b.cutoff_at FROM payout_batch_orders m JOIN payout_batches b ON b.id = m.batch_id WHERE m.order_id = $1', [orderId]);
  return rows[0] ? { batchId: rows[0].id, cutoffAt: rows[0].cutoff_at.toISOString() } : null;
}

/** The open batch for `w` or, once its cutoff has passed (the database's clock) or it has closed, the
 * batch of the window open now: created if new, held FOR SHARE. No order joins a batch past its
 * cutoff, closed or not: its close may have paid it in a window a restored database forgot (issue 36,
 * finding 8), and the provider's sum has no room for a newcomer. */
async function openBatchFrom(tx: Tx, pair: { employerId: string; vendorId: string }, first: BatchWindow, dailyCutoff: string, now: Date): Promise<{ id: string; cutoffAt: Date }> {
  let w = first.cutoff.getTime() <= now.getTime() ? windowAt(first.schedule, now, dailyCutoff) : first;
  for (let skipped = 0; skipped < MAX_WINDOWS_SKIPPED; skipped += 1, w = nextWindow(w, dailyCutoff)) {
    const id = batchIdOf(pair, w);
    const status = await batchStatusHeld(tx, id, pair, w);
    if (status === 'open') return { id, cutoffAt: w.cutoff };
  }
  throw new Error(`no open batch within ${MAX_WINDOWS_SKIPPED} windows of ${first.cutoff.toISOString()}`);
}

/** The batch's row for window `w`, created if new (open), held FOR SHARE: its status. */
async function batchStatusHeld(tx: Tx, id: string, pair: { employerId: string; vendorId: string }, w: BatchWindow): Promise<string | undefined> {
  // Any conflict, not only the id's: two first joiners insert the same row at once, and the pair's
  // (schedule, cutoff) key may be the index that sees the second one first.
  await tx.query(
    `INSERT INTO payout_batches (id, employer_id, vendor_id, schedule, window_start, cutoff_at)
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
    [id, pair.employerId, pair.vendorId, w.schedule, w.start, w.cutoff]);
  const { rows } = await tx.query<{ status: string }>('SELECT status FROM payout_batches WHERE id = $1 FOR SHARE', [id]);
  return rows[0]?.status;
}

/** The capture check's answer before joining: a confirmation is recorded and lets the join go on
 * (null); Razorpay's "no" sends the payout to review; no answer backs it off, nothing spent. */
async function applyCaptureBeforeJoin(tx: Tx, payout: PayoutView, capture: CaptureCheck, policy: RetryPolicy): Promise<JoinResult | null> {
  const base = { payoutId: payout.id, attemptNo: payout.attempts, idempotencyKey: payout.idempotencyKey };
  switch (capture.kind) {
    case 'not_needed':
      return null;
    case 'confirmed':
      await recordCaptureConfirmed(tx, capture.paymentId);
      return null;
    case 'not_confirmed':
      logger.error({ orderId: payout.orderId, payoutId: payout.id, paymentId: capture.paymentId, why: capture.why }, 'not batched: Razorpay does not confirm the capture the order was paid on; the payout goes to review');
      await insertAttempt(tx, { ...base, outcome: 'not_sent', providerCode: CAPTURE_NOT_CONFIRMED, raw: { paymentId: capture.paymentId, why: capture.why, payment: capture.payment } });
      await transition(tx, payout, { type: 'capture_unconfirmed' }, { last_code: CAPTURE_NOT_CONFIRMED });
      return { kind: 'not_joined', payout: await lockPayout(tx, payout.id, payout.attemptLimit), why: CAPTURE_NOT_CONFIRMED };
    case 'unavailable':
      await insertAttempt(tx, { ...base, outcome: 'not_sent', providerCode: CAPTURE_CHECK_FAILED, raw: capture });
      await tx.query('UPDATE payouts SET last_code = $2, next_attempt_at = $3 WHERE id = $1',
        [payout.id, CAPTURE_CHECK_FAILED, new Date(Date.now() + retryDelayMs(payout.attempts + 1, policy))]);
      return { kind: 'not_joined', payout: await lockPayout(tx, payout.id, payout.attemptLimit), why: CAPTURE_CHECK_FAILED };
  }
}

/** Why an order whose earlier run joined a batch waits for ops: that batch is gone from our rows and
 * cannot be made again, or its payout is in a state no rule may add a member to. */
export const EARLIER_BATCH_NEEDS_OPS = 'EARLIER_BATCH_NEEDS_OPS';

/** The sweep copies what a completed run of the order's payout says it joined (payouts.
 * earlier_run_batch_id), when a restored database forgot that join; only while the row is open and
 * in no batch. */
export async function recordEarlierRunBatch(db: Pick<Db, 'query'>, orderId: string, batchId: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE payouts SET earlier_run_batch_id = $2
      WHERE order_id = $1 AND status IN ('pending', 'failed')
        AND NOT EXISTS (SELECT 1 FROM payout_batch_orders m WHERE m.order_id = $1)`, [orderId, batchId]);
  return rowCount === 1;
}

/** The order's payout enters `batchId` as a member (its net in the sum) and waits for the batch. */
async function addMember(tx: Tx, payout: PayoutView, batchId: string, cutoffAt: Date, attemptCap: number): Promise<JoinResult> {
  await tx.query('INSERT INTO payout_batch_orders (order_id, batch_id, amount_paise) VALUES ($1, $2, $3)', [payout.orderId, batchId, payout.amountPaise]);
  await transition(tx, payout, { type: 'join_batch' }, { next_attempt_at: null, claimed_by_run: null, earlier_run_batch_id: null });
  return { kind: 'joined', payout: await lockPayout(tx, payout.id, attemptCap), batchId, cutoffAt: cutoffAt.toISOString() };
}

/** An order whose earlier run joined `batchId` before a restore forgot the join goes back to that
 * batch, whatever its cutoff: that batch's close may have paid the vendor with this order's net in
 * the sum. Open, it joins as any order; closed again after the restore, its payout not yet sent (it
 * asks the provider first), the order is added and the payout's amount with it, so the sum can meet
 * the transfer the provider holds. Null: the batch paid without it (its transfer was found and
 * recorded for the members it has), so the order joins as any other. */
async function rejoinEarlierBatch(tx: Tx, payout: PayoutView, order: ScheduledOrderRow & { payout_schedule: BatchSchedule; paid_at: Date }, batchId: string, attemptCap: number): Promise<JoinResult | null> {
  const dailyCutoff = order.payout_cutoff_ist ?? DEFAULT_DAILY_CUTOFF_IST;
  const pair = { employerId: order.employer_id, vendorId: order.vendor_id };
  const { rows: found } = await tx.query<{ status: string; cutoff_at: Date }>('SELECT status, cutoff_at FROM payout_batches WHERE id = $1 FOR SHARE', [batchId]);
  let batch = found[0];
  if (!batch) {
    // The batch itself was made in the lost window: made again from its window, found by its id.
    let w = windowAt(order.payout_schedule, order.paid_at, dailyCutoff);
    for (let i = 0; i < MAX_WINDOWS_SKIPPED && batchIdOf(pair, w) !== batchId; i += 1) w = nextWindow(w, dailyCutoff);
    const status = batchIdOf(pair, w) === batchId ? await batchStatusHeld(tx, batchId, pair, w) : undefined;
    batch = status ? { status, cutoff_at: w.cutoff } : undefined;
  }
  if (batch?.status === 'open') return addMember(tx, payout, batchId, batch.cutoff_at, attemptCap);
  const { rows: own } = await tx.query<{ id: string; may_know: boolean }>(
    'SELECT id, provider_may_know_since IS NOT NULL AS may_know FROM payouts WHERE batch_id = $1 FOR UPDATE', [batchId]);
  const batchPayout = own[0] && (await lockPayout(tx, own[0].id, attemptCap));
  if (batchPayout && (batchPayout.status === 'accepted' || batchPayout.status === 'settled')) return null;
  if (batch && batchPayout && own[0]!.may_know && (batchPayout.status === 'pending' || batchPayout.status === 'failed')) {
    await tx.query('UPDATE payouts SET amount_paise = amount_paise + $2 WHERE id = $1', [batchPayout.id, payout.amountPaise]);
    logger.warn({ orderId: payout.orderId, batchId, payoutId: batchPayout.id }, 'an order a restore took out of its closed batch is back in it (its earlier run joined it): the batch payout, which asks the provider first, sums it again');
    return addMember(tx, payout, batchId, batch.cutoff_at, attemptCap);
  }
  if (batchPayout?.status === 'processing') {
    // The batch's claim is asking the provider right now: come back in a moment.
    await tx.query(`UPDATE payouts SET next_attempt_at = now() + interval '1 second' WHERE id = $1`, [payout.id]);
    return { kind: 'not_joined', payout: await lockPayout(tx, payout.id, attemptCap), why: `batch ${batchId} is asking the provider; joining it again shortly` };
  }
  logger.error({ orderId: payout.orderId, batchId, batchPayoutStatus: batchPayout?.status ?? null }, 'an order whose earlier run joined a batch cannot go back to it: held for ops');
  await insertAttempt(tx, { payoutId: payout.id, attemptNo: payout.attempts, idempotencyKey: payout.idempotencyKey, outcome: 'not_sent', providerCode: EARLIER_BATCH_NEEDS_OPS, raw: { batchId, batchPayoutStatus: batchPayout?.status ?? null } });
  await transition(tx, payout, { type: 'earlier_batch_unclear' }, { last_code: EARLIER_BATCH_NEEDS_OPS });
  return { kind: 'not_joined', payout: await lockPayout(tx, payout.id, attemptCap), why: EARLIER_BATCH_NEEDS_OPS };
}

/** Joins the order's payout to its batch, once. `capture`: Razorpay's answer about the order's capture,
 * asked outside this transaction (captureOfOrderToConfirm, checkCapture). Idempotent: a retry of a
 * join that committed answers the same batch. */
export async function joinPayoutBatch(db: Db, orderId: string, capture: CaptureCheck, policy: RetryPolicy & { attemptCap: number }): Promise<JoinResult> {
  return inTransaction(db, async (tx) => {
    const { rows } = await tx.query<ScheduledOrderRow>(
      `SELECT o.employer_id, o.vendor_id, o.paid_at, ev.payout_schedule, ev.payout_cutoff_ist::text, now() AS db_now
         FROM orders o LEFT JOIN employer_vendor ev ON ev.employer_id = o.employer_id AND ev.vendor_id = o.vendor_id
        WHERE o.id = $1 FOR SHARE OF o`, [orderId]);
    const found = await findPayoutByOrder(tx, orderId, policy.attemptCap);
    const payout = found && (await lockPayout(tx, found.id, policy.attemptCap));
    const order = rows[0];
    if (!order || !payout) return { kind: 'not_joined', payout, why: 'no payout for this order' };
    const member = await batchOfOrder(tx, orderId);
    if (member) return payout.status === 'batched' ? { kind: 'joined', payout, ...member } : { kind: 'not_joined', payout, why: `in batch ${member.batchId} but ${payout.status}` };
    // Read under the row lock: a mark set since the claim (the sweep saw a completed run over this
    // row) keeps the order out too; the run goes round and its claim asks the provider.
    const { rows: sent } = await tx.query<{ sent: boolean; may_know: boolean; earlier_batch: string | null }>(
      `SELECT key_first_sent_at IS NOT NULL AS sent, provider_may_know_since IS NOT NULL AS may_know, earlier_run_batch_id AS earlier_batch
         FROM payouts WHERE id = $1`, [payout.id]);
    const rule = { schedule: order.payout_schedule, status: payout.status, keySent: !!sent[0]?.sent, providerMayKnow: !!sent[0]?.may_know };
    if (rule.providerMayKnow) {
      return { kind: 'not_joined', payout, why: 'the provider may already hold a transfer for it (a restored database): its claim asks by its note first' };
    }
    if (!joinsBatch(rule) || !order.paid_at) {
      return { kind: 'not_joined', payout, why: `payout is ${payout.status} on a ${order.payout_schedule ?? 'per_order'} schedule` };
    }
    const schedule = rule.schedule;
    const held = await applyCaptureBeforeJoin(tx, payout, capture, policy);
    if (held) return held;
    const earlier = sent[0]?.earlier_batch;
    const back = earlier ? await rejoinEarlierBatch(tx, payout, { ...order, payout_schedule: schedule, paid_at: order.paid_at }, earlier, policy.attemptCap) : null;
    if (back) return back;
    const dailyCutoff = order.payout_cutoff_ist ?? DEFAULT_DAILY_CUTOFF_IST;
    const pair = { employerId: order.employer_id, vendorId: order.vendor_id };
    const batch = await openBatchFrom(tx, pair, windowAt(schedule, order.paid_at, dailyCutoff), dailyCutoff, order.db_now);
    return addMember(tx, payout, batch.id, batch.cutoffAt, policy.attemptCap);
  });
}

/** Closes the batch (idempotent): no order joins it after this commits, and its sum gets the payouts
 * row that carries the transfer, keyed by the batch id (also its first idempotency key). Null: the
 * batch has no orders (nothing to pay). `providerMayKnow`: a close made again after a restore (the
 * payout asks the provider by its note before any send). */
export async function closePayoutBatch(db: Db, batchId: string, attemptCap: number, opts: { providerMayKnow?: boolean } = {}): Promise<PayoutView | null> {
  return inTransaction(db, async (tx) => {
    const { rows } = await tx.query<{ status: string; vendor_id: string }>('SELECT status, vendor_id FROM payout_batches WHERE id = $1 FOR UPDATE', [batchId]);
    const batch = rows[0];
    if (!batch) throw new Error(`batch ${batchId} does not exist`);
    if (batch.status === 'open') {
      // A member whose refund was announced and not yet read leaves it, held: nothing leaves for it.
      await holdMembersOnUnreadRefunds(tx, batchId, attemptCap);
      const { rows: sum } = await tx.query<{ orders: number; paise: string | null; account: string | null }>(
        `SELECT count(*)::int AS orders, sum(m.amount_paise)::text AS paise,
                COALESCE((SELECT linked_account_id FROM vendors WHERE id = $2), max(p.linked_account_id)) AS account
           FROM payout_batch_orders m JOIN payouts p ON p.order_id = m.order_id WHERE m.batch_id = $1`, [batchId, batch.vendor_id]);
      if ((sum[0]?.orders ?? 0) > 0) {
        await tx.query(
          `INSERT INTO payouts (id, order_id, batch_id, vendor_id, linked_account_id, amount_paise, idempotency_key)
           VALUES ($5::uuid, NULL, $1, $2, $3, $4, $1)`, [batchId, batch.vendor_id, sum[0]!.account, sum[0]!.paise, payoutIdOf(batchId)]);
      }
      await tx.query(`UPDATE payout_batches SET status = 'closed', closed_at = now() WHERE id = $1`, [batchId]);
      // Closed again after a restore: marked in the same commit, so a member coming back to it never
      // meets its payout unmarked.
      if (opts.providerMayKnow) await markProviderMayKnow(tx, batchId);
    }
    return findPayoutByOrder(tx, batchId, attemptCap);
  });
}

/** The claim of a batch's own payout: routed at fire time like an order's (a vendor without a linked
 * account, or a pair no longer paid by platform transfer, reroutes it, and its members are owed
 * offline), then the same claim as an order's payout. */
export async function claimBatchPayout(db: Db, batchId: string, opts: { attemptCap: number; runId: string; balanceProbeMs: number; providerMayKnow?: boolean }): Promise<ClaimResult> {
  return inTransaction(db, async (tx) => {
    const { rows } = await tx.query<{ id: string; claimed_by_run: string | null; account: string | null; mode: string | null }>(
      `SELECT p.id, p.claimed_by_run, v.linked_account_id AS account, ev.settlement_mode AS mode
         FROM payouts p
         JOIN payout_batches b ON b.id = p.batch_id
         JOIN vendors v ON v.id = b.vendor_id
         LEFT JOIN employer_vendor ev ON ev.employer_id = b.employer_id AND ev.vendor_id = b.vendor_id
        WHERE p.batch_id = $1 FOR UPDATE OF p`, [batchId]);
    const row = rows[0];
    if (!row) return { kind: 'no_transfer', reason: 'the batch has not closed with orders to pay', payout: null };
    if (opts.providerMayKnow) await markProviderMayKnow(tx, batchId);
    let payout = await lockPayout(tx, row.id, opts.attemptCap);
    if (!row.account || (row.mode ?? 'platform_transfer') !== 'platform_transfer') {
      if (await transition(tx, payout, { type: 'reroute' })) payout = await lockPayout(tx, row.id, opts.attemptCap);
      return { kind: 'no_transfer', reason: row.account ? `the pair is now ${row.mode}` : 'the vendor has no linked account', payout };
    }
    return claimPayoutRow(tx, payout, { claimedByRun: row.claimed_by_run, linkedAccountId: row.account, ...opts });
  });
}
