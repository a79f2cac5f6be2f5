/** Refunds made outside the app (issue 19 item 4): a refund of the payment that keeps an order paid
 * (orders.paid_payment_id) that matches no refund of ours, e.g. one issued from the Razorpay
 * Dashboard. This module owns `outside_refunds` and what such a refund does to the vendor's money.
 *
 * A refund webhook is a hint (it may be forged, replayed or stale): inside its transaction only the
 * hint is kept (refundHints.ts); an after-commit step fetches the refund from Razorpay and records
 * what the fetch says in its own transaction, once per gateway refund id, under the payout's row lock:
 * - the payout has not sent (`pending`, `failed`, `parked`, or claimed with its request not yet past
 *   the send gate: `processing` with no `request_sent_at`, or `batched` in a batch still open): it
 *   moves to `review` with CUSTOMER_REFUNDED, so no claim takes it (a claim needs `pending`/`failed`)
 *   and a claim's gate, which takes this row lock too, finds the claim gone and sends nothing; a
 *   batched order leaves its batch, whose close (it takes the batch row FOR UPDATE, after us) sums
 *   the others;
 * - it has sent or settled (`processing`, `accepted`, `settled`), is `batched` in a closed batch (its
 *   fixed sum pays the order), the vendor is owed offline (`offline`, `rerouted`, an offline-ledger
 *   route), or the order paid by a Route split: the vendor's
 *   share of the refund is a negative offline-ledger line (route `refund_clawback`) and a recon
 *   exception `refund-outside-app` carries the amount;
 * - otherwise (`review`, `cancelled`, corporate_direct): the exception only, for a human.
 * A refund first seen failed moved no money and is not recorded. A second webhook or a replay finds the row and
 * changes nothing. If the fetch fails the hint stays and a worker reads it again after a backoff
 * (refundHintFollower.ts); until then a batch's close and a transfer's send gate hold the payout
 * (payouts/refundHolds.ts), and the refund, once read, is recorded as that hold. */
import { payoutLogFields, type PayoutStatus, type PayoutView } from '../contracts/payout';
import { inTransaction, type Db, type Tx } from '../db/pool';
import { istDateOf } from '../domain/calendar';
import type { Gateway, RzpRefund, RzpTransfer } from '../gateway/types';
import { forgetOfflineLines, oweOfflineLines } from '../ledger/offlineLines';
import { logger } from '../logger';
import { holdRefundedPayout, openBatchOfMember } from '../payouts/refundHolds';
import { lockPayout, markProviderMayKnow } from '../payouts/repository';
import { liveTransfersCarryingNote, RESOLVER_WINDOW_BEFORE_MS } from '../payouts/resolution';
import { nextStatus } from '../payouts/stateMachine';
import { raiseEventException } from '../recon/eventExceptions';
import { draft } from '../recon/reconcile';
import type { AfterCommit } from './afterCommit';
import { noteRefundHint, refundHintReadFailed, settleRefundHint } from './refundHints';
import { applyRefundSnapshot } from './refunds';

export type OutsideRefundAction = 'payout_held' | 'owed_back' | 'reported';

/** The vendor has been paid, is being paid (by its own transfer, or by a closed batch's fixed sum), or
 * is owed it offline: what it owes back is netted there. */
const PAID_OR_OWED: ReadonlySet<PayoutStatus> = new Set(['processing', 'accepted', 'settled', 'offline', 'rerouted', 'batched']);

/** What an outside refund does, from how the order pays its vendor and where its payout is.
 * `batchOpen`: for a batched order, whether its batch still takes and lets go of orders. */
export function outsideRefundAction(order: { payoutStatus: PayoutStatus | null; requestSent: boolean; corporateDirect: boolean; batchOpen?: boolean }): OutsideRefundAction {
  if (order.payoutStatus !== null) {
    // Nothing sent yet (a claim whose request has not passed the gate, or a batch still open, included: the hold stops it leaving).
    if (nextStatus(order.payoutStatus, { type: 'customer_refunded', requestSent: order.requestSent, batchOpen: order.batchOpen }) !== null) return 'payout_held';
    return PAID_OR_OWED.has(order.payoutStatus) ? 'owed_back' : 'reported';
  }
  // No payout: a Route split (paid at capture) or an offline-ledger route; corporate_direct is the
  // employer's payment to the vendor, not ours to net.
  return order.corporateDirect ? 'reported' : 'owed_back';
}

