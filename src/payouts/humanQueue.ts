/** Human decisions on a parked or review payout: retry (a fresh budget of attempts), mark paid
 * externally (sends nothing: records the bank or provider reference, or takes the provider transfer
 * ops found as the payout's own — fetched by the caller before this transaction, judged here under
 * the row lock, see externalTransfer.ts), pay offline (finance pays it by hand: it joins the open
 * offline ledger and no transfer is ever sent; also from pending or failed, and never while a
 * transfer of ours may pay it, see liveTransferCheck.ts), cancel. Each commits the status change and
 * its review_actions row together; the caller signals the workflow after the commit. A decision on
 * the payout of an order held on its capture (`capture_mismatch`, moneyin/captureMismatch.ts) is the
 * decision on that capture: the order becomes paid in the same transaction. A cancel takes back the
 * clawbacks of the orders the payout paid (it paid the vendor nothing), and waits while one is netted
 * into a settlement line the bank may be paying (settlement/clawbacksOfCancelledPayout.ts). */
import { AppError } from '../appError';
import type { OpsAction, PayoutStatus, PayoutView } from '../contracts/payout';
import { inTransaction, type Db, type Tx } from '../db/pool';
import type { Gateway, RzpTransfer } from '../gateway/types';
import { recordPayoutInLedger } from '../ledger/payoutDischarges';
import { lockHeldOrder, releaseHeldOrder } from '../moneyin/captureMismatch';
import { clawbackInOpenLineRefusal, clawbacksInOpenLines, takeBackClawbacks, type ClawbackInOpenLine } from '../settlement/clawbacksOfCancelledPayout';
import { alreadyRecordedRefusal, judgeTransferEvidence, transferColumns, type TransferRefusal } from './externalTransfer';
import { checkPayByHand, listingNeededFor, listTransfersCarryingNote, payByHandRefused, type PayByHandRefusal, type ProviderListing } from './liveTransferCheck';
import { KEY_EXPIRED } from './outcomes';
import { findPayoutByOrder, freshKeyColumns, lockPayout, transition } from './repository';
import { awaitsHuman, statusesAllowing, type PayoutEvent } from './stateMachine';
import { TRANSFER_PARTIALLY_REVERSED } from './transferReversals';

export interface OpsDecisionInput {
  orderId: string;
  action: OpsAction;
  actor: string;
  reason: string;
  /** For mark_paid_externally (this, `transfer`, or both): the bank or provider reference of the payment made. */
  reference?: string;
  /** For mark_paid_externally: the provider transfer that paid it, as the provider answered a fetch just now. */
  transfer?: RzpTransfer;
  /** For pay_offline: the transfers carrying the payout's note, as the provider listed them just now. */
  listing?: ProviderListing;
}

export type OpsDecisionResult =
  /** `decidedFrom`: the status the decision moved the payout from. */
  | { kind: 'applied'; payout: PayoutView; decidedFrom: PayoutStatus }
  /** The same decision was made before and still stands (a repeated click, a retried request). */
  | { kind: 'already_in_effect'; payout: PayoutView }
  | { kind: 'not_found' }
  | { kind: 'not_awaiting_decision'; payout: PayoutView; allowedFrom: PayoutStatus[] }
  /** The transfer named is not this payout's (note, amount, account, status), or another payout holds it. */
  | { kind: 'transfer_refused'; payout: PayoutView; refusal: TransferRefusal }
  /** Retry or pay offline on a payout whose transfer was reversed in part: either would pay the
   * whole net again while the vendor keeps the rest of that transfer. */
  | { kind: 'partly_reversed'; payout: PayoutView }
  /** Cancel while a clawback of the orders it paid is netted into a settlement line the bank has not
   * answered yet: the bank may pay that line as its file says. */
  | { kind: 'clawback_in_open_line'; payout: PayoutView; lines: ClawbackInOpenLine[] }
  /** Pay offline while a transfer of ours may pay it, or without a listing that covers its sends. */
  | PayByHandRefusal;

const EVENT_OF: Record<OpsAction, PayoutEvent> = {
  retry: { type: 'ops_retry' },
  mark_paid_externally: { type: 'ops_mark_paid_externally' },
  cancel: { type: 'ops_cancel' },
  pay_offline: { type: 'ops_pay_offline' },
};

/** What review_actions.reference holds for a decision: the transfer id when there is one. */
const auditedReference = (input: OpsDecisionInput): string | null => input.transfer?.id ?? input.reference ?? null;

