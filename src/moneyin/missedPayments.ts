/** The missed-webhook sweep's work. Orders and top-ups still waiting for their money have their
 * payments fetched from the gateway, and each snapshot goes through the same path as a webhook.
 * Reads and DB writes here are idempotent, so the activities that call them may retry.
 *
 * Fair and bounded, so it cannot starve:
 * - the batch is the least recently checked first (never checked first, then oldest), and taking
 *   a row into a batch stamps `payment_checked_at`: abandoned orders rotate instead of filling
 *   every batch ahead of a newer missed capture;
 * - an online order still unpaid past UNPAID_ORDER_EXPIRY_MS (the gateway's late-authorisation
 *   window) is asked one last time and then expired (subsidy back to the wallet, audited): it
 *   leaves the batch for good;
 * - cancelled and expired orders are not in the batch. A capture can still arrive for one (a
 *   checkout left open, a late authorisation) and must be found and refunded; so can one for a
 *   paid order whose earlier payment failed and is authorised late by the bank (a duplicate
 *   capture). Their webhooks do that; for a missed webhook they have their own small batch, each
 *   order asked at most once per LATE_CAPTURE_RECHECK_MS while a late capture is possible, and every
 *   paid online order is asked once more that long after its payment, once its payout has decided
 *   (the fault campaign found both: a second capture whose webhooks were given up was never
 *   refunded; and a capture refunded from the Dashboard before we heard of it, whose refund the
 *   once-more look records as made outside the app). One extra read per
 *   online order; a capture days later whose webhooks are lost for good is left to recon
 *   (settled-not-in-app, with the order). */
import { inTransaction, type Db } from '../db/pool';
import { runAfterCommit } from './afterCommit';
import { CAPTURE_MISMATCH } from './captureMismatch';
import { endUnpaidOrder } from './cancelOrder';
import type { MoneyInDeps } from './deps';
import { paymentCreatedSecondsSql } from './paymentCreatedAt';
import { applyPaymentSnapshot } from './paymentSnapshots';
import { sentNothingYetSql } from '../payouts/captureWindow';
import { paymentEntitySchema } from './webhookEnvelope';

/** Razorpay documents late authorisation for "3 days" in one place and "5 days" in another: a
 * cancelled or expired order is watched for a late capture over the longer one. */
export const LATE_CAPTURE_WATCH_MS = 5 * 86_400_000;

export const EXPIRY_ACTOR = 'system:missed-webhook-sweep';

export interface AwaitingPayment { kind: 'order' | 'topup'; id: string; gatewayOrderId: string }

const secondsAgo = (param: string): string => `now() - make_interval(secs => ${param}::double precision / 1000)`;

/** The order (`orders` as `alias`) has no payout waiting to send or sending: the once-more look waits
 * for that, so a refund from the Dashboard it finds is judged as its webhook would be after the send,
 * and a transfer a restore forgot has been found first. */
export const payoutDecidedSql = (alias: string): string =>
  `NOT EXISTS (SELECT 1 FROM payouts po WHERE po.order_id = ${alias}.id AND po.status IN ('pending', 'processing'))`;

/** What a once-more look window applies: the order's payout has decided, or it has sent nothing yet
 * (pending, never claimed, or waiting for this window to confirm its capture before it joins its
 * batch: payouts/captureListing.ts) and is not a row a restore may have made older than
 * the provider: for it the window is its once-more look, as a webhook could have come while it was
 * pending (a refund found then holds it in review before any send, as the refund's webhook would). Left
 * out, a batched pair's payout whose start waits in the paced outbox when its window passes was asked
 * alone later (bench:day: 650 of 10,000 orders). A payout sending or sent and reopened still waits. */
export const windowAppliesSql = (alias: string): string =>
  `(${payoutDecidedSql(alias)} OR EXISTS (SELECT 1 FROM payouts pw WHERE pw.order_id = ${alias}.id AND ${sentNothingYetSql('pw')}))`;

/** A paid online order (`orders` as `alias`) not looked at once more since its payment. */
export const awaitingRecheckSql = (alias: string): string =>
  `${alias}.status = 'paid' AND ${alias}.gateway_order_id IS NOT NULL AND (${alias}.payment_checked_at IS NULL OR ${alias}.payment_checked_at < ${alias}.paid_at)`;

/** The listing windows' cursor (paymentRecheck.ts): the first Unix second no finished window has
 * listed yet; while none has finished, where the first one starts; NULL before any window. */
