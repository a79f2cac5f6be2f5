/** Why a payout waits for a human, in words an ops engineer acts on: who decided (Razorpay's answer,
 * or one of our own checks), the code, and what to do next. Unknown codes still show the code, with a
 * generic next step, and are put on Razorpay only when they are Razorpay's (its error code families). */

/** Who held the payout: Razorpay refused or reversed something, or one of the app's own checks stopped it. */
export type DecidedBy = 'razorpay' | 'app';

interface Explanation { words: string; nextStep: string; decidedBy: DecidedBy }

const EXPLAINED: Record<string, Explanation> = {
  BAD_REQUEST_TRANSFER_NOT_ALLOWED_TO_SUSPENDED_LINKED_ACCOUNT: {
    words: "the vendor's linked account is suspended at Razorpay",
    nextStep: 'ask the vendor to resolve the suspension with Razorpay, then retry; or pay offline',
    decidedBy: 'razorpay',
  },
  BAD_REQUEST_TRANSFER_INVALID_ACCOUNT_ID: {
    words: "the vendor's linked account id is unknown to Razorpay",
    nextStep: "correct the vendor's linked account (admin), then retry; or pay offline",
    decidedBy: 'razorpay',
  },
  BAD_REQUEST_LINKED_ACCOUNT_NOT_ACTIVATED: {
    words: "the vendor's linked account is not activated yet",
    nextStep: 'retry once Razorpay activates the account; or pay offline',
    decidedBy: 'razorpay',
  },
  BAD_REQUEST_TRANSFER_INSUFFICIENT_BALANCE: {
    words: 'the platform balance was too low, on every attempt',
    nextStep: 'top up the platform balance, then retry',
    decidedBy: 'razorpay',
  },
  BAD_REQUEST_NEGATIVE_BALANCE_BREACHED: {
    words: 'the transfer would take the platform balance below its allowed negative limit',
    nextStep: 'top up the platform balance, then retry',
    decidedBy: 'razorpay',
  },
  IDEMPOTENCY_KEY_EXPIRED: {
    words: 'no transfer was found and the idempotency key is older than Razorpay may remember it',
    nextStep: 'check the Razorpay dashboard for a transfer with this payout id in its notes: if there is one, mark paid externally with its transfer id (trf_…; checked against this payout and recorded as its transfer), else retry (a fresh key is used)',
    decidedBy: 'app',
  },
  RESOLVER_LISTING_FAILING: {
    words: "Razorpay's transfer listing kept failing, so the outcome of the last request is unknown",
    nextStep: 'check the Razorpay dashboard for a transfer with this payout id in its notes: if there is one, mark paid externally with its transfer id (trf_…; checked against this payout and recorded as its transfer), else retry',
    decidedBy: 'app',
  },
  AMBIGUOUS_PROVIDER_EVIDENCE: {
    words: "Razorpay's ledger holds evidence a machine should not decide on (two transfers, or a wrong amount or account)",
    nextStep: 'compare the transfers in the Razorpay dashboard with this payout, then mark paid externally with the transfer id that pays it (trf_…), retry or cancel',
    decidedBy: 'app',
  },
  BATCH_MEMBERS_MISSING: {
    words: "a restored database took orders out of this batch after its transfer left: Razorpay holds the batch's transfer for more than its members sum now, and the batch waits for them to come back (each order's earlier run remembers the batch)",
    nextStep: 'nothing while it waits (it asks Razorpay again by itself); if it is still here after an hour, compare the transfer in the Razorpay dashboard with the members, then mark paid externally with that transfer id or retry',
    decidedBy: 'app',
  },
  EARLIER_BATCH_NEEDS_OPS: {
    words: "this order's earlier run joined a batch that a restored database forgot, and that batch can no longer take it back (its payout waits for ops, was decided by them, or is gone), so Razorpay may already have paid this order inside that batch's transfer",
    nextStep: "look up the batch's transfer in the Razorpay dashboard (its notes carry the batch id): if it paid this order, cancel this payout; otherwise retry",
    decidedBy: 'app',
  },
  CAPTURE_NOT_CONFIRMED: {
    words: 'Razorpay does not confirm the capture this online order was marked paid on (no such payment, not captured or refunded, another amount or another gateway order), so no transfer was sent: the webhook that marked it paid may be forged or wrong',
    nextStep: "compare the order's payment in the Razorpay dashboard with the evidence in the payout attempts: if the customer's money never arrived, cancel and check who knows the webhook secret; if it did, retry (Razorpay is asked again and the transfer goes only once it confirms) or pay offline",
    decidedBy: 'app',
  },
  REJECTED_WITHOUT_CODE: {
    words: 'Razorpay refused the transfer without an error code',
    nextStep: 'look at the raw answer in the payout attempts, then retry or cancel',
    decidedBy: 'razorpay',
  },
  TRANSFER_REVERSED: {
    words: "the vendor's transfer was reversed after it was sent (from the Razorpay Dashboard, by Razorpay, or by a refund): the linked account gave the money back, so the vendor is owed again",
    nextStep: 'find out who reversed it and why (the reversal is in transfer_reversals and on the Razorpay Dashboard): retry (a new transfer with a fresh key; nothing is sent by itself) or pay offline; cancel if the vendor is not owed',
    decidedBy: 'razorpay',
  },
  TRANSFER_PARTIALLY_REVERSED: {
    words: "part of the vendor's transfer was reversed after it was sent: the vendor keeps the rest, so it is owed the reversed amount again (in the payout attempts and transfer_reversals)",
    nextStep: 'a retry or pay offline would pay the whole net again, so both are refused: pay the reversed amount by hand and mark paid externally with its bank reference, or cancel if the vendor is not owed',
    decidedBy: 'razorpay',
  },
  AMOUNT_MISMATCH: {
    words: "our capture check: the payment that paid this order captured another amount than the order's customer share, so the order is held and no transfer was sent",
    nextStep: "compare the payment in the Razorpay dashboard with the order: once explained, retry (the transfer goes for the vendor's net), pay offline, or cancel and refund the customer",
    decidedBy: 'app',
  },
  CAPTURE_CHECK_FAILED: {
    words: "our capture check could not reach Razorpay to confirm the order's payment, so nothing was sent yet",
    nextStep: 'nothing: it asks again by itself; if Razorpay stays unreachable, see the provider calls on the dashboard',
    decidedBy: 'app',
  },
  CUSTOMER_REFUNDED: {
    words: "the customer was refunded outside the app (e.g. from the Razorpay Dashboard) on the payment this order was paid on, before the vendor's transfer was sent, so it is held (held too while a refund Razorpay announced by webhook has not been read yet)",
    nextStep: 'find out who refunded and why (the refund is in outside_refunds once read, in refund_hints until then, and on the Razorpay Dashboard): if the order was undone, cancel; if the vendor should still be paid, pay offline (a retry is refused by the capture check: the payment is refunded)',
    decidedBy: 'app',
  },
};

/** Razorpay's error code families (razorpay-reference.md): a code outside them is one of ours. */
const RAZORPAY_CODE = /^(BAD_REQUEST|GATEWAY_ERROR|SERVER_ERROR)_/;

export function explainPayoutCode(code: string | null, status: string): Explanation {
  if (code && EXPLAINED[code]) return EXPLAINED[code]!;
  if (code && RAZORPAY_CODE.test(code)) return { words: `Razorpay answered ${code}`, nextStep: 'look at the raw answer in the payout attempts, then retry, pay offline or cancel', decidedBy: 'razorpay' };
  if (code) return { words: `one of our checks held it (${code})`, nextStep: 'look at the payout attempts and the logs for this payout, then retry, pay offline or cancel', decidedBy: 'app' };
  return status === 'parked'
    ? { words: 'the attempt limit was reached', nextStep: 'find out why the attempts failed (payout attempts), then retry or pay offline', decidedBy: 'app' }
    : { words: 'waiting for a human decision', nextStep: 'retry, mark paid externally, pay offline or cancel', decidedBy: 'app' };
}

/** "Razorpay" or "our check", for a reason shown to a person. */
export const decidedByWords = (by: DecidedBy): string => (by === 'razorpay' ? 'Razorpay' : 'our check');
