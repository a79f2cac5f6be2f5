/** Reversals of our transfers (issue 19 item 3). This module owns `transfer_reversals`: one row per
 * Razorpay reversal of a payout's direct transfer or of a Route split (money in's splitTransfers.ts
 * records those through `recordTransferReversals`), from a fetch of the transfer and its reversals;
 * a transfer.reversed webhook is only the hint that makes us fetch.
 *
 * A payout whose transfer is reversed after it was sent or settled is owed again: it is parked with
 * TRANSFER_REVERSED (or TRANSFER_PARTIALLY_REVERSED) through the state machine, its key replaced so a
 * retry is a new transfer (the provider would answer the old key with the reversed one), and a human
 * decides; nothing is sent by itself. Policy for a partial reversal: the whole payout waits, the
 * reversed amount in its evidence, and the decisions that would pay the whole net again (retry, pay
 * offline) are refused (humanQueue.ts). */
import { payoutLogFields, type PayoutView } from '../contracts/payout';
import { inTransaction, type Db, type Tx } from '../db/pool';
import type { Gateway, RzpReversal, RzpTransfer } from '../gateway/types';
import { oweTransferReversals } from '../ledger/payoutDischarges';
import { logger } from '../logger';
import { freshKeyColumns, insertAttempt, lockPayout, transition } from './repository';

/** The payout's `last_code` once its transfer is reversed wholly, or in part (payouts/reasons.ts). */
export const TRANSFER_REVERSED = 'TRANSFER_REVERSED';
export const TRANSFER_PARTIALLY_REVERSED = 'TRANSFER_PARTIALLY_REVERSED';

export type ReversalMadeBy = 'outside' | 'outside_refund' | 'our_refund';

/** A provider reversal and who made it (classifyReversals). */
export interface ClassifiedReversal { reversal: RzpReversal; madeBy: ReversalMadeBy }

/** Pure: whether the provider's transfer shows any reversal (the hint may be stale or forged). */
export const isReversed = (t: Pick<RzpTransfer, 'status' | 'amount_reversed'>): boolean => t.amount_reversed > 0 || t.status === 'reversed';

/** Pure: the payout's code for a transfer that shows reversals. */
export function reversalCode(t: Pick<RzpTransfer, 'status' | 'amount' | 'amount_reversed'>): string {
  return t.status === 'reversed' || t.amount_reversed >= t.amount ? TRANSFER_REVERSED : TRANSFER_PARTIALLY_REVERSED;
}

/** Pure: what a reversal owes the vendor again. One of our own refunds reversed only what the vendor
 * was not owed (moneyin/splitReversal.ts: a cancelled order, or a second split it keeps); a reversal
 * from outside, or by a refund made outside the app (whose clawback line nets it), takes back money
 * the vendor was owed. */
export function owedAgainPaise(r: ClassifiedReversal): number {
  return r.madeBy === 'our_refund' ? 0 : r.reversal.amount;
}

/** The transfer's reversals, asked only when the transfer shows one (no transaction open). */
export async function reversalsOf(gateway: Pick<Gateway, 'listTransferReversals'>, transfer: RzpTransfer): Promise<RzpReversal[]> {
  return isReversed(transfer) ? gateway.listTransferReversals(transfer.id) : [];
}

/** Who made each reversal: no refund → outside; a refund of ours (by its gateway id, else its receipt
 * as Razorpay answers a fetch of it, for one whose answer we lost) → our_refund; else outside_refund.
 * Reads and provider fetches, outside any transaction; throws when the provider cannot be asked. */
export async function classifyReversals(db: Db, gateway: Pick<Gateway, 'fetchRefund'>, reversals: readonly RzpReversal[]): Promise<ClassifiedReversal[]> {
  const out: ClassifiedReversal[] = [];
  for (const reversal of reversals) {
    const refundId = reversal.customer_refund_id;
    if (!refundId) {
      out.push({ reversal, madeBy: 'outside' });
      continue;
    }
    const known = await db.query('SELECT 1 FROM refunds WHERE gateway_refund_id = $1', [refundId]);
    if (known.rowCount) {
      out.push({ reversal, madeBy: 'our_refund' });
      continue;
    }
    const refund = await gateway.fetchRefund(refundId);
    const ours = refund.receipt ? await db.query('SELECT 1 FROM refunds WHERE id = $1', [refund.receipt]) : { rowCount: 0 };
    out.push({ reversal, madeBy: ours.rowCount ? 'our_refund' : 'outside_refund' });
  }
  return out;
}

/** Whose transfer it was: an order's payout, a batch's payout (it pays no single order), the Route
 * split of an order, or neither — the split Razorpay ran on a cancelled order paid anyway, which our
 * own refund took back (moneyin/neverPayableReversals.ts). */
export type ReversalOwner = { vendorId: string } & (
  | { orderId: string; payoutId: string }
  | { batchId: string; payoutId: string }
  | { orderId: string; splitOrderId: string }
  | { orderId: string; neverPayable: true });

/** The payout's owner for its reversals: its batch, or its order. */
export const payoutReversalOwner = (payout: Pick<PayoutView, 'id' | 'orderId' | 'batchId' | 'vendorId'>): ReversalOwner =>
  payout.batchId ? { batchId: payout.batchId, payoutId: payout.id, vendorId: payout.vendorId } : { orderId: payout.orderId, payoutId: payout.id, vendorId: payout.vendorId };

export interface RecordedReversal { id: string; amountPaise: number; owedPaise: number }

/** Inserts the reversals not recorded yet (by Razorpay's id) and returns those; a second webhook, a
 * sweep or a replay adds nothing. */