/** After an attempt that did not pay the vendor (the caller released the payout, locked): a refund
 * recorded while that request was in flight (`processing`, sent) or accepted charged the vendor a
 * clawback on the word that the transfer would pay it. Nothing was paid: the clawback is taken back —
 * its line deleted, unless finance already froze it into a settlement line (then it stays, for a
 * human) — the refund is recorded as holding the payout, and the payout is held in review, as a
 * refund before the send would have left it. Returns whether it did. */
export async function holdIfRefundedWhileSending(tx: Tx, released: Pick<PayoutView, 'id' | 'orderId'>, attemptCap: number): Promise<boolean> {
  const { rows } = await tx.query<{ id: string }>(
    `UPDATE outside_refunds r SET action = 'payout_held', clawback_paise = NULL, updated_at = now()
      WHERE r.order_id = $2 AND r.payout_id = $1 AND r.action = 'owed_back' AND r.payout_status IN ('processing', 'accepted')
        AND NOT EXISTS (SELECT 1 FROM offline_ledger l JOIN settlement_line_members m ON m.ledger_id = l.id AND m.active WHERE l.outside_refund_id = r.id)
      RETURNING r.id`,
    [released.id, released.orderId],
  );
  if (rows.length === 0) return false;
  const refunds = rows.map((r) => r.id);
  const { rows: lines } = await tx.query<{ id: string }>('DELETE FROM offline_ledger WHERE outside_refund_id = ANY($1) RETURNING id', [refunds]);
  await forgetOfflineLines(tx, lines.map((l) => l.id)); // the ledger: the vendor owes nothing back
  const payout = await lockPayout(tx, released.id, attemptCap);
  await holdRefundedPayout(tx, payout, false);
  logger.warn({ ...payoutLogFields(payout), refunds, from: payout.status }, 'the transfer did not pay and the customer was refunded outside the app meanwhile: the clawback is taken back and the payout held');
  return true;
}

/** The vendor's share of a refund: its net in the proportion refunded, whole paise, rounded down
 * (in the vendor's favour: it never owes back more than its share). */
export function vendorShareOfRefund(vendorNetPaise: number, refundedPaise: number, capturedPaise: number): number {
  if (capturedPaise <= 0 || vendorNetPaise <= 0) return 0;
  const refunded = Math.min(refundedPaise, capturedPaise);
  return Number((BigInt(vendorNetPaise) * BigInt(refunded)) / BigInt(capturedPaise));
}

export interface OutsideRefundDeps {
  db: Db;
  gateway: Pick<Gateway, 'fetchRefund' | 'listPaymentRefunds' | 'listTransfers'>;
  attemptCap: number;
}

/** Webhook side, for a refund snapshot that matched none of ours: if its payment keeps an order paid,
 * the after-commit step that fetches it and acts. */
export async function followOutsideRefundAfterCommit(tx: Tx, hint: { id: string; payment_id: string }, deps: OutsideRefundDeps): Promise<AfterCommit[]> {
  const { rows } = await tx.query<{ id: string }>('SELECT id FROM orders WHERE paid_payment_id = $1', [hint.payment_id]);
  if (!rows[0]) return []; // not a payment that pays an order of ours (an orphan's, a top-up's…)
  // Kept until the refund is read: a refused fetch is tried again, and meanwhile nothing leaves for the order.
  await noteRefundHint(tx, { refundId: hint.id, paymentId: hint.payment_id, orderId: rows[0].id });
  return [{
    what: `fetch refund ${hint.id} made outside the app`,
    run: async () => {
      try {
        await followOutsideRefund(deps, hint.id);
      } catch (err) {
        await refundHintReadFailed(deps.db, hint.id, err);
        throw err;
      }
    },
  }];
}

/** Sweep side, for the payment that keeps an order paid found refunded: every refund made on it is
 * listed and each not ours recorded (the webhook path's rule: once per refund id; ours are skipped). */
export function followPaymentRefunds(paymentId: string, deps: OutsideRefundDeps): AfterCommit {
  return {
    what: `list the refunds of payment ${paymentId}, refunded outside the app`,
    run: async () => {
      const refunds = await deps.gateway.listPaymentRefunds(paymentId);
      const sends = refunds.length > 0 ? await providerSendsBeforeHold(deps, paymentId) : null;
      for (const refund of refunds) await inTransaction(deps.db, (tx) => recordOutsideRefund(tx, refund, deps.attemptCap, sends));
    },
  };
}

