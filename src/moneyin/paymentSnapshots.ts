/** What a payment snapshot means for us, whichever path brought it (webhook, browser callback,
 * sweep). A capture on one of our orders marks it paid; on a top-up it credits the wallet; on
 * anything else (not ours, a cancelled or expired order, or a second capture on an order or top-up
 * another payment already charged) it is refunded, never paid out. A capture whose amount is not the
 * order's customer share goes to a human: its payout waits in `review`, the order is held
 * (`capture_mismatch`, not paid, until ops decide: captureMismatch.ts) and finance sees an
 * `amount-mismatch` exception. */
import type { Tx } from '../db/pool';
import { istDateOf } from '../domain/calendar';
import type { Route } from '../domain/routing';
import { logger } from '../logger';
import { raiseEventException } from '../recon/eventExceptions';
import { draft } from '../recon/reconcile';
import type { AfterCommit } from './afterCommit';
import type { MoneyInDeps } from './deps';
import { CAPTURE_MISMATCH, holdOrderOnCapture, isCharged } from './captureMismatch';
import { markPaid, startPayoutAfterCommit, type MarkPaidResult, type PaidVia } from './markPaid';
import { followEarlySplitHints } from './splitTransfers';
import { upsertPaymentParams, upsertPaymentSql } from './payments';
import { insertRefundRequest, requestRefundAfterCommit, type RefundReason } from './refunds';
import { creditTopup } from './topups';
import { followPaymentRefunds } from './outsideRefunds';
import type { PaymentEntity } from './webhookEnvelope';

type Owner =
  | { kind: 'order'; orderId: string; status: string; customerSharePaise: number; paidPaymentId: string | null }
  | { kind: 'topup'; topupId: string }
  | { kind: 'none' };

interface OwnerRow { order_id: string | null; status: string | null; customer_share_paise: number | null; paid_payment_id: string | null; topup_id: string | null }

/** Records the snapshot and finds whose gateway order it is, in one statement. The order row is
 * locked: a cancellation or another payment's capture racing this one either commits first (we
 * refund) or waits for us. */
async function recordPaymentOfOwner(tx: Tx, payment: PaymentEntity, capturedBySec: number | null): Promise<Owner> {
  // $2 is the payment's gateway order id (null: nobody's; `= NULL` matches no row).
  const { rows } = await tx.query<OwnerRow>(
    `WITH owner_order AS (
       SELECT id, status, customer_share_paise, paid_payment_id FROM orders WHERE gateway_order_id = $2 FOR UPDATE),
     owner_topup AS (
       SELECT id FROM wallet_topups WHERE gateway_order_id = $2 AND NOT EXISTS (SELECT 1 FROM owner_order)),
     recorded AS (${upsertPaymentSql('(SELECT id FROM owner_order)', '(SELECT id FROM owner_topup)')})
     SELECT o.id AS order_id, o.status, o.customer_share_paise, o.paid_payment_id, t.id AS topup_id
       FROM (VALUES (1)) AS one (n) LEFT JOIN owner_order o ON true LEFT JOIN owner_topup t ON true`,
    upsertPaymentParams(payment, capturedBySec),
  );
  const row = rows[0]!;
  if (row.order_id !== null) return { kind: 'order', orderId: row.order_id, status: row.status!, customerSharePaise: row.customer_share_paise!, paidPaymentId: row.paid_payment_id };
  if (row.topup_id !== null) return { kind: 'topup', topupId: row.topup_id };
  return { kind: 'none' };
}

export type SnapshotDeps = Pick<MoneyInDeps, 'db' | 'gateway' | 'payoutStarter' | 'config'>;

/** `capturedBySec`: the capture evidence — a webhook's event time (for payment.captured and
 * order.paid, the capture). A fetched snapshot (callback, sweep) has none: Razorpay's payment carries
 * only `created_at`, when the customer started paying, which a late authorisation or a delayed
 * capture may precede by days; so it is dated by our sighting (`null`: now), never by its creation. */
