/** Before a payout is paid by hand (`pay_offline`, issue 20): no transfer of ours may be paying it.
 * A payout whose current idempotency key has gone out in a request with no definitive answer since
 * (review after AMBIGUOUS_PROVIDER_EVIDENCE, RESOLVER_LISTING_FAILING or IDEMPOTENCY_KEY_EXPIRED, or
 * a row the resolver released as "nothing found", which keeps the key) may have been paid by that
 * request. The decision then asks the provider with the resolver's listing (transfers by
 * notes.transaction_id, over the resolver's margins around the sends), before its transaction (no
 * transaction waits on the provider), and under the row lock checks that the listing still covers
 * every send the row records; it refuses while a live transfer carries the payout's note. A key that
 * a definitive answer replaced (freshKeyColumns clears key_first_sent_at) needs no question. */
import { AppError } from '../appError';
import type { PayoutStatus, PayoutView } from '../contracts/payout';
import type { Db, Tx } from '../db/pool';
import { ProviderContractError } from '../gateway/classify';
import { GatewayCallError, type Gateway, type RzpTransfer } from '../gateway/types';
import { logger } from '../logger';
import { liveTransfersCarryingNote, RESOLVER_WINDOW_AFTER_MS, RESOLVER_WINDOW_BEFORE_MS, transactionIdOf } from './resolution';
import { markProviderMayKnow } from './repository';
import { awaitsHuman, statusesAllowing } from './stateMachine';

/** The provider's listing window (ISO instants, so a listing compares equal across a JSON hop). */
export interface ListingWindow { from: string; to: string }
/** The window a decision needs listed; `to` null: up to the moment of the listing (a row that records
 * no send: any send of ours it forgets came after its creation, and none can come while the decision
 * holds its lock). */
export interface NeededWindow { from: string; to: string | null }

/** What the provider listed for a payout before the decision: the transfers carrying its note. */
export interface ProviderListing { payoutId: string; window: ListingWindow; transfers: RzpTransfer[] }

interface SendTimesRow {
  id: string; status: PayoutStatus; created_at: Date; claimed_at: Date | null; request_sent_at: Date | null; key_first_sent_at: Date | null;
  /** Set when the row may be older than the provider's ledger (a restored database): a send of
   * ours may have been made since then that the row does not record. */
  provider_may_know_since?: Date | null;
}

/** Pure: the window that holds every request sent under the payout's current key, from its first send
 * (or from the mark of a row older than the provider's ledger) to the latest claim or send, with the
 * resolver's margins; null when the key never went out and no such mark is set. */
export function listingWindowFor(row: Pick<SendTimesRow, 'claimed_at' | 'request_sent_at' | 'key_first_sent_at' | 'provider_may_know_since'>): ListingWindow | null {
  const first = [row.key_first_sent_at, row.provider_may_know_since ?? null].filter((d): d is Date => d !== null).map((d) => d.getTime());
  if (first.length === 0) return null;
  const latest = Math.max(...first, ...[row.request_sent_at, row.claimed_at].filter((d): d is Date => d !== null).map((d) => d.getTime()));
  return {
    from: new Date(Math.min(...first) - RESOLVER_WINDOW_BEFORE_MS).toISOString(),
    to: new Date(latest + RESOLVER_WINDOW_AFTER_MS).toISOString(),
  };
}

/** What a decision to pay by hand lists: the sends the row records (listingWindowFor), or when it
 * records none, everything since the payout was created: a database restored to before a send forgets
 * it (issue 36, campaign finding 5), and the row alone cannot tell. */
export function payByHandWindow(row: Pick<SendTimesRow, 'created_at' | 'claimed_at' | 'request_sent_at' | 'key_first_sent_at' | 'provider_may_know_since'>): NeededWindow {
  return listingWindowFor(row) ?? { from: new Date(row.created_at.getTime() - RESOLVER_WINDOW_BEFORE_MS).toISOString(), to: null };
}

const covers = (listed: ListingWindow, needed: NeededWindow): boolean => listed.from <= needed.from && (needed.to === null || listed.to >= needed.to);

