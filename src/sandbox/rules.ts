/** Request validation with Razorpay's documented messages (reference §0, §1.2, §3.3). */
import { z } from 'zod';
import { badRequest } from './errors';
import type { NotesJson } from './entities';

export const MIN_AMOUNT_PAISE = 100;
export const MAX_NOTES = 15;

/** Parses with zod; the first problem becomes a Razorpay BAD_REQUEST_ERROR naming its field. */
export function parseRequest<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const parsed = schema.safeParse(input ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const field = issue.path.join('.') || undefined;
  const missing = issue.code === 'invalid_type' && issue.message.includes('undefined');
  throw badRequest(missing ? `The ${field} field is required.` : `The ${field ?? 'request'} is invalid: ${issue.message}`, field);
}

const noteValue = z.union([z.string(), z.number(), z.boolean()]).transform(String);
export const notesInput = z
  .union([z.record(z.string(), noteValue), z.array(z.unknown()).length(0).transform(() => ({}) as Record<string, string>)])
  .optional()
  .transform((v) => v ?? {});

/** Throws the API-SRC notes messages; returns Razorpay's serialisation (`[]` when empty). */
export function checkNotes(notes: Record<string, string>): NotesJson {
  const entries = Object.entries(notes);
  if (entries.length > MAX_NOTES) throw badRequest('Number of fields in notes should be less than or equal to 15', 'notes');
  for (const [k, v] of entries) {
    if (k.length > 255) throw badRequest('Notes key cannot be greater 255 characters', 'notes');
    if (v.length > 512) throw badRequest('Notes value cannot be greater 512 characters', 'notes');
  }
  return entries.length > 0 ? { ...notes } : [];
}

export function checkAmount(amount: number, field = 'amount'): void {
  if (amount < MIN_AMOUNT_PAISE) throw badRequest(field === 'amount' ? 'The amount must be at least INR 1.00' : `The ${field} must be at least 100.`, field);
}

export function checkCurrency(currency: string, what: 'transfers' | 'orders' = 'orders'): void {
  if (currency !== 'INR') throw badRequest(what === 'transfers' ? 'The currency should be INR for transfers' : 'Currency is not supported', 'currency');
}

const amount = z.number().int();
const transferItem = z.object({
  account: z.string(),
  amount,
  currency: z.string().default('INR'),
  notes: notesInput,
  linked_account_notes: z.array(z.string()).optional(),
  on_hold: z.union([z.boolean(), z.literal(0), z.literal(1)]).optional().transform((v) => Boolean(v)),
  on_hold_until: z.number().int().nullable().optional(),
});

export const directTransferBody = transferItem;
export const paymentTransfersBody = z.object({ transfers: z.array(transferItem).min(1) });
export const orderBody = z.object({
  amount,
  currency: z.string().default('INR'),
  receipt: z.string().max(40, 'The receipt may not be greater than 40 characters.').nullable().optional(),
  notes: notesInput,
  partial_payment: z.boolean().optional(),
  transfers: z.array(transferItem).optional(),
});
export const captureBody = z.object({ amount: z.coerce.number().int(), currency: z.string().default('INR') });
export const refundBody = z.object({
  amount: z.coerce.number().int().optional(),
  speed: z.enum(['normal', 'optimum']).default('normal'),
  notes: notesInput,
  receipt: z.string().max(40).nullable().optional(),
  // Documented as `1` in the sample and as `true` in the prose: both are read.
  reverse_all: z.union([z.boolean(), z.literal(0), z.literal(1), z.literal('0'), z.literal('1')]).optional().transform((v) => v === true || v === 1 || v === '1'),
});
export const reversalBody = z.object({
  amount: z.number().int().optional(),
  notes: notesInput,
});

/** Generic list parameters (reference §0): count 1..max, skip ≥ 0, from/to epochs. */
export function parseListQuery(query: Record<string, unknown>, maxCount = 100): { from: number | null; to: number | null; count: number; skip: number } {
  const int = (name: string, fallback: number | null): number | null => {
    const raw = query[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n)) throw badRequest(`The ${name} must be an integer.`, name);
    return n;
  };
  const count = int('count', 10)!;
  const skip = int('skip', 0)!;
  if (count < 1) throw badRequest('The count must be at least 1.', 'count');
  if (count > maxCount) throw badRequest(`The count may not be greater than ${maxCount}.`, 'count');
  if (skip < 0) throw badRequest('The skip must be at least 0.', 'skip');
  return { from: int('from', null), to: int('to', null), count, skip };
}

export function collection<T>(items: T[]): { entity: 'collection'; count: number; items: T[] } {
  return { entity: 'collection', count: items.length, items };
}