export async function recordTransferReversals(tx: Tx, input: {
  owner: ReversalOwner; transfer: RzpTransfer; reversals: readonly ClassifiedReversal[]; source: string;
  /** False: the vendor is owed nothing more for these (e.g. a split already owed offline whole). */
  owes?: boolean;
}): Promise<RecordedReversal[]> {
  const { owner, transfer } = input;
  const added: RecordedReversal[] = [];
  for (const r of input.reversals) {
    if (r.reversal.transfer_id !== transfer.id) continue;
    const owed = input.owes === false ? 0 : owedAgainPaise(r);
    const { rowCount } = await tx.query(
      `INSERT INTO transfer_reversals (id, transfer_id, payout_id, split_order_id, order_id, batch_id, vendor_id, amount_paise, transfer_amount_paise,
         customer_refund_id, made_by, owed_paise, reversed_at, evidence)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, to_timestamp($13), $14) ON CONFLICT (id) DO NOTHING`,
      [r.reversal.id, transfer.id, 'payoutId' in owner ? owner.payoutId : null, 'splitOrderId' in owner ? owner.splitOrderId : null,
        'orderId' in owner ? owner.orderId : null, 'batchId' in owner ? owner.batchId : null, owner.vendorId,
        r.reversal.amount, transfer.amount, r.reversal.customer_refund_id, r.madeBy, owed, r.reversal.created_at,
        JSON.stringify({ source: input.source, reversal: r.reversal, transfer })],
    );
    if (rowCount) added.push({ id: r.reversal.id, amountPaise: r.reversal.amount, owedPaise: owed });
  }
  if (added.length > 0 && 'payoutId' in owner && owner.payoutId) await oweTransferReversals(tx, owner.payoutId, transfer.id);
  if (added.length > 0) {
    logger.warn({ ...('batchId' in owner ? { batchId: owner.batchId } : { orderId: owner.orderId }), transferId: transfer.id, transferStatus: transfer.status, reversals: added, source: input.source }, 'transfer reversal recorded');
  }
  return added;
}

/** Whether this evidence parks the payout: it holds the reversed transfer (or is `processing`, and
 * the resolver found this transfer under its note), and the code says more than the row does. */
function parksPayout(payout: PayoutView, transfer: RzpTransfer, fromResolver: boolean): boolean {
  if (payout.status === 'processing') return fromResolver;
  if (payout.providerTransferId !== transfer.id) return false;
  if (payout.status === 'accepted' || payout.status === 'settled') return true;
  return payout.status === 'parked' && payout.lastCode === TRANSFER_PARTIALLY_REVERSED && reversalCode(transfer) === TRANSFER_REVERSED;
}

/** Records a payout's transfer reversals, under its row lock (held by the caller), and parks the
 * payout when it holds that transfer. A reversal of a transfer the payout does not hold (an older
 * attempt's, or one carrying its note that it never took) is recorded only. Returns whether the
 * payout moved. */
export async function recordPayoutReversal(tx: Tx, payout: PayoutView, input: {
  transfer: RzpTransfer; reversals: readonly ClassifiedReversal[]; source: string; runId?: string | null; fromResolver?: boolean;
}): Promise<boolean> {
  const { transfer } = input;
  await recordTransferReversals(tx, { owner: payoutReversalOwner(payout), transfer, reversals: input.reversals, source: input.source });
  if (!isReversed(transfer) || !parksPayout(payout, transfer, input.fromResolver ?? false)) return false;
  const code = reversalCode(transfer);
  const reversedPaise = transfer.amount_reversed || transfer.amount;
  await insertAttempt(tx, {
    payoutId: payout.id, attemptNo: payout.attempts, idempotencyKey: payout.idempotencyKey, runId: input.runId ?? null,
    outcome: 'reversed', providerCode: code, providerTransferId: transfer.id,
    raw: { source: input.source, reversedPaise, keptByVendorPaise: transfer.amount - reversedPaise, transfer, reversals: input.reversals.map((r) => r.reversal) },
  });
  // A fresh key: a retry is a new transfer (the provider answers the old key with the reversed one).
  const moved = await transition(tx, payout, { type: 'transfer_reversed' }, {
    last_code: code, provider_transfer_id: transfer.id, next_attempt_at: null, settled_at: null, ...freshKeyColumns(),
  });
  if (moved) logger.error({ ...payoutLogFields(payout), from: payout.status, transferId: transfer.id, reversedPaise, code }, 'payout transfer reversed: the vendor is owed again; parked for ops');
  return moved !== null;
}

/** After a transfer.reversed hint for a payout: fetch the transfer and its reversals (no transaction
 * open), then record them under the payout's row lock. Returns the payout after, or null when the
 * fetched transfer shows no reversal (a stale or forged hint) or is no payout's. */
export async function followPayoutReversal(deps: { db: Db; gateway: Gateway; attemptCap: number }, input: { payoutId: string; transferId: string; source: string }): Promise<{ payout: PayoutView; moved: boolean } | null> {
  const transfer = await deps.gateway.fetchTransfer(input.transferId);
  if (!isReversed(transfer)) return null;
  const reversals = await classifyReversals(deps.db, deps.gateway, await deps.gateway.listTransferReversals(transfer.id));
  return inTransaction(deps.db, async (tx) => {
    const payout = await lockPayout(tx, input.payoutId, deps.attemptCap);
    const moved = await recordPayoutReversal(tx, payout, { transfer, reversals, source: input.source });
    return { payout: await lockPayout(tx, payout.id, deps.attemptCap), moved };
  });
}