async function readSendTimes(db: Db | Tx, where: { orderId: string } | { payoutId: string }): Promise<SendTimesRow | null> {
  const [whereSql, value] = 'orderId' in where ? ['order_id = $1 OR batch_id = $1', where.orderId] : ['id = $1', where.payoutId];
  const { rows } = await db.query<SendTimesRow>(`SELECT id, status, created_at, claimed_at, request_sent_at, key_first_sent_at, provider_may_know_since FROM payouts WHERE ${whereSql}`, [value]);
  return rows[0] ?? null;
}

/** What to list before paying the order's payout by hand, read without a lock: null when nothing
 * (a status the decision does not take, which the decision answers). */
export async function listingNeededFor(db: Db, orderId: string): Promise<{ payoutId: string; window: NeededWindow } | null> {
  const row = await readSendTimes(db, { orderId });
  if (!row || !statusesAllowing({ type: 'ops_pay_offline' }).includes(row.status)) return null;
  return { payoutId: row.id, window: payByHandWindow(row) };
}

/** The resolver's listing, asked from the API: 502 when the provider cannot answer (nothing is
 * decided on a guess), so the caller changes nothing. */
export async function listTransfersCarryingNote(gateway: Gateway, payoutId: string, needed: NeededWindow): Promise<ProviderListing> {
  const window = { from: needed.from, to: needed.to ?? new Date().toISOString() };
  try {
    const all = await gateway.listTransfers({ from: new Date(window.from), to: new Date(window.to) });
    return { payoutId, window, transfers: all.filter((t) => transactionIdOf(t) === payoutId) };
  } catch (err) {
    if (!(err instanceof GatewayCallError) && !(err instanceof ProviderContractError)) throw err;
    logger.error({ err, payoutId, window }, 'could not list the transfers at Razorpay before paying a payout offline');
    throw new AppError(502, 'gateway_unavailable', `Razorpay's transfer listing could not be asked whether a transfer already pays payout ${payoutId}; nothing was changed, try again`, { payoutId });
  }
}

/** Why a payout may not be paid by hand now. */
export type PayByHandRefusal =
  /** The row's sends are not covered by the listing given (none given, or it sent since): list again. */
  | { kind: 'provider_listing_needed'; payoutId: string; window: NeededWindow }
  /** The provider holds a transfer under the payout's note that our rows do not record, reversed
   * since (money left and came back): its run asks the provider and records it and its reversal
   * first (the row is marked for it). */
  | { kind: 'unrecorded_transfer'; payout: PayoutView; transfer: { id: string; status: string; amountPaise: number } }
  /** A transfer of ours may be paying it: `listed` by the provider just now, or `held` by the row. */
  | { kind: 'live_transfer_exists'; payout: PayoutView; transfer: { id: string; status: string | null; amountPaise: number | null; recipient: string | null; seen: 'listed' | 'held' } };

/** Under the payout's row lock (held by the caller): refuses the move to offline while a transfer of
 * ours may pay it, else answers the columns the move writes. A transfer the row holds must be recorded
 * as failed after acceptance, or as reversed in full (transfer_reversals); the move clears it from
 * the row (payout_attempts keeps it), since an offline payout holds no transfer (CHECK
 * payouts_offline_without_transfer). */
