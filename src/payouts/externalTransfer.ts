/** "Mark paid externally" with the provider's transfer (issue 19 item 6): when ops find in the
 * Razorpay dashboard the transfer a lost request made, the payout takes that transfer as its own, so
 * settlement and recon follow it like any other. The transfer is fetched from the provider before
 * the decision's transaction (no transaction is open during a gateway call) and judged under the
 * payout's row lock: it must carry the payout's note, amount and linked account, and not be failed
 * or reversed. A transfer already recorded on another payout is refused by the decision (and by the
 * UNIQUE constraint on payouts.provider_transfer_id behind it). */
import { AppError } from '../appError';
import type { PayoutView } from '../contracts/payout';
import { ProviderContractError } from '../gateway/classify';
import { GatewayCallError, type Gateway, type RzpTransfer } from '../gateway/types';
import { logger } from '../logger';
import { transactionIdOf } from './resolution';

/** Why a transfer cannot be the payout's: a code the caller can branch on, words, and what was compared. */
export interface TransferRefusal {
  httpStatus: 409 | 422;
  code: 'transfer_note_mismatch' | 'transfer_amount_mismatch' | 'transfer_recipient_mismatch' | 'transfer_not_paid' | 'transfer_already_recorded';
  message: string;
  details: Record<string, unknown>;
}

/** Statuses that did not pay the vendor (in full). */
const NOT_PAID: ReadonlySet<RzpTransfer['status']> = new Set(['failed', 'reversed', 'partially_reversed']);

/** The provider's transfer, or an AppError: 422 when the provider has no such transfer for our keys,
 * 502 when it could not be asked (nothing is decided on a guess). */
export async function fetchTransferEvidence(gateway: Gateway, transferId: string): Promise<RzpTransfer> {
  try {
    return await gateway.fetchTransfer(transferId);
  } catch (err) {
    if (err instanceof GatewayCallError && err.outcome.type === 'rejected' && (err.outcome.httpStatus === 400 || err.outcome.httpStatus === 404)) {
      throw new AppError(422, 'transfer_not_found', `Razorpay has no transfer ${transferId} for this account (${err.outcome.error.code}: ${err.outcome.error.description})`, { transferId });
    }
    if (!(err instanceof GatewayCallError) && !(err instanceof ProviderContractError)) throw err;
    logger.error({ err, transferId }, 'could not fetch the transfer ops named for a mark-paid decision');
    throw new AppError(502, 'gateway_unavailable', `the transfer ${transferId} could not be fetched from Razorpay now; nothing was changed, try again`, { transferId });
  }
}

/** Pure: whether `transfer` is the one that pays `payout`; null when it is. */
export function judgeTransferEvidence(payout: Pick<PayoutView, 'id' | 'amountPaise' | 'linkedAccountId'>, transfer: RzpTransfer): TransferRefusal | null {
  const seen = { transferId: transfer.id, transactionId: transactionIdOf(transfer), amountPaise: transfer.amount, currency: transfer.currency, recipient: transfer.recipient, status: transfer.status };
  const expected = { transactionId: payout.id, amountPaise: payout.amountPaise, currency: 'INR', recipient: payout.linkedAccountId };
  const refuse = (code: TransferRefusal['code'], message: string): TransferRefusal => ({ httpStatus: 422, code, message, details: { expected, transfer: seen } });
  if (seen.transactionId !== payout.id) {
    return refuse('transfer_note_mismatch', `transfer ${transfer.id} carries transaction_id ${seen.transactionId ?? '(none)'} in its notes, not this payout's id ${payout.id}`);
  }
  if (transfer.amount !== payout.amountPaise || transfer.currency !== 'INR') {
    return refuse('transfer_amount_mismatch', `transfer ${transfer.id} is ${transfer.amount} paise (${transfer.currency}); this payout is ${payout.amountPaise} paise (INR)`);
  }
  if (transfer.recipient !== payout.linkedAccountId) {
    return refuse('transfer_recipient_mismatch', `transfer ${transfer.id} went to ${transfer.recipient}; this payout pays ${payout.linkedAccountId}`);
  }
  if (NOT_PAID.has(transfer.status) || transfer.amount_reversed > 0) {
    return refuse('transfer_not_paid', `transfer ${transfer.id} is ${transfer.status}${transfer.amount_reversed > 0 ? ` (${transfer.amount_reversed} paise reversed)` : ''}: it does not pay the vendor`);
  }
  return null;
}

/** The refusal for a transfer some other payout already holds. */
export function alreadyRecordedRefusal(transferId: string, holderOrderId: string): TransferRefusal {
  return {
    httpStatus: 409, code: 'transfer_already_recorded',
    message: `transfer ${transferId} is already recorded as the payout of order ${holderOrderId}`,
    details: { transferId, orderId: holderOrderId },
  };
}

/** The payout's columns once it takes the transfer: a processed transfer settles it at the provider's
 * processing time; a created or pending one leaves it accepted, so the run's settlement wait (the
 * webhook, or its poll) settles it as for any accepted transfer. */
export function transferColumns(transfer: RzpTransfer): { awaitingSettlement: boolean; columns: Record<string, unknown> } {
  const processed = transfer.status === 'processed';
  const settledAt = processed ? new Date((transfer.processed_at ?? Math.floor(Date.now() / 1000)) * 1000) : null;
  return { awaitingSettlement: !processed, columns: { provider_transfer_id: transfer.id, settled_at: settledAt } };
}
