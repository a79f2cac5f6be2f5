/** Turns a gateway recon row (as received) into the stored/matched form, validating what matching
 * relies on. Razorpay sends `notes` as an object, a JSON string or free text; only a transfer's
 * `transaction_id` (our payout id) and a refund's `refund_request_id` (our refund id) are read from
 * it, here, once: they are stored beside the row (migration 095) for matching. */
import { z } from 'zod';
import type { RzpReconRow } from '../gateway/types';
import { istDateOf } from '../domain/calendar';
import type { GatewayRow } from './model';

const paise = z.number().int().max(Number.MAX_SAFE_INTEGER);
const reconRowSchema = z.object({
  entity_id: z.string().min(1),
  type: z.enum(['payment', 'refund', 'transfer', 'reversal', 'adjustment']),
  debit: paise.nonnegative(),
  credit: paise.nonnegative(),
  amount: paise,
  fee: paise.nullable(),
  tax: paise.nullable(),
  on_hold: z.boolean(),
  settled: z.boolean(),
  created_at: z.number().int(),
  settled_at: z.number().int().nullable(),
  settlement_id: z.string().nullable(),
  payment_id: z.string().nullable().optional(),
  order_id: z.string().nullable().optional(),
  order_receipt: z.string().nullable().optional(),
  settlement_utr: z.string().nullable().optional(),
  notes: z.unknown().optional(),
});

export interface StoredReconRow extends GatewayRow {
  createdAt: Date;
  settledAt: Date | null;
  settlementUtr: string | null;
  raw: RzpReconRow;
}

export function transactionIdFromNotes(notes: unknown): string | null {
  return noteValue(notes, 'transaction_id');
}

/** Our refund id, which we send as `notes.refund_request_id` (and `receipt`) with every refund. */
export function refundRequestIdFromNotes(notes: unknown): string | null {
  return noteValue(notes, 'refund_request_id');
}

function noteValue(notes: unknown, key: string): string | null {
  let value = notes;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return null;
    }
  }
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const id = (value as Record<string, unknown>)[key];
    return typeof id === 'string' && id ? id : null;
  }
  return null;
}

/** `reconDay` is the IST day whose report we asked for; a row's settled_at decides nothing here. */
export function toStoredRow(raw: RzpReconRow, reconDay: string): StoredReconRow {
  const r = reconRowSchema.parse(raw);
  return {
    entityId: r.entity_id,
    settlementId: r.settlement_id,
    type: r.type,
    amountPaise: r.amount,
    feePaise: r.fee ?? 0,
    taxPaise: r.tax ?? 0,
    creditPaise: r.credit,
    debitPaise: r.debit,
    onHold: r.on_hold,
    settled: r.settled,
    reconDay,
    paymentId: r.payment_id ?? null,
    gatewayOrderId: r.order_id ?? null,
    orderReceipt: r.order_receipt ?? null,
    noteTransactionId: r.type === 'transfer' ? transactionIdFromNotes(r.notes) : null,
    noteRefundRequestId: r.type === 'refund' ? refundRequestIdFromNotes(r.notes) : null,
    createdAt: new Date(r.created_at * 1000),
    settledAt: r.settled_at === null ? null : new Date(r.settled_at * 1000),
    settlementUtr: r.settlement_utr ?? null,
    raw,
  };
}

/** The IST day a row settled on (for checks that a report put it on the right day). */
export function settledIstDay(row: StoredReconRow): string | null {
  return row.settledAt ? istDateOf(row.settledAt) : null;
}

/** One row per entity + settlement, the last one reported winning: offset paging over a report
 * that grows while we read it can repeat a row, and one upsert statement cannot touch a key twice. */
export function latestPerEntityAndSettlement<T extends Pick<GatewayRow, 'entityId' | 'settlementId'>>(rows: readonly T[]): T[] {
  const byKey = new Map<string, T>();
  for (const row of rows) byKey.set(`${row.entityId}|${row.settlementId ?? ''}`, row);
  return [...byKey.values()];
}
