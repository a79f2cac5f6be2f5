/** Our own entity ids, Razorpay-style: a prefix and 14 alphanumerics. The order id is also the
 * Razorpay order's `receipt`, which comes back as `order_receipt` in recon rows. */
import { createHash, randomInt } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function newId(prefix: string): string {
  let suffix = '';
  for (let i = 0; i < 14; i++) suffix += ALPHABET[randomInt(ALPHABET.length)];
  return `${prefix}_${suffix}`;
}

export const newOrderId = (): string => newId('ord');
export const newTopupId = (): string => newId('top');
/** Sent as the gateway refund `receipt`: a retry with the same id cannot refund twice. The payment
 * and the reason determine it (one request per pair), so a request re-created after the database
 * was restored to an earlier point carries the receipt of the refund already made. */
export function refundIdOf(paymentId: string, reason: string): string {
  const hash = createHash('sha256').update(`refund|${paymentId}|${reason}`).digest();
  let suffix = '';
  for (let i = 0; i < 14; i++) suffix += ALPHABET[hash[i]! % ALPHABET.length];
  return `rfr_${suffix}`;
}

export const ORDER_ID_PATTERN = /^ord_[A-Za-z0-9]{14}$/;
