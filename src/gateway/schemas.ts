/** zod schemas for every Razorpay response we read. Unknown keys are kept (looseObject) so the raw
 * answer can be stored as evidence; the keys we rely on are checked. */
import { z } from 'zod';
import type { RzpOrder, RzpPayment, RzpReconRow, RzpRefund, RzpReversal, RzpSettlement, RzpTransfer } from './types';

const paise = z.number().int().safe();
const unixSeconds = z.number().int().nonnegative();
/** Razorpay serialises empty notes as `[]`; values may come back as numbers, or null. */
export const notesSchema = z.union([
  z.record(z.string(), z.union([z.union([z.string(), z.number(), z.boolean()]).transform(String), z.null()])),
  z.array(z.unknown()).length(0).transform(() => [] as []),
]);

const noTransferError = { code: null, description: null, reason: null, field: null, step: null };
/** Every key is null on success; `id`, `source`, `metadata` and anything newer are kept as sent. */
const transferError = z.looseObject({
  code: z.string().nullable().default(null),
  description: z.string().nullable().default(null),
  reason: z.string().nullable().default(null),
  field: z.string().nullable().default(null),
  step: z.string().nullable().default(null),
});

const TRANSFER_STATUSES = ['created', 'pending', 'processed', 'failed', 'reversed', 'partially_reversed'] as const;

/** The Transfers entity in the documentation names the status `transfer_status` (older answers);
 * newer answers call it `status`. Both are read; the original key stays in the parsed object. */
function withStatus(raw: unknown): unknown {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return raw;
  const o = raw as Record<string, unknown>;
  return o.status === undefined && o.transfer_status !== undefined ? { ...o, status: o.transfer_status } : o;
}

const transferObject = z.looseObject({
  id: z.string().startsWith('trf_'),
  entity: z.literal('transfer'),
  status: z.enum(TRANSFER_STATUSES),
  source: z.string(),
  recipient: z.string(),
  amount: paise,
  currency: z.string(),
  amount_reversed: paise.default(0),
  // Absent in create-from-order/payment answers, and `tax` is null before an order transfer runs.
  fees: paise.nullable().default(0).transform((v) => v ?? 0),
  tax: paise.nullable().default(0).transform((v) => v ?? 0),
  notes: notesSchema,
  on_hold: z.boolean().default(false),
  settlement_status: z.enum(['pending', 'on_hold', 'settled']).nullable().default(null),
  recipient_settlement_id: z.string().nullable().default(null),
  created_at: unixSeconds,
  processed_at: unixSeconds.nullable().default(null),
  error: transferError.nullable().default(noTransferError).transform((e) => e ?? noTransferError),
});

export const transferSchema = z.preprocess(withStatus, transferObject) satisfies z.ZodType<RzpTransfer>;

export const reversalSchema = z.looseObject({
  id: z.string().startsWith('rvrsl_'),
  entity: z.literal('reversal'),
  transfer_id: z.string().startsWith('trf_'),
  amount: paise,
  fee: paise.nullable().default(0).transform((v) => v ?? 0),
  tax: paise.nullable().default(0).transform((v) => v ?? 0),
  currency: z.string(),
  notes: notesSchema,
  initiator_id: z.string().nullable().default(null),
  customer_refund_id: z.string().nullable().default(null),
  utr: z.string().nullable().default(null),
  created_at: unixSeconds,
}) satisfies z.ZodType<RzpReversal>;

export const orderSchema = z.looseObject({
  id: z.string().startsWith('order_'),
  entity: z.literal('order'),
  amount: paise,
  amount_paid: paise,
  amount_due: paise,
  currency: z.string(),
  receipt: z.string().nullable(),
  status: z.enum(['created', 'attempted', 'paid']),
  attempts: z.number().int(),
  notes: notesSchema,
  created_at: unixSeconds,
  transfers: z.array(transferSchema).optional(),
}) satisfies z.ZodType<RzpOrder>;

export const paymentSchema = z.looseObject({
  id: z.string().startsWith('pay_'),
  entity: z.literal('payment'),
  amount: paise,
  currency: z.string(),
  status: z.enum(['created', 'authorized', 'captured', 'refunded', 'failed']),
  order_id: z.string().nullable(),
  method: z.string(),
  captured: z.boolean(),
  amount_refunded: paise,
  refund_status: z.enum(['partial', 'full']).nullable(),
  fee: paise.nullable(),
  tax: paise.nullable(),
  notes: notesSchema,
  error_code: z.string().nullable(),
  error_description: z.string().nullable(),
  created_at: unixSeconds,
}) satisfies z.ZodType<RzpPayment>;

export const refundSchema = z.looseObject({
  id: z.string().startsWith('rfnd_'),
  entity: z.literal('refund'),
  amount: paise,
  currency: z.string(),
  payment_id: z.string(),
  notes: notesSchema,
  receipt: z.string().nullable(),
  status: z.enum(['pending', 'processed', 'failed']),
  created_at: unixSeconds,
}) satisfies z.ZodType<RzpRefund>;

export const settlementSchema = z.looseObject({
  id: z.string().startsWith('setl_'),
  entity: z.literal('settlement'),
  amount: paise,
  status: z.enum(['created', 'processed', 'failed']),
  fees: paise,
  tax: paise,
  utr: z.string().nullable(),
  created_at: unixSeconds,
}) satisfies z.ZodType<RzpSettlement>;

const nullableString = z.string().nullable().default(null);
export const reconRowSchema = z.looseObject({
  entity_id: z.string(),
  // `reversal`: a transfer reversal credited back to us (the sandbox's row; the reference lists four types).
  type: z.enum(['payment', 'refund', 'transfer', 'reversal', 'adjustment']),
  debit: paise,
  credit: paise,
  amount: paise,
  currency: z.string(),
  fee: paise.nullable(),
  tax: paise.nullable(),
  on_hold: z.boolean(),
  settled: z.boolean(),
  created_at: unixSeconds,
  settled_at: unixSeconds.nullable(),
  settlement_id: nullableString,
  posted_at: unixSeconds.nullable().default(null),
  // Adjustment rows have no credit_type at all.
  credit_type: nullableString,
  description: nullableString,
  notes: z.unknown(),
  payment_id: nullableString,
  settlement_utr: nullableString,
  order_id: nullableString,
  order_receipt: nullableString,
  method: nullableString,
  card_network: nullableString,
  card_issuer: nullableString,
  card_type: nullableString,
  dispute_id: nullableString,
}) satisfies z.ZodType<RzpReconRow>;

export function collectionOf<T extends z.ZodType>(item: T) {
  return z.object({ entity: z.literal('collection'), count: z.number().int().nonnegative(), items: z.array(item) });
}

/** A collection whose items are parsed one by one by the caller, so one strange item cannot make the
 * rest unreadable. */
export const looseCollection = collectionOf(z.unknown());

/** The body of a Razorpay error answer. */
export const providerErrorBodySchema = z.object({
  error: z.object({
    code: z.string().min(1),
    description: z.string().default(''),
    field: z.string().nullish().transform((v) => v ?? null),
    reason: z.string().nullish().transform((v) => v ?? null),
    step: z.string().nullish().transform((v) => v ?? null),
    source: z.string().nullish().transform((v) => v ?? null),
  }),
});