/** Fetches the refund (no transaction open meanwhile) and records it. */
export async function followOutsideRefund(deps: OutsideRefundDeps, refundId: string): Promise<OutsideRefundAction | null> {
  const refund = await deps.gateway.fetchRefund(refundId);
  const sends = await providerSendsBeforeHold(deps, refund.payment_id);
  return inTransaction(deps.db, (tx) => recordOutsideRefund(tx, refund, deps.attemptCap, sends));
}

/** Statuses in which a refund holds an order's own payout because our rows say nothing left for it. */
const HOLDS_IF_NOTHING_SENT: ReadonlySet<PayoutStatus> = new Set(['pending', 'failed', 'parked', 'processing']);

/** What the provider holds under the payout's note, asked before a hold (no transaction open): our
 * rows may forget a transfer that left (a database restored to before it, issue 36 campaign finding
 * 4), and holding a payout the vendor was paid by loses the refund's clawback and the transfer. The
 * listing runs from the order's creation to now; null when the payout is not one a refund would hold. */
export interface ProviderSends { payoutId: string; live: RzpTransfer[] }

async function providerSendsBeforeHold(deps: OutsideRefundDeps, paymentId: string): Promise<ProviderSends | null> {
  const { rows } = await deps.db.query<{ payout_id: string; status: PayoutStatus; since: Date }>(
    `SELECT p.id AS payout_id, p.status, LEAST(o.created_at, p.created_at) AS since
       FROM orders o JOIN payouts p ON p.order_id = o.id WHERE o.paid_payment_id = $1`, [paymentId]);
  const payout = rows[0];
  if (!payout || !HOLDS_IF_NOTHING_SENT.has(payout.status)) return null;
  const transfers = await deps.gateway.listTransfers({ from: new Date(payout.since.getTime() - RESOLVER_WINDOW_BEFORE_MS), to: new Date() });
  return { payoutId: payout.payout_id, live: liveTransfersCarryingNote(payout.payout_id, transfers) };
}

interface PaidOrderRow {
  order_id: string; employer_id: string; vendor_id: string; vendor_net_paise: string; customer_share_paise: string;
  captured_paise: string | null; payout_id: string | null; corporate_direct: boolean;
}

/** Records a fetched refund once; returns what it did, or null when it is ours, failed, already
 * recorded, or on a payment that pays no order. */