/** The latest decision on this payout is this one (same reference or transfer for mark paid) and its
 * outcome still holds: a retry while the payout is being retried, a cancel on a cancelled payout… */
async function lastDecisionIs(tx: Tx, payout: PayoutView, input: OpsDecisionInput): Promise<boolean> {
  const { rows } = await tx.query<{ action: string; reference: string | null }>(
    'SELECT action, reference FROM review_actions WHERE payout_id = $1 ORDER BY id DESC LIMIT 1', [payout.id]);
  const last = rows[0];
  if (!last || last.action !== input.action) return false;
  if (input.action === 'mark_paid_externally') {
    if (last.reference !== auditedReference(input)) return false;
    // Paid by a transfer still pending at the provider, the payout is accepted until it settles.
    return input.transfer ? payout.providerTransferId === input.transfer.id && ['accepted', 'settled'].includes(payout.status) : payout.status === 'settled';
  }
  const holds: Record<Exclude<OpsAction, 'mark_paid_externally'>, readonly string[]> = {
    retry: ['pending', 'processing', 'accepted', 'failed', 'settled'],
    cancel: ['cancelled'],
    pay_offline: ['offline'],
  };
  return holds[input.action].includes(payout.status);
}

/** Mark paid by a transfer: refused unless it is this payout's and no other payout holds it. */
async function refuseTransfer(tx: Tx, payout: PayoutView, transfer: RzpTransfer): Promise<TransferRefusal | null> {
  const mismatch = judgeTransferEvidence(payout, transfer);
  if (mismatch) return mismatch;
  const { rows } = await tx.query<{ order_id: string }>(
    `SELECT subject_id AS order_id FROM payouts WHERE provider_transfer_id = $1 AND id <> $2
     UNION ALL SELECT order_id FROM split_transfers WHERE provider_transfer_id = $1 LIMIT 1`, [transfer.id, payout.id]);
  return rows[0] ? alreadyRecordedRefusal(transfer.id, rows[0].order_id) : null;
}

/** The event and the columns a decision writes. */
function decisionChange(input: OpsDecisionInput, payout: PayoutView, attemptCap: number): { event: PayoutEvent; set: Record<string, unknown> } {
  switch (input.action) {
    case 'retry':
      // A retry after IDEMPOTENCY_KEY_EXPIRED: a human has checked the provider holds nothing under
      // the old key, so the next try goes with a fresh one.
      return { event: EVENT_OF.retry, set: { attempt_limit: payout.attempts + attemptCap, next_attempt_at: null, ...(payout.lastCode === KEY_EXPIRED ? freshKeyColumns() : {}) } };
    case 'mark_paid_externally': {
      if (!input.transfer) return { event: EVENT_OF.mark_paid_externally, set: { external_reference: input.reference, settled_at: new Date() } };
      const { awaitingSettlement, columns } = transferColumns(input.transfer);
      return { event: { type: 'ops_mark_paid_externally', transferPending: awaitingSettlement }, set: { ...columns, external_reference: input.reference ?? null } };
    }
    default:
      return { event: EVENT_OF[input.action], set: {} };
  }
}