export async function checkPayByHand(tx: Tx, payout: PayoutView, listing: ProviderListing | undefined): Promise<PayByHandRefusal | { kind: 'clear'; set: Record<string, unknown> }> {
  const row = await readSendTimes(tx, { payoutId: payout.id });
  if (row) {
    const window = payByHandWindow(row);
    if (!listing || listing.payoutId !== payout.id || !covers(listing.window, window)) return { kind: 'provider_listing_needed', payoutId: payout.id, window };
    const [live] = liveTransfersCarryingNote(payout.id, listing.transfers);
    if (live) return { kind: 'live_transfer_exists', payout, transfer: { id: live.id, status: live.status, amountPaise: live.amount, recipient: live.recipient, seen: 'listed' } };
    const unrecorded = await transfersNotRecorded(tx, payout, listing.transfers);
    if (unrecorded[0]) {
      await markProviderMayKnow(tx, payout.orderId);
      return { kind: 'unrecorded_transfer', payout, transfer: { id: unrecorded[0].id, status: unrecorded[0].status, amountPaise: unrecorded[0].amount } };
    }
  }
  if (!payout.providerTransferId) return { kind: 'clear', set: {} };
  const { rows } = await tx.query(
    `SELECT 1 FROM payout_attempts WHERE payout_id = $1 AND provider_transfer_id = $2 AND outcome = 'failed_after_accept'
     UNION ALL
     SELECT 1 FROM transfer_reversals WHERE payout_id = $1 AND transfer_id = $2 GROUP BY transfer_amount_paise HAVING sum(amount_paise) >= transfer_amount_paise
     LIMIT 1`,
    [payout.id, payout.providerTransferId]);
  if (!rows[0]) return { kind: 'live_transfer_exists', payout, transfer: { id: payout.providerTransferId, status: null, amountPaise: null, recipient: null, seen: 'held' } };
  return { kind: 'clear', set: { provider_transfer_id: null } };
}

/** The listed transfers that moved money (reversed since: a failed one paid nothing) and that our rows
 * do not record for the payout (no attempt, reversal or row names them). */
async function transfersNotRecorded(tx: Tx, payout: PayoutView, listed: readonly RzpTransfer[]): Promise<RzpTransfer[]> {
  const transfers = listed.filter((t) => t.status !== 'failed');
  if (transfers.length === 0) return [];
  const { rows } = await tx.query<{ id: string }>(
    `SELECT provider_transfer_id AS id FROM payout_attempts WHERE payout_id = $1 AND provider_transfer_id IS NOT NULL
     UNION SELECT transfer_id FROM transfer_reversals WHERE payout_id = $1`, [payout.id]);
  const known = new Set([...rows.map((r) => r.id), ...(payout.providerTransferId ? [payout.providerTransferId] : [])]);
  return transfers.filter((t) => !known.has(t.id));
}

/** What the ops surfaces answer for a refused move to offline. */
export function payByHandRefused(orderId: string, refusal: PayByHandRefusal): AppError {
  if (refusal.kind === 'unrecorded_transfer') {
    const t = refusal.transfer;
    return new AppError(409, 'transfer_not_recorded', `Razorpay holds transfer ${t.id} (${t.status}, ${t.amountPaise} paise) with this payout's id in its notes, which our rows do not record (a restored database?): `
      + 'the payout asks Razorpay before anything else and records it (the payout sweep wakes its run); decide again once it has', { orderId, transferId: t.id, transferStatus: t.status, amountPaise: t.amountPaise });
  }
  if (refusal.kind === 'provider_listing_needed') {
    return new AppError(409, 'payout_changed', `the payout of order ${orderId} sent a request while Razorpay was being asked; nothing was changed, try again`, { payoutId: refusal.payoutId });
  }
  const t = refusal.transfer;
  const what = t.seen === 'listed'
    ? `Razorpay holds transfer ${t.id} (${t.status}, ${t.amountPaise} paise to ${t.recipient}) with this payout's id in its notes`
    : `the payout holds transfer ${t.id}, which is not recorded as failed or reversed in full`;
  // Mark paid is a decision on the human queue; a pending or failed payout's next attempt goes under
  // the same idempotency key, which Razorpay answers with the transfer it already made.
  const next = awaitsHuman(refusal.payout.status)
    ? `if it pays this payout, mark paid externally with transferId ${t.id}`
    : `its run's next attempt goes under the same idempotency key and takes that transfer (past the key's retention it goes to review: then mark paid externally with transferId ${t.id})`;
  return new AppError(409, 'live_transfer_exists', `${what}: the vendor may be paid by it, so it is not paid by hand; ${next}`,
    { orderId, transferId: t.id, transferStatus: t.status, amountPaise: t.amountPaise, recipient: t.recipient });
}