export const RECHECK_CURSOR_SQL = `
SELECT COALESCE(
  (SELECT listed_to_s + 1 FROM provider_listing_passes WHERE kind = 'payments_recheck' AND finished_at IS NOT NULL AND error IS NULL
    ORDER BY listed_to_s DESC LIMIT 1),
  (SELECT min(listed_from_s) FROM provider_listing_passes WHERE kind = 'payments_recheck')) AS s`;

/** The Unix second Razorpay made the order's paid payment (its payload's created_at), else when we
 * recorded the order paid: where the once-more look by listing places it (paymentRecheck.ts). */
export const paidPaymentCreatedSql = (orderAlias: string, paymentAlias: string): string =>
  `COALESCE(${paymentCreatedSecondsSql(paymentAlias)}, extract(epoch FROM ${orderAlias}.paid_at)::bigint)`;

/** The next batch of unpaid orders and top-ups to ask the gateway about (placed more than
 * `olderThanMs` and less than `expiryMs` ago), least recently checked first; stamps them checked. */
export async function gatewayOrdersAwaitingPayment(db: Db, opts: { olderThanMs: number; expiryMs: number; limit: number }): Promise<AwaitingPayment[]> {
  const waiting = (table: string, unpaid: string) => `(SELECT '${table === 'orders' ? 'order' : 'topup'}' AS kind, id, gateway_order_id, payment_checked_at, created_at
       FROM ${table}
      WHERE ${unpaid} AND gateway_order_id IS NOT NULL AND created_at < ${secondsAgo('$1')} AND created_at > ${secondsAgo('$2')}
      ORDER BY payment_checked_at NULLS FIRST, created_at LIMIT $3)`;
  const { rows } = await db.query<{ kind: 'order' | 'topup'; id: string; gateway_order_id: string }>(
    `WITH batch AS (
       SELECT * FROM (${waiting('orders', `status IN ('pending', 'failed') AND payment_method = 'online'`)}
                      UNION ALL ${waiting('wallet_topups', `status IN ('pending', 'failed')`)}) w
        ORDER BY payment_checked_at NULLS FIRST, created_at LIMIT $3),
     checked_orders AS (UPDATE orders SET payment_checked_at = now() WHERE id IN (SELECT id FROM batch WHERE kind = 'order')),
     checked_topups AS (UPDATE wallet_topups SET payment_checked_at = now() WHERE id IN (SELECT id FROM batch WHERE kind = 'topup'))
     SELECT kind, id, gateway_order_id FROM batch ORDER BY payment_checked_at NULLS FIRST, created_at`,
    [opts.olderThanMs, opts.expiryMs, opts.limit],
  );
  return rows.map((r) => ({ kind: r.kind, id: r.id, gatewayOrderId: r.gateway_order_id }));
}

/** Orders a late capture may still arrive for — cancelled or expired; paid (or held on their
 * capture: captureMismatch.ts) while another of their payments is still created, authorised or
 * failed (driven from payments: a partial index keeps that side small); paid and not asked since,
 * once `recheckMs` after the payment (another capture during an outage whose webhooks were all lost
 * is then found and refunded, not left to recon) — least recently checked first, each at most once
 * per `recheckMs`; stamps them checked. */