export async function applyOpsDecision(db: Db, input: OpsDecisionInput, attemptCap: number): Promise<OpsDecisionResult> {
  if (input.action === 'mark_paid_externally' && !input.reference && !input.transfer) throw new Error('mark_paid_externally needs a reference or a transfer');
  if (input.action !== 'mark_paid_externally' && input.transfer) throw new Error(`${input.action} takes no transfer`);
  if (input.action !== 'pay_offline' && input.listing) throw new Error(`${input.action} takes no provider listing`);
  return inTransaction(db, async (tx) => {
    // The order before the payout, as the claim takes them.
    const orderHeld = await lockHeldOrder(tx, input.orderId);
    const found = await findPayoutByOrder(tx, input.orderId, attemptCap);
    if (!found) return { kind: 'not_found' };
    const payout = await lockPayout(tx, found.id, attemptCap);
    if ((input.action === 'retry' || input.action === 'pay_offline') && payout.status === 'parked' && payout.lastCode === TRANSFER_PARTIALLY_REVERSED) {
      return { kind: 'partly_reversed', payout };
    }
    if (input.transfer && awaitsHuman(payout.status)) {
      const refusal = await refuseTransfer(tx, payout, input.transfer);
      if (refusal) return { kind: 'transfer_refused', payout, refusal };
    }
    const { event, set } = decisionChange(input, payout, attemptCap);
    if (input.action === 'pay_offline' && statusesAllowing(event).includes(payout.status)) {
      // Under the lock a claim also takes: once this commits, no claim takes the row.
      const check = await checkPayByHand(tx, payout, input.listing);
      if (check.kind !== 'clear') return check;
      Object.assign(set, check.set);
    }
    // A cancelled payout paid the vendor nothing, so no clawback stands; but one the bank may be
    // paying in a settlement line waits for the bank's answer (clawbacksOfCancelledPayout.ts).
    const takesBackClawbacks = input.action === 'cancel' && statusesAllowing(event).includes(payout.status) && payout.lastCode !== TRANSFER_PARTIALLY_REVERSED;
    if (takesBackClawbacks) {
      const frozen = await clawbacksInOpenLines(tx, payout);
      if (frozen.length > 0) return { kind: 'clawback_in_open_line', payout, lines: frozen };
    }
    if (!(await transition(tx, payout, event, set))) {
      return (await lastDecisionIs(tx, payout, input)) ? { kind: 'already_in_effect', payout } : { kind: 'not_awaiting_decision', payout, allowedFrom: statusesAllowing(event) };
    }
    if (takesBackClawbacks) await takeBackClawbacks(tx, payout, { actor: input.actor, reason: input.reason });
    await tx.query(
      'INSERT INTO review_actions (payout_id, actor, action, reason, reference) VALUES ($1, $2, $3, $4, $5)',
      [payout.id, input.actor, input.action, input.reason, auditedReference(input)],
    );
    if (orderHeld) await releaseHeldOrder(tx, input.orderId, input.actor, `ops ${input.action} on the payout: ${input.reason}`);
    // Again, now that the decision names its actor and the order is paid: a cancel's adjustment, a
    // held order's transfer.
    await recordPayoutInLedger(tx, payout.id);
    return { kind: 'applied', payout: await lockPayout(tx, payout.id, attemptCap), decidedFrom: payout.status };
  });
}

/** A decision as the ops surfaces take it. Pay offline on a payout whose key went out asks the
 * provider first, outside any transaction; a row that sent again before the lock is listed again. */
export async function decideOnPayout(db: Db, gateway: Gateway, input: OpsDecisionInput, attemptCap: number): Promise<OpsDecisionResult> {
  if (input.action !== 'pay_offline') return applyOpsDecision(db, input, attemptCap);
  const needed = await listingNeededFor(db, input.orderId);
  let listing = needed ? await listTransfersCarryingNote(gateway, needed.payoutId, needed.window) : undefined;
  for (let asked = 1; ; asked += 1) {
    const result = await applyOpsDecision(db, { ...input, listing }, attemptCap);
    if (result.kind !== 'provider_listing_needed' || asked === 3) return result;
    listing = await listTransfersCarryingNote(gateway, result.payoutId, result.window);
  }
}

export type DecisionNotTaken = Exclude<OpsDecisionResult, { kind: 'applied' | 'already_in_effect' }>;

/** What a one-payout surface (the ops API, the console) answers for a decision not taken. */
export function decisionNotTaken(orderId: string, result: DecisionNotTaken): AppError {
  switch (result.kind) {
    case 'not_found':
      return new AppError(404, 'payout_not_found', `no payout for order ${orderId}`);
    case 'not_awaiting_decision':
      return new AppError(409, 'payout_not_awaiting_decision', result.allowedFrom.join() === 'parked,review'
        ? `payout is ${result.payout.status}; only parked or review payouts take ops decisions`
        : `payout is ${result.payout.status}; this decision takes only ${result.allowedFrom.join(', ')} payouts`);
    case 'transfer_refused':
      return new AppError(result.refusal.httpStatus, result.refusal.code, result.refusal.message, result.refusal.details);
    case 'partly_reversed':
      return new AppError(409, 'transfer_partially_reversed', `part of the payout's transfer ${result.payout.providerTransferId} was reversed and the vendor keeps the rest: `
        + 'a retry or pay offline would pay the whole net again; pay the reversed amount by hand and mark paid externally with its reference, or cancel',
      { orderId, transferId: result.payout.providerTransferId });
    case 'clawback_in_open_line':
      return clawbackInOpenLineRefusal(orderId, result.lines);
    case 'provider_listing_needed':
    case 'live_transfer_exists':
    case 'unrecorded_transfer':
      return payByHandRefused(orderId, result);
  }
}
