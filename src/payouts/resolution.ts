/** What the provider's own ledger says about a payout whose transfer outcome we do not know.
 * Pure: the resolver activity lists the transfers around the claim and asks this function; the
 * pay-offline decision asks the same listing (liveTransferCheck.ts). */
import type { RzpTransfer } from '../gateway/types';

/** The listing window around the moment the request was sent (design.md §6). */
export const RESOLVER_WINDOW_BEFORE_MS = 5 * 60_000;
export const RESOLVER_WINDOW_AFTER_MS = 15 * 60_000;

export type Resolution =
  /** A live transfer carries our note: it is ours, do not pay again. */
  | { kind: 'found_alive'; transfer: RzpTransfer }
  /** Our transfer exists but failed or was reversed: the vendor is not paid. */
  | { kind: 'found_failed'; transfer: RzpTransfer }
  /** Nothing carries our note, and no request of ours can still be in flight. */
  | { kind: 'nothing_found' }
  /** Nothing yet, but a request of ours may still be in flight: ask again later, do nothing else. */
  | { kind: 'ask_again' }
  /** Evidence a machine should not decide on (two live transfers, wrong amount or account). */
  | { kind: 'ambiguous'; reason: string }
  /** A batch closed again after a restore holds less than the live transfer its first close made:
   * members the restore took out are on their way back (their runs remember the batch). Wait. */
  | { kind: 'members_missing'; transfer: RzpTransfer }
  /** Nothing found, but the idempotency key is older than the provider's retention: neither that key
   * nor a fresh one can be trusted not to pay twice, so a human decides. */
  | { kind: 'key_expired'; keyAgeMs: number };

const ALIVE: ReadonlySet<RzpTransfer['status']> = new Set(['created', 'pending', 'processed']);
const NOT_PAID: ReadonlySet<RzpTransfer['status']> = new Set(['failed', 'reversed']);

export function transactionIdOf(transfer: Pick<RzpTransfer, 'notes'>): string | null {
  const notes = transfer.notes;
  if (Array.isArray(notes)) return null; // Razorpay serialises empty notes as []
  return typeof notes.transaction_id === 'string' ? notes.transaction_id : null;
}

/** Transfers carrying this payout's note that may pay the vendor (not failed, not wholly reversed):
 * while one exists, the payout is not paid again, by transfer or by hand. */
export function liveTransfersCarryingNote(payoutId: string, transfers: readonly RzpTransfer[]): RzpTransfer[] {
  return transfers.filter((t) => transactionIdOf(t) === payoutId && !NOT_PAID.has(t.status));
}

export function decideResolution(input: {
  payoutId: string;
  amountPaise: number;
  linkedAccountId: string;
  transfers: readonly RzpTransfer[];
  /** Transfers already recorded against earlier attempts of this payout (payout_attempts): their
   * failure says nothing about the current attempt's request. */
  earlierTransferIds: readonly string[];
  /** How long ago the current request was sent (or, if it never recorded a send, claimed). */
  claimAgeMs: number;
  /** Until the claim is this old, a request of ours may still reach the provider. */
  inFlightHorizonMs: number;
  /** How long ago the current idempotency key was first sent (null: never sent). */
  keyAgeMs?: number | null;
  /** How long the provider honours an idempotency key. */
  keyRetentionMs?: number;
  /** A batch's payout closed again after a restore, still within the wait for its members. */
  membersMayReturn?: boolean;
}): Resolution {
  const ours = input.transfers.filter((t) => transactionIdOf(t) === input.payoutId);
  const alive = ours.filter((t) => ALIVE.has(t.status));
  if (alive.length > 1) return { kind: 'ambiguous', reason: `${alive.length} live transfers carry this payout's note` };
  const [live] = alive;
  if (live) {
    if (input.membersMayReturn && live.recipient === input.linkedAccountId && live.amount > input.amountPaise) return { kind: 'members_missing', transfer: live };
    if (live.amount !== input.amountPaise || live.recipient !== input.linkedAccountId) {
      return { kind: 'ambiguous', reason: `transfer ${live.id} is ${live.amount} paise to ${live.recipient}, expected ${input.amountPaise} to ${input.linkedAccountId}` };
    }
    return { kind: 'found_alive', transfer: live };
  }
  // Not-paid evidence counts only for the current attempt: a transfer recorded for an earlier attempt
  // failed under an older key, while this attempt's request may still be in flight.
  const earlier = new Set(input.earlierTransferIds);
  const current = ours.filter((t) => !earlier.has(t.id));
  const partial = current.find((t) => !NOT_PAID.has(t.status));
  if (partial) return { kind: 'ambiguous', reason: `transfer ${partial.id} is ${partial.status}` };
  // Until the in-flight horizon has passed, no answer is "not paid": the request may still land.
  if (input.claimAgeMs < input.inFlightHorizonMs) return { kind: 'ask_again' };
  const failed = newest(current);
  if (failed) return { kind: 'found_failed', transfer: failed };
  if (input.keyAgeMs != null && input.keyRetentionMs !== undefined && input.keyAgeMs > input.keyRetentionMs) {
    return { kind: 'key_expired', keyAgeMs: input.keyAgeMs };
  }
  return { kind: 'nothing_found' };
}

function newest(transfers: readonly RzpTransfer[]): RzpTransfer | undefined {
  return transfers.reduce<RzpTransfer | undefined>((best, t) => (!best || t.created_at > best.created_at ? t : best), undefined);
}