export async function endedOrdersAwaitingLateCapture(db: Db, limit: number, recheckMs: number): Promise<AwaitingPayment[]> {
  const { rows } = await db.query<{ id: string; gateway_order_id: string }>(
    `WITH recheck_cursor AS (${RECHECK_CURSOR_SQL}),
     candidates AS (
       SELECT id, gateway_order_id, payment_checked_at, created_at, 0 AS priority FROM orders
        WHERE status IN ('cancelled', 'expired') AND gateway_order_id IS NOT NULL AND created_at > ${secondsAgo('$1')}
       UNION
       SELECT o.id, o.gateway_order_id, o.payment_checked_at, o.created_at, 0 FROM payments p JOIN orders o ON o.id = p.order_id
        WHERE p.status IN ('created', 'authorized', 'failed') AND p.created_at > ${secondsAgo('$1')}
          AND o.status IN ('paid', '${CAPTURE_MISMATCH}') AND o.gateway_order_id IS NOT NULL
       UNION
       -- The once-more look at a paid online order the listing windows do not look at (paymentRecheck.ts):
       -- paid on a payment made before the windows' cursor (before the first window, or its payout
       -- undecided when its window was listed). Half of each batch at least when it has that many
       -- (below), so neither side starves the other. Once its payout has decided.
       SELECT o.id, o.gateway_order_id, o.payment_checked_at, o.created_at, 1 FROM orders o
         LEFT JOIN payments pay ON pay.id = o.paid_payment_id
        WHERE ${awaitingRecheckSql('o')}
          AND o.paid_at < ${secondsAgo('$2')} AND o.paid_at > ${secondsAgo('$1')}
          AND ${payoutDecidedSql('o')}
          AND ((SELECT s FROM recheck_cursor) IS NULL OR ${paidPaymentCreatedSql('o', 'pay')} < (SELECT s FROM recheck_cursor))),
     batch AS (
       SELECT DISTINCT ON (id) * FROM candidates
        WHERE payment_checked_at IS NULL OR payment_checked_at < ${secondsAgo('$2')}
        ORDER BY id, priority),
     -- Each side's first half-batch before the rest: many ended orders rechecked often (a late
     -- capture is possible for days) would otherwise leave the once-more look a few slots a run.
     ranked AS (SELECT *, row_number() OVER (PARTITION BY priority ORDER BY payment_checked_at NULLS FIRST, created_at) AS rn FROM batch),
     chosen AS (SELECT * FROM ranked ORDER BY rn > ceil($3 / 2.0), priority, payment_checked_at NULLS FIRST, created_at LIMIT $3),
     checked AS (UPDATE orders SET payment_checked_at = now() WHERE id IN (SELECT id FROM chosen))
     SELECT id, gateway_order_id FROM chosen ORDER BY priority, payment_checked_at NULLS FIRST, created_at`,
    [LATE_CAPTURE_WATCH_MS, recheckMs, limit],
  );
  return rows.map((r) => ({ kind: 'order', id: r.id, gatewayOrderId: r.gateway_order_id }));
}

/** Online orders still unpaid `expiryMs` after they were placed, oldest first. */
export async function unpaidOrdersPastExpiry(db: Db, expiryMs: number, limit: number): Promise<Array<{ orderId: string; gatewayOrderId: string | null }>> {
  const { rows } = await db.query<{ id: string; gateway_order_id: string | null }>(
    `SELECT id, gateway_order_id FROM orders
      WHERE status IN ('pending', 'failed') AND payment_method = 'online' AND created_at <= ${secondsAgo('$1')}
      ORDER BY created_at LIMIT $2`,
    [expiryMs, limit],
  );
  return rows.map((r) => ({ orderId: r.id, gatewayOrderId: r.gateway_order_id }));
}

/** Asks the gateway one last time (a missed capture wins: the order is paid), then expires the
 * order. Safe to run again: the conditional update and the wallet ledger's unique entry. */
export async function expireUnpaidOrder(deps: MoneyInDeps, order: { orderId: string; gatewayOrderId: string | null }, expiryMs: number): Promise<'expired' | 'not_unpaid'> {
  if (order.gatewayOrderId) await reconcileGatewayOrderPayments(deps, order.gatewayOrderId);
  const hours = Math.round(expiryMs / 3_600_000);
  const expired = await inTransaction(deps.db, (tx) => endUnpaidOrder(tx, order.orderId, {
    to: 'expired', actor: EXPIRY_ACTOR, placedMoreThanMsAgo: expiryMs,
    reason: `unpaid ${hours} h after it was placed: past the gateway's late-authorisation window`,
  }));
  return expired ? 'expired' : 'not_unpaid';
}

/** Fetches the gateway order's payments and applies each; returns how many were captured. */
export async function reconcileGatewayOrderPayments(deps: MoneyInDeps, gatewayOrderId: string): Promise<{ payments: number; captured: number }> {
  return applyPaymentsRead(deps, await deps.gateway.fetchOrderPayments(gatewayOrderId));
}

/** Applies payments read from the gateway, each as a webhook's snapshot would be, each in its own
 * transaction; returns how many were captured. */
export async function applyPaymentsRead(deps: MoneyInDeps, read: readonly unknown[]): Promise<{ payments: number; captured: number }> {
  const payments = read.map((p) => paymentEntitySchema.parse(p));
  let captured = 0;
  for (const payment of payments) {
    // A fetched payment carries no capture time: our sighting is the evidence (paymentSnapshots.ts).
    const afterCommit = await inTransaction(deps.db, (tx) => applyPaymentSnapshot(tx, payment, 'sweep', deps, null));
    await runAfterCommit(afterCommit);
    if (payment.status === 'captured') captured++;
  }
  return { payments: payments.length, captured };
}