export async function applyPaymentSnapshot(tx: Tx, payment: PaymentEntity, via: PaidVia, deps: SnapshotDeps, capturedBySec: number | null): Promise<AfterCommit[]> {
  const owner = await recordPaymentOfOwner(tx, payment, capturedBySec);
  if (payment.status === 'failed') {
    // Only a pending order fails; a paid one stays paid (the failure snapshot may be stale).
    if (owner.kind === 'order') await tx.query(`UPDATE orders SET status = 'failed', updated_at = now() WHERE id = $1 AND status = 'pending'`, [owner.orderId]);
    return [];
  }
  // Captured, then refunded: a late authorisation Razorpay refunds by itself was never captured.
  if (payment.status === 'refunded') {
    if (payment.captured !== true) return [];
    // A capture we never heard of, refunded since (from the Dashboard: its webhooks lost, or answered
    // and forgotten by a restored database): the customer paid, so the order is paid as by the
    // capture. Its payout's capture check finds the refund and holds it (unless a restore forgot a
    // transfer, which the payout asks for first); the refund is recorded by the once-more look.
    if (owner.kind === 'order' && (owner.status === 'pending' || owner.status === 'failed')) return applyCapture(tx, payment, owner, via, deps, capturedBySec);
    return refundsWeWouldHaveAsked(tx, payment, owner, deps);
  }
  if (payment.status !== 'captured') return []; // authorized: recorded; nothing is payable before capture
  return applyCapture(tx, payment, owner, via, deps, capturedBySec);
}

async function applyCapture(tx: Tx, payment: PaymentEntity, owner: Owner, via: PaidVia, deps: SnapshotDeps, capturedBySec: number | null): Promise<AfterCommit[]> {
  switch (owner.kind) {
    case 'topup': {
      const credit = await creditTopup(tx, owner.topupId, payment.id, payment.amount);
      return credit === 'credited_by_another_payment' ? refundCapture(tx, payment, null, 'duplicate_capture', deps) : [];
    }
    case 'none':
      return refundCapture(tx, payment, null, 'orphan_capture', deps);
    case 'order': {
      // An expired order is one the system cancelled (unpaid past the late-authorisation window).
      if (owner.status === 'cancelled' || owner.status === 'expired') return refundCapture(tx, payment, owner.orderId, 'order_cancelled', deps);
      // A second payment on the same gateway order (e.g. a failed one the bank authorised late)
      // charged the customer twice: refund it, the order stays charged by the first (paid, or held
      // on it). (A paid order without a paying payment id has no capture to compare with: never
      // refund on a guess.)
      if (isCharged(owner.status) && owner.paidPaymentId && owner.paidPaymentId !== payment.id) return refundCapture(tx, payment, owner.orderId, 'duplicate_capture', deps);
      if (payment.amount !== owner.customerSharePaise) return paidForReview(tx, payment, owner, via, deps, capturedBySec);
      const result = await markPaid(tx, owner.orderId, { via, paymentId: payment.id });
      return afterPaid(tx, owner.orderId, result, deps);
    }
  }
}

/** A refunded payment we would have refunded ourselves (a capture on a cancelled or expired order,
 * on nobody's order, or a second one on a paid order) whose request our rows do not hold: a database
 * restored to before the request forgot it. The request is written again (its id, the receipt, is
 * the payment's and the reason's, so it is the same one) and asked again: Razorpay answers
 * "duplicate receipt" and the refund is found by it, never made twice. Never a reason to pay.
 * The payment that keeps its order paid, refunded in full: its refunds that are not ours are
 * recorded as made outside the app (their webhooks may be lost, or came while the order was unpaid). */
async function refundsWeWouldHaveAsked(tx: Tx, payment: PaymentEntity, owner: Owner, deps: SnapshotDeps): Promise<AfterCommit[]> {
  if (owner.kind === 'none') return refundCapture(tx, payment, null, 'orphan_capture', deps);
  if (owner.kind !== 'order') return [];
  if (owner.status === 'cancelled' || owner.status === 'expired') return refundCapture(tx, payment, owner.orderId, 'order_cancelled', deps);
  if (isCharged(owner.status) && owner.paidPaymentId && owner.paidPaymentId !== payment.id) return refundCapture(tx, payment, owner.orderId, 'duplicate_capture', deps);
  if (isCharged(owner.status) && owner.paidPaymentId === payment.id) return [followPaymentRefunds(payment.id, { db: deps.db, gateway: deps.gateway, attemptCap: deps.config.PAYOUT_ATTEMPT_CAP })];
  return [];
}

