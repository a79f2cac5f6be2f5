/** A capture is confirmed before platform money moves (design.md §10, issue 19 item 5). An online
 * order is marked paid on a webhook's payload (or the callback's or the sweep's sighting), which is a
 * hint: before the first transfer of its payout the money-moving step fetches the payment the order
 * was paid on, and sends only if Razorpay confirms it — captured, nothing refunded, the amount we
 * recorded, our gateway order. A confirmation is recorded (payments.capture_confirmed_at, in the
 * send gate's transaction) and never asked for again: one provider call per payout. Wallet, cash
 * and fully subsidised orders collected nothing online, so there is nothing to ask. */
import type { Db, Tx } from '../db/pool';
import { ProviderContractError } from '../gateway/classify';
import { GatewayCallError, type Gateway, type RzpPayment } from '../gateway/types';
import { logger } from '../logger';

/** Review code: Razorpay does not confirm the capture the order was marked paid on. */
export const CAPTURE_NOT_CONFIRMED = 'CAPTURE_NOT_CONFIRMED';
/** Attempt code, not a review: the payment could not be fetched, nothing was sent, the payout retries. */
export const CAPTURE_CHECK_FAILED = 'CAPTURE_CHECK_FAILED';

/** The capture an online order was marked paid on, as money in recorded it. */
export interface RecordedCapture {
  orderId: string;
  /** orders.paid_payment_id; null: the order is paid online with no payment recorded. */
  paymentId: string | null;
  amountPaise: number | null;
  /** Our gateway order (orders.gateway_order_id): the payment must belong to it. */
  gatewayOrderId: string | null;
}

export type CaptureCheck =
  /** Not an online capture, or confirmed by an earlier attempt. */
  | { kind: 'not_needed' }
  | { kind: 'confirmed'; paymentId: string }
  /** Razorpay's answer (or the lack of a payment to ask about) does not confirm it: `why` in words. */
  | { kind: 'not_confirmed'; paymentId: string | null; why: string[]; payment: RzpPayment | null }
  /** Razorpay could not be asked (timeout, 5xx, 429, credentials): nothing is known, nothing is sent. */
  | { kind: 'unavailable'; paymentId: string; detail: string };

/** The payment an online order with a customer share was paid on, even if money in holds no row of
 * it (a capture applied from a sighting that recorded none): the provider is asked all the same,
 * against the customer share. */
const RECORDED_CAPTURE_SQL = `
SELECT o.id AS order_id, o.gateway_order_id, o.paid_payment_id AS payment_id, COALESCE(pay.amount_paise, o.customer_share_paise) AS amount_paise, pay.capture_confirmed_at
  FROM orders o
  LEFT JOIN payments pay ON pay.id = o.paid_payment_id
 WHERE o.payment_method = 'online' AND o.customer_share_paise > 0`;

async function unconfirmedCapture(db: Pick<Db, 'query'>, where: string, params: unknown[]): Promise<RecordedCapture | null> {
  const { rows } = await db.query<{ order_id: string; gateway_order_id: string | null; payment_id: string | null; amount_paise: number | null; capture_confirmed_at: Date | null }>(
    `${RECORDED_CAPTURE_SQL} AND ${where}`, params);
  const row = rows[0];
  if (!row || row.capture_confirmed_at) return null;
  return { orderId: row.order_id, paymentId: row.payment_id, amountPaise: row.amount_paise, gatewayOrderId: row.gateway_order_id };
}

/** The capture still to confirm for this claim, or null: nothing to ask (not an online order with a
 * customer share, already confirmed, or the claim is no longer this one — the gate says so). */
export async function captureToConfirm(db: Pick<Db, 'query'>, claim: { payoutId: string; attemptNo: number; idempotencyKey: string }): Promise<RecordedCapture | null> {
  return unconfirmedCapture(db,
    `o.id = (SELECT p.order_id FROM payouts p WHERE p.id = $1 AND p.status = 'processing' AND p.attempts = $2 AND p.idempotency_key = $3)`,
    [claim.payoutId, claim.attemptNo, claim.idempotencyKey]);
}

/** The capture still to confirm before an order joins its batch (batches.ts), or null. */
export async function captureOfOrderToConfirm(db: Pick<Db, 'query'>, orderId: string): Promise<RecordedCapture | null> {
  return unconfirmedCapture(db, 'o.id = $1', [orderId]);
}

/** The unconfirmed captures recorded on these payments (a listing's page): what the page may confirm. */
export async function capturesToConfirmAmong(db: Pick<Db, 'query'>, paymentIds: string[]): Promise<RecordedCapture[]> {
  const { rows } = await db.query<{ order_id: string; gateway_order_id: string | null; payment_id: string; amount_paise: number | null }>(
    `${RECORDED_CAPTURE_SQL} AND o.paid_payment_id = ANY($1::text[]) AND pay.capture_confirmed_at IS NULL`, [paymentIds]);
  return rows.map((r) => ({ orderId: r.order_id, paymentId: r.payment_id, amountPaise: r.amount_paise, gatewayOrderId: r.gateway_order_id }));
}

