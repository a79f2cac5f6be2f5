/** Whether a refund of a payment on a split order takes the vendor's share back (`reverse_all`).
 * Pure: the caller lists the provider's transfers on the refunded payment and, for a second capture,
 * on the payment that keeps the order paid.
 *
 * - A live transfer on the refunded payment is reversed only when the vendor keeps another: the
 *   order was cancelled (nothing is owed), or the payment that keeps the order also carries one. A
 *   duplicate capture that happens to carry the order's only split (Razorpay ran it on the payment
 *   our webhooks heard second) is refunded from the platform balance, and the vendor keeps it.
 * - A reversed transfer on the refunded payment is decided as a live one (it ran; it is final).
 * - No live transfer on the refunded payment says nothing while the split may still run: Razorpay
 *   creates it moments after capture and retries a failed one for days. Until our split row is final
 *   (or, with no row, until the retry window since the capture has passed) the refund waits. */
import type { RzpTransfer } from '../gateway/types';

export type SplitReversal =
  | { kind: 'reverse' }
  | { kind: 'keep' }
  | { kind: 'ask_later'; why: string };

export interface SplitReversalInput {
  /** The order's Route split, as our row has it (null: no row — an order that was never payable). */
  splitStatus: 'expected' | 'processed' | 'failed' | 'reversed' | null;
  /** A refund of a second capture: the transfers of the payment that keeps the order paid. */
  keptPaymentTransfers: RzpTransfer[] | null;
  refundedPaymentTransfers: RzpTransfer[];
  /** No split row: whether Razorpay's retry window since the capture has passed. */
  retryWindowPassed: boolean;
}

/** The split code a refund waiting for the split's outcome carries (the ops refund queue shows it). */
export const SPLIT_NOT_FINAL = 'SPLIT_TRANSFER_NOT_FINAL';

export function isLiveTransfer(t: Pick<RzpTransfer, 'status'>): boolean {
  return t.status !== 'failed' && t.status !== 'reversed';
}

export function splitReversal(input: SplitReversalInput): SplitReversal {
  // A reversed transfer ran and is final (Razorpay retries a failed split, never a reversed one): the
  // decision is the one a live transfer gets. The refund asked again after a database restore lost
  // our first one must send the body that refund was sent with (reverse_all), or the provider refuses
  // the key as reused; a refund made with reverse_all after someone else reversed it takes nothing.
  const refundedRan = input.refundedPaymentTransfers.some((t) => isLiveTransfer(t) || t.status === 'reversed');
  if (refundedRan) {
    if (input.keptPaymentTransfers === null) return { kind: 'reverse' };
    return input.keptPaymentTransfers.some(isLiveTransfer) ? { kind: 'reverse' } : { kind: 'keep' };
  }
  const final = input.splitStatus === null ? input.retryWindowPassed : input.splitStatus !== 'expected';
  if (final) return { kind: 'keep' };
  const failed = input.refundedPaymentTransfers.length > 0;
  return {
    kind: 'ask_later',
    why: failed
      ? 'the transfer on this payment failed and Razorpay may still retry it: refunding without reversing now could leave the vendor paid for money returned'
      : 'no transfer is listed on this payment yet and the split is not final: Razorpay may still run it here',
  };
}
