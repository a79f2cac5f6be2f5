/** The payout state machine (design.md §5) as a closed union and one pure transition function.
 * Every status change in the database goes through `nextStatus`, and its compare-and-swap
 * `WHERE status = ANY(…)` comes from `statusesAllowing`, so the table below is the only truth. */
import { PAYOUT_STATUSES, type PayoutStatus } from '../contracts/payout';

export type PayoutEvent =
  /** The run takes the row to send a transfer. */
  | { type: 'claim' }
  /** At fire time the order no longer goes by direct transfer (settlement mode changed…). */
  | { type: 'reroute' }
  /** The provider took the transfer (2xx), or the resolver found it under our note. */
  | { type: 'transfer_accepted' }
  /** The claim is given back without a request sent (transfers paused at the last moment). */
  | { type: 'claim_released' }
  /** Not paid, and worth trying again: transient rejection, nothing found, failed after acceptance. */
  | { type: 'not_paid_retry'; capReached: boolean }
  /** A rejection that retrying cannot fix (suspended account, invalid account, fees > amount…). */
  | { type: 'permanent_rejection' }
  /** Something only a human can decide (ambiguous provider evidence). */
  | { type: 'needs_review' }
  /** The customer was refunded outside the app before any transfer left: hold it for a human.
   * `requestSent: false`: a claim whose request has not passed the send gate (nothing left either).
   * `batchOpen: true`: a batched order whose batch is still open (it leaves the batch, held). */
  | { type: 'customer_refunded'; requestSent?: boolean; batchOpen?: boolean }
  /** Settlement evidence: transfer.processed webhook or a provider fetch that says processed. */
  | { type: 'settlement_confirmed' }
  /** The provider reversed the payout's transfer (wholly or in part), after it was sent or settled:
   * the vendor is owed again, and a human decides (retry with a new transfer, or pay offline). Never
   * an automatic second transfer. From `parked` too: a further reversal of the transfer it holds. */
  | { type: 'transfer_reversed' }
  | { type: 'ops_retry' }
  /** Paid outside our send: by a bank reference (settled), or by the provider transfer ops found,
   * which leaves the payout `accepted` while that transfer is still pending at the provider. */
  | { type: 'ops_mark_paid_externally'; transferPending?: boolean }
  | { type: 'ops_cancel' }
  /** Ops will pay the vendor by hand: the payout joins the open offline ledger, once, and no claim
   * takes it after. Allowed wherever no transfer of ours is in flight or paying it. */
  | { type: 'ops_pay_offline' }
  /** The pair pays on a schedule: the order joins its batch, whose own payout sends the transfer. */
  | { type: 'join_batch' }
  /** Before joining a batch, Razorpay does not confirm the capture the order was paid on. */
  | { type: 'capture_unconfirmed' }
  /** An order whose earlier run joined a batch that can no longer take it back (a restored database). */
  | { type: 'earlier_batch_unclear' };

export type PayoutEventType = PayoutEvent['type'];

const TERMINAL: ReadonlySet<PayoutStatus> = new Set(['settled', 'cancelled', 'rerouted', 'offline']);
const HUMAN_QUEUE: ReadonlySet<PayoutStatus> = new Set(['parked', 'review']);
/** Not `processing` or `accepted`: a request of ours may be in flight or paying it there. From
 * `pending` or `failed` (a run waiting out the kill switch or a backoff) the decision is taken under
 * the row lock the claim takes too, so no claim wins after it. */
const PAYABLE_BY_HAND: ReadonlySet<PayoutStatus> = new Set(['pending', 'failed', 'parked', 'review']);

export function isTerminal(status: PayoutStatus): boolean {
  return TERMINAL.has(status);
}

export function awaitsHuman(status: PayoutStatus): boolean {
  return HUMAN_QUEUE.has(status);
}

/** The status after `event`, or null when the event is not allowed from `from`. */
export function nextStatus(from: PayoutStatus, event: PayoutEvent): PayoutStatus | null {
  switch (event.type) {
    case 'claim':
      return from === 'pending' || from === 'failed' ? 'processing' : null;
    case 'reroute':
      return from === 'pending' || from === 'failed' ? 'rerouted' : null;
    case 'claim_released':
      return from === 'processing' ? 'pending' : null;
    case 'transfer_accepted':
      return from === 'processing' ? 'accepted' : null;
    case 'not_paid_retry':
      // A transfer that failed after acceptance is not paid either; the cap still applies.
      return from === 'processing' || from === 'accepted' ? (event.capReached ? 'parked' : 'failed') : null;
    case 'permanent_rejection':
      return from === 'processing' ? 'parked' : null;
    case 'needs_review':
      return from === 'processing' || from === 'accepted' ? 'review' : null;
    case 'customer_refunded':
      return from === 'pending' || from === 'failed' || from === 'parked' || (from === 'processing' && event.requestSent === false)
        || (from === 'batched' && event.batchOpen === true) ? 'review' : null;
    case 'settlement_confirmed':
      return from === 'accepted' ? 'settled' : null;
    case 'transfer_reversed':
      return from === 'processing' || from === 'accepted' || from === 'settled' || from === 'parked' ? 'parked' : null;
    case 'ops_retry':
      return HUMAN_QUEUE.has(from) ? 'pending' : null;
    case 'ops_mark_paid_externally':
      return HUMAN_QUEUE.has(from) ? (event.transferPending ? 'accepted' : 'settled') : null;
    case 'ops_cancel':
      return HUMAN_QUEUE.has(from) ? 'cancelled' : null;
    case 'ops_pay_offline':
      return PAYABLE_BY_HAND.has(from) ? 'offline' : null;
    case 'join_batch':
      return from === 'pending' || from === 'failed' ? 'batched' : null;
    case 'capture_unconfirmed':
    case 'earlier_batch_unclear':
      return from === 'pending' || from === 'failed' ? 'review' : null;
  }
}

const ALL: readonly PayoutStatus[] = PAYOUT_STATUSES;

/** The statuses from which `event` is allowed (the compare-and-swap set). */
export function statusesAllowing(event: PayoutEvent): PayoutStatus[] {
  return ALL.filter((s) => nextStatus(s, event) !== null);
}

/** Like nextStatus, but an illegal transition is a bug and says so. */
export function requireNextStatus(from: PayoutStatus, event: PayoutEvent): PayoutStatus {
  const to = nextStatus(from, event);
  if (!to) throw new Error(`payout transition ${event.type} is not allowed from ${from}`);
  return to;
}
