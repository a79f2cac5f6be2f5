/** Razorpay signatures: webhooks are signed over the exact raw body with the webhook secret; the
 * checkout callback signs `order_id|payment_id` with the API key secret. Both are lowercase hex
 * HMAC-SHA256, compared in constant time. */
import { createHmac, timingSafeEqual } from 'node:crypto';

export function hmacSha256Hex(message: string | Buffer, secret: string): string {
  return createHmac('sha256', secret).update(message).digest('hex');
}

function sameHex(expected: string, given: string): boolean {
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(given, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Verifies `X-Razorpay-Signature` against the raw request body (never re-serialised JSON). */
export function validateWebhookSignature(rawBody: string | Buffer, signature: string, secret: string): boolean {
  if (typeof signature !== 'string' || signature.length === 0) return false;
  return sameHex(hmacSha256Hex(rawBody, secret), signature);
}

/** Verifies the checkout callback's `razorpay_signature`. */
export function validatePaymentSignature(p: { orderId: string; paymentId: string; signature: string }, keySecret: string): boolean {
  if (typeof p.signature !== 'string' || p.signature.length === 0) return false;
  return sameHex(hmacSha256Hex(`${p.orderId}|${p.paymentId}`, keySecret), p.signature);
}
