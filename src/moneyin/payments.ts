/** The payments we have seen, from webhooks, the browser callback or the sweep. Snapshots arrive
 * twice and out of order, so a status only ever moves forward (a late `payment.failed` snapshot
 * never undoes a capture; late authorisation moves failed → authorized → captured). */
import type { PaymentEntity } from './webhookEnvelope';

/** The upsert of one snapshot, as the body of a data-modifying CTE over the parameters
 * {@link upsertPaymentParams} gives ($1 … $10), the order and top-up it belongs to being SQL
 * expressions of the caller's (its owner lookup, in the same statement).
 *
 * `capturedBySec` ($10): the capture evidence of this snapshot (Unix seconds), a time by which the
 * payment was captured — a capture belongs to the IST day it happened, not the day its webhook or the
 * sweep reached us. `null`: no better evidence than our own sighting (now). Every piece of evidence
 * is a bound from above, so the earliest one wins; never later than now. */
export function upsertPaymentSql(orderIdSql: string, topupIdSql: string): string {
  return `INSERT INTO payments (id, gateway_order_id, order_id, topup_id, amount_paise, status, method, fee_paise, tax_paise, captured_at, raw)
     VALUES ($1, $2, ${orderIdSql}, ${topupIdSql}, $3, $4, $5, $6, $7,
             CASE WHEN $4 IN ('captured', 'refunded') THEN LEAST(COALESCE(to_timestamp($10::double precision), now()), now()) END, $8)
     ON CONFLICT (id) DO UPDATE SET
       status = CASE WHEN array_position($9::text[], EXCLUDED.status) > array_position($9::text[], payments.status)
                     THEN EXCLUDED.status ELSE payments.status END,
       raw = CASE WHEN array_position($9::text[], EXCLUDED.status) > array_position($9::text[], payments.status)
                  THEN EXCLUDED.raw ELSE payments.raw END,
       order_id = COALESCE(payments.order_id, EXCLUDED.order_id),
       topup_id = COALESCE(payments.topup_id, EXCLUDED.topup_id),
       fee_paise = COALESCE(EXCLUDED.fee_paise, payments.fee_paise),
       tax_paise = COALESCE(EXCLUDED.tax_paise, payments.tax_paise),
       captured_at = LEAST(payments.captured_at, EXCLUDED.captured_at),
       updated_at = CASE WHEN array_position($9::text[], EXCLUDED.status) > array_position($9::text[], payments.status)
                         THEN now() ELSE payments.updated_at END`;
}

export function upsertPaymentParams(payment: PaymentEntity, capturedBySec: number | null): unknown[] {
  return [payment.id, payment.order_id, payment.amount, payment.status, payment.method ?? null,
    payment.fee ?? null, payment.tax ?? null, JSON.stringify(payment), PAYMENT_STATUS_ORDER, capturedBySec];
}

/** The order in which a payment's status may advance. */
const PAYMENT_STATUS_ORDER = ['created', 'failed', 'authorized', 'captured', 'refunded'];