export async function recordOutsideRefund(tx: Tx, refund: RzpRefund, attemptCap: number, sends: ProviderSends | null): Promise<OutsideRefundAction | null> {
  if (await applyRefundSnapshot(tx, refund)) {
    // Ours after all (its receipt or id is one of our requests, recorded after its webhook came):
    // its hint is answered too, or it would hold the order's payout for ever.
    await settleRefundHint(tx, refund.id);
    return null;
  }
  if (refund.status === 'failed') {
    // No money left us. One recorded while pending keeps what it did (a hold, a clawback line and its
    // exception are for a human to undo); its row says it failed.
    const hint = await settleRefundHint(tx, refund.id);
    if (hint?.heldFrom) logger.warn({ refundId: refund.id, paymentId: refund.payment_id, heldFrom: hint.heldFrom }, 'a refund that held a payout while unread turned out failed: the payout stays in review for ops to retry');
    await tx.query(`UPDATE outside_refunds SET status = 'failed', updated_at = now() WHERE id = $1 AND status = 'pending'`, [refund.id]);
    return null;
  }
  const { rows } = await tx.query<PaidOrderRow>(
    `SELECT o.id AS order_id, o.employer_id, o.vendor_id, o.vendor_net_paise, o.customer_share_paise, p.amount_paise AS captured_paise,
            po.id AS payout_id, EXISTS (SELECT 1 FROM vendor_obligations v WHERE v.order_id = o.id) AS corporate_direct
       FROM orders o LEFT JOIN payments p ON p.id = o.paid_payment_id LEFT JOIN payouts po ON po.order_id = o.id
      WHERE o.paid_payment_id = $1`,
    [refund.payment_id],
  );
  const order = rows[0];
  if (!order) return null;
  // The payout's row lock first: the claim takes it too, so no transfer starts while we decide.
  const payout = order.payout_id ? await lockPayout(tx, order.payout_id, attemptCap) : null;
  const requestSent = payout?.status === 'processing'
    && (await tx.query<{ sent: boolean }>('SELECT request_sent_at IS NOT NULL AS sent FROM payouts WHERE id = $1', [payout.id])).rows[0]!.sent;
  const openBatchId = payout?.status === 'batched' ? await openBatchOfMember(tx, order.order_id) : null;
  // Held while it was unread (at a batch's close or a send gate): the hold was this refund's.
  const heldFrom = (await settleRefundHint(tx, refund.id))?.heldFrom ?? null;
  const heldUnread = heldFrom !== null && payout?.status === 'review';
  let action = heldUnread ? 'payout_held' : outsideRefundAction({ payoutStatus: payout?.status ?? null, requestSent, corporateDirect: order.corporate_direct, batchOpen: openBatchId !== null });
  if (action === 'payout_held' && payout && !heldUnread && !openBatchId) {
    // Our rows say nothing left; the provider is asked first (before this transaction).
    if (sends?.payoutId !== payout.id) throw new Error(`payout ${payout.id} became one a refund holds (${payout.status}) after the provider was asked; the refund is read again`);
    const [forgotten] = sends.live;
    if (forgotten) {
      // A transfer our rows forget pays the vendor: the refund is owed back, and the payout's next
      // step asks the provider by its note before anything is sent (it finds this transfer).
      await markProviderMayKnow(tx, order.order_id);
      logger.error({ ...payoutLogFields(payout), transferId: forgotten.id, transferStatus: forgotten.status, refundId: refund.id },
        'a refund would hold a payout our rows say sent nothing, but Razorpay holds a live transfer under its note (a restored database?): the refund is owed back and the payout asks the provider before any send');
      action = 'owed_back';
    }
  }
  // The payment's amount as we recorded it; the customer share when no payment row exists.
  const capturedPaise = Number(order.captured_paise ?? order.customer_share_paise);
  const clawbackPaise = action === 'owed_back' ? vendorShareOfRefund(Number(order.vendor_net_paise), refund.amount, capturedPaise) : null;
  const recorded = await tx.query(
    `INSERT INTO outside_refunds (id, payment_id, order_id, amount_paise, captured_paise, status, action, payout_id, payout_status, clawback_paise)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (id) DO NOTHING`,
    [refund.id, refund.payment_id, order.order_id, refund.amount, capturedPaise, refund.status, action, payout?.id ?? null, heldUnread ? heldFrom : payout?.status ?? null, clawbackPaise],
  );
  if (recorded.rowCount === 0) {
    // Seen before: only its status moves on (pending → processed); what it did stays done.
    await tx.query(`UPDATE outside_refunds SET status = $2, updated_at = now() WHERE id = $1 AND status = 'pending' AND $2 <> 'pending'`, [refund.id, refund.status]);
    return null;
  }

  if (action === 'payout_held' && payout && !heldUnread) await holdRefundedPayout(tx, payout, requestSent, openBatchId);
  if (action === 'owed_back' && clawbackPaise !== null && clawbackPaise > 0) {
    const { rows: line } = await tx.query<{ id: string }>(
      `INSERT INTO offline_ledger (order_id, clawback_order_id, outside_refund_id, employer_id, vendor_id, amount_paise, route)
       VALUES (NULL, $1, $2, $3, $4, $5, 'refund_clawback') RETURNING id`,
      [order.order_id, refund.id, order.employer_id, order.vendor_id, -clawbackPaise],
    );
    await oweOfflineLines(tx, line.map((l) => l.id)); // the ledger: the vendor owes it back
  }
  if (action !== 'payout_held') {
    const exception = draft('refund-outside-app', 'unmatched', refund.id, istDateOf(new Date(refund.created_at * 1000)), {
      entityId: refund.id, orderId: order.order_id, expectedPaise: clawbackPaise, actualPaise: refund.amount,
      details: {
        refundId: refund.id, paymentId: refund.payment_id, refundedPaise: refund.amount, capturedPaise, vendorOwesBackPaise: clawbackPaise,
        vendorId: order.vendor_id, payoutId: payout?.id ?? null, payoutStatus: payout?.status ?? null, action,
      },
    });
    await raiseEventException(tx, exception, `refund:${refund.id}`);
  }
  logger.warn({ refundId: refund.id, paymentId: refund.payment_id, orderId: order.order_id, refundedPaise: refund.amount, payoutStatus: payout?.status ?? null, action, clawbackPaise },
    'refund made outside the app on a paid order');
  return action;
}