export const AMOUNT_MISMATCH = 'AMOUNT_MISMATCH';

/** The customer was charged, so the order leaves `pending` (it must not expire and give the subsidy
 * back), but the vendor is never paid on a capture we cannot explain: a direct-transfer payout is
 * created in `review` (code AMOUNT_MISMATCH) and waits for ops, and the order is held
 * (`capture_mismatch`) rather than paid until they decide, so no reader counts it paid or owed.
 * Finance gets an `amount-mismatch`. Other routes have no payout to decide on: their order is paid,
 * as before, and the exception says to check what the vendor is owed. */
async function paidForReview(tx: Tx, payment: PaymentEntity, owner: Extract<Owner, { kind: 'order' }>, via: PaidVia, deps: SnapshotDeps, capturedBySec: number | null): Promise<AfterCommit[]> {
  const result = await markPaid(tx, owner.orderId, { via, paymentId: payment.id, reviewCode: AMOUNT_MISMATCH });
  if (!result.transitioned) return []; // a replay: the transition that paid the order raised the exception with it
  if (result.route.kind === 'direct_transfer') {
    await holdOrderOnCapture(tx, owner.orderId, owner.status, `captured ${payment.amount} paise by ${payment.id} for a customer share of ${owner.customerSharePaise}: held until ops decide on the payout (${AMOUNT_MISMATCH})`);
  }
  const exception = draft('amount-mismatch', 'mismatched', `${payment.id}|customer-share`, istDateOf(capturedBySec === null ? new Date() : new Date(capturedBySec * 1000)), {
    entityId: payment.id, orderId: owner.orderId, expectedPaise: owner.customerSharePaise, actualPaise: payment.amount,
    details: { paymentId: payment.id, gatewayOrderId: payment.order_id, code: AMOUNT_MISMATCH, payoutId: result.payoutId, route: result.route.kind },
  });
  await raiseEventException(tx, { ...exception, nextAction: mismatchAction(payment.amount, owner.customerSharePaise, result.route.kind) }, `capture:${payment.id}`);
  logger.error({ orderId: owner.orderId, paymentId: payment.id, capturedPaise: payment.amount, expectedPaise: owner.customerSharePaise, route: result.route.kind },
    `captured amount differs from the customer share: ${result.route.kind === 'direct_transfer' ? `order ${CAPTURE_MISMATCH} and payout held for review` : 'order paid by another route'}, recon exception raised`);
  return afterPaid(tx, owner.orderId, result, deps);
}

/** After the capture paid the order: its payout's start, or for a Route split the transfer hints
 * that arrived before the capture (splitTransfers.ts). */
async function afterPaid(tx: Tx, orderId: string, result: MarkPaidResult, deps: SnapshotDeps): Promise<AfterCommit[]> {
  const early = result.transitioned && result.route.kind === 'split' ? await followEarlySplitHints(tx, orderId, deps) : [];
  return [...startPayoutAfterCommit(orderId, result, deps.payoutStarter, deps.db), ...early];
}

function mismatchAction(capturedPaise: number, sharePaise: number, route: Route['kind']): string {
  const held = route === 'direct_transfer'
    ? `The vendor's payout waits in review (${AMOUNT_MISMATCH}) and the order is held (${CAPTURE_MISMATCH}), not paid: retry the payout, pay it offline or cancel it once explained; the decision makes the order paid.`
    : 'No transfer of ours waits on it: check what the vendor is owed for this order before paying it by any route.';
  return `The customer was charged ${capturedPaise} paise for a customer share of ${sharePaise}: find why (the gateway order, a partial capture), refund or collect the difference. ${held}`;
}

async function refundCapture(tx: Tx, payment: PaymentEntity, orderId: string | null, reason: RefundReason, deps: SnapshotDeps): Promise<AfterCommit[]> {
  const refundId = await insertRefundRequest(tx, { paymentId: payment.id, orderId, amountPaise: payment.amount, reason });
  if (refundId) logger.warn({ paymentId: payment.id, gatewayOrderId: payment.order_id, refundId, reason }, 'captured payment will be refunded');
  return requestRefundAfterCommit(refundId, deps);
}