/** Why Razorpay's payment does not confirm the capture we recorded; empty: it does. A partial refund
 * is not confirmed either: Razorpay keeps such a payment `captured` (it becomes `refunded` only when
 * refunded in full), but the platform no longer holds what the order was paid, and none of our own
 * flows partly refunds the payment an order was paid on, so a human looks. */
export function captureMismatches(recorded: RecordedCapture, payment: RzpPayment): string[] {
  const why: string[] = [];
  if (payment.id !== recorded.paymentId) why.push(`Razorpay answered for payment ${payment.id}, not ${recorded.paymentId}`);
  if (payment.status !== 'captured' || !payment.captured) why.push(`Razorpay says the payment is ${payment.status}${payment.status === 'refunded' ? ' (in full)' : ''}, not captured`);
  else if (payment.amount_refunded > 0) why.push(`Razorpay says ${payment.amount_refunded} of its ${payment.amount} paise were refunded`);
  if (payment.amount !== recorded.amountPaise) why.push(`Razorpay captured ${payment.amount} paise, we recorded ${recorded.amountPaise}`);
  if (payment.currency !== 'INR') why.push(`the payment is in ${payment.currency}, not INR`);
  if (payment.order_id !== recorded.gatewayOrderId) why.push(`the payment belongs to gateway order ${payment.order_id ?? 'none'}, not ours (${recorded.gatewayOrderId ?? 'none'})`);
  return why;
}

/** Asks Razorpay once about the recorded capture. Never throws: every answer is a CaptureCheck. */
export async function checkCapture(gateway: Gateway, recorded: RecordedCapture): Promise<CaptureCheck> {
  if (!recorded.paymentId) return { kind: 'not_confirmed', paymentId: null, why: ['no payment is recorded as paying this online order'], payment: null };
  let payment: RzpPayment;
  try {
    payment = await gateway.fetchPayment(recorded.paymentId);
  } catch (err) {
    // 400/404 with a provider code is Razorpay's answer about this id: it has no such payment for us.
    if (err instanceof GatewayCallError && err.outcome.type === 'rejected' && (err.outcome.httpStatus === 400 || err.outcome.httpStatus === 404)) {
      const { code, description } = err.outcome.error;
      return { kind: 'not_confirmed', paymentId: recorded.paymentId, why: [`Razorpay does not know payment ${recorded.paymentId} (${code}: ${description})`], payment: null };
    }
    // Anything else (timeout, 5xx, 429, 401, an unreadable answer, our own bug) says nothing about the payment.
    if (!(err instanceof GatewayCallError) && !(err instanceof ProviderContractError)) logger.error({ err, orderId: recorded.orderId, paymentId: recorded.paymentId }, 'fetching the payment to confirm its capture threw unexpectedly');
    return { kind: 'unavailable', paymentId: recorded.paymentId, detail: String((err as Error)?.message ?? err) };
  }
  const why = captureMismatches(recorded, payment);
  return why.length === 0 ? { kind: 'confirmed', paymentId: payment.id } : { kind: 'not_confirmed', paymentId: recorded.paymentId, why, payment };
}

/** In the send gate's transaction: the capture is confirmed, no later attempt asks again. */
export async function recordCaptureConfirmed(tx: Tx, paymentId: string): Promise<void> {
  await tx.query(`UPDATE payments SET capture_confirmed_at = now(), capture_confirmed_by = 'fetch' WHERE id = $1 AND capture_confirmed_at IS NULL`, [paymentId]);
}

/** Confirms the listed payments that match the capture we recorded on them, exactly: a listing pass's
 * page (`listing`) or a once-more look window's (`window`). Returns how many it confirmed. */
export async function confirmListedCaptures(db: Pick<Db, 'query'>, payments: readonly RzpPayment[], by: 'listing' | 'window'): Promise<number> {
  if (payments.length === 0) return 0;
  const listed = new Map(payments.map((p) => [p.id, p]));
  const recorded = await capturesToConfirmAmong(db, [...listed.keys()]);
  const confirmed = recorded.filter((r) => captureMismatches(r, listed.get(r.paymentId!)!).length === 0).map((r) => r.paymentId!);
  if (confirmed.length === 0) return 0;
  const { rowCount } = await db.query(
    `UPDATE payments SET capture_confirmed_at = now(), capture_confirmed_by = $2 WHERE id = ANY($1::text[]) AND capture_confirmed_at IS NULL`, [confirmed, by]);
  return rowCount ?? 0;
}
