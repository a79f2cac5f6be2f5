/** A vendor statement as it crosses a boundary: what is asked (a vendor, an IST period, a format) and
 * what is answered (one line per order paid in the period and per refund clawed back, how each was
 * paid, totals by rail, the offline balance). Zod schemas with their types: the API parses the
 * query with them, the CLI parses the API's answer with them, the console and the CSV render it. */
import { z } from 'zod';
import { isoDateSchema } from '../domain/schemas';

export const STATEMENT_FORMATS = ['json', 'csv'] as const;
/** A statement is read whole; a year bounds one read. */
export const MAX_STATEMENT_DAYS = 366;

export const vendorIdSchema = z.string().trim().regex(/^[A-Za-z0-9_-]{1,64}$/, 'a vendor id: letters, digits, _ and - (at most 64)');
export const statementParamsSchema = z.object({ vendorId: vendorIdSchema });

const periodShape = { from: isoDateSchema, to: isoDateSchema };
const daysIn = (p: { from: string; to: string }) => (Date.parse(`${p.to}T00:00:00Z`) - Date.parse(`${p.from}T00:00:00Z`)) / 86_400_000 + 1;
function periodChecks<T extends z.ZodObject<typeof periodShape>>(schema: T) {
  return schema
    .refine((p) => p.from <= p.to, { message: 'from must not be after to', path: ['to'] })
    .refine((p) => daysIn(p) <= MAX_STATEMENT_DAYS, { message: `a statement covers at most ${MAX_STATEMENT_DAYS} days`, path: ['to'] });
}

/** IST calendar days, both included, as every period filter of the app. */
export const statementPeriodSchema = periodChecks(z.object(periodShape));
export type StatementPeriod = z.infer<typeof statementPeriodSchema>;

export const statementQuerySchema = periodChecks(z.object({ ...periodShape, format: z.enum(STATEMENT_FORMATS).default('json') }));

const paise = z.number().int();
const nullableText = z.string().nullable();

/** How an order (or a clawback) was paid, or is still owed: one rail per line. */
export const paidBySchema = z.discriminatedUnion('rail', [
  z.object({
    rail: z.literal('transfer'),
    /** settled: the transfer paid it; in_flight: sent, not settled yet; awaiting: not sent yet. */
    status: z.enum(['settled', 'in_flight', 'awaiting']),
    payoutStatus: z.string(),
    amountPaise: paise,
    transferId: nullableText,
    /** Marked paid outside the app without a Razorpay transfer. */
    externalReference: nullableText,
    /** Razorpay's settlement that carried the transfer and its bank UTR, once recon has seen them. */
    settlementId: nullableText,
    utr: nullableText,
    /** The payout batch whose one transfer pays it (a pair on an hourly or daily schedule). */
    payoutBatchId: nullableText.optional(),
  }),
  z.object({
    rail: z.literal('split'),
    status: z.enum(['processed', 'in_flight']),
    amountPaise: paise,
    transferId: nullableText,
    settlementId: nullableText,
    utr: nullableText,
  }),
  z.object({
    rail: z.literal('offline'),
    /** paid: in a settlement batch line the bank paid; in_batch: in an open batch line; owed / owes_back:
     * an open line not in a batch yet, positive / negative. */
    status: z.enum(['paid', 'in_batch', 'owed', 'owes_back']),
    /** The offline ledger line, signed (negative: the vendor owes the platform). */
    amountPaise: paise,
    batchId: nullableText,
    reference: nullableText,
    utr: nullableText,
    paidOn: nullableText,
  }),
  z.object({ rail: z.literal('employer_direct'), amountPaise: paise }),
  /** Ops cancelled the payout: nothing is owed. */
  z.object({ rail: z.literal('not_owed'), payoutStatus: z.string(), amountPaise: paise }),
  /** No rail the statement knows accounts for it (e.g. a status added later): shown, never hidden. */
  z.object({ rail: z.literal('unknown'), detail: z.string(), amountPaise: paise }),
]);
export type PaidBy = z.infer<typeof paidBySchema>;
export type Rail = PaidBy['rail'];

export const statementLineSchema = z.object({
  kind: z.enum(['order', 'refund_clawback']),
  /** The IST day the order was paid, or the clawback recorded. */
  day: z.string(),
  at: z.string(),
  /** The order, or for a clawback the order whose refund it claws back. */
  orderId: z.string(),
  employerId: z.string(),
  paymentMethod: nullableText,
  /** The offline ledger's route label (direct_transfer, split, cash, …, refund_clawback). */
  route: nullableText,
  /** The order's money; null on a clawback line, which is not an order. */
  totalPaise: paise.nullable(),
  subsidyPaise: paise.nullable(),
  customerSharePaise: paise.nullable(),
  commissionPaise: paise.nullable(),
  vendorNetPaise: paise.nullable(),
  /** A cash order: the customer's share the vendor kept at the counter. */
  cashKeptPaise: paise,
  /** The refund made outside the app, on a clawback line. */
  refundId: nullableText,
  paidBy: paidBySchema,
  howPaid: z.string(),
});
export type StatementLine = z.infer<typeof statementLineSchema>;

export const statementTotalsSchema = z.object({
  orders: z.number().int(),
  totalPaise: paise,
  subsidyPaise: paise,
  customerSharePaise: paise,
  commissionPaise: paise,
  vendorNetPaise: paise,
  transfer: z.object({ settledPaise: paise, inFlightPaise: paise, awaitingPaise: paise }),
  split: z.object({ processedPaise: paise, inFlightPaise: paise }),
  /** Every offline line of the period, clawbacks included, signed. */
  offline: z.object({ paidPaise: paise, inBatchPaise: paise, openPaise: paise }),
  refundClawbackPaise: paise,
  cashKeptAtCounterPaise: paise,
  employerDirectPaise: paise,
  notOwedPaise: paise,
  /** The part of the orders' net no rail accounts for; 0 unless a line is `unknown`. */
  unexplainedPaise: paise,
});
export type StatementTotals = z.infer<typeof statementTotalsSchema>;

export const statementBalanceSchema = z.object({
  /** Open offline lines of the period, in an open batch or not: what the platform still owes (signed). */
  stillOwedPaise: paise,
  /** The open lines not in a batch yet. */
  openPaise: paise,
  /** Those lines net to zero or less: no payment; they stay open and net off the next settlement. */
  carriedForward: z.boolean(),
  words: z.string(),
});

export const statementSchema = z.object({
  vendor: z.object({ id: z.string(), name: z.string() }),
  period: z.object({ from: z.string(), to: z.string() }),
  generatedAt: z.string(),
  lines: z.array(statementLineSchema),
  totals: statementTotalsSchema,
  balance: statementBalanceSchema,
});
export type Statement = z.infer<typeof statementSchema>;
