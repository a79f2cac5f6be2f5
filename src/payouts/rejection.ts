/** Which provider rejections of a direct transfer are worth retrying later. Codes from Razorpay's
 * API (shared/razorpay-reference.md §1.3, §1.5). Unknown codes are treated as permanent: parking a
 * payout for a human is safe, retrying blindly on an error we do not understand is not. */

export type RejectionKind = 'transient' | 'permanent';

/** The platform balance can come back (top-up, settlements): retry after a durable backoff. */
const TRANSIENT_CODES: ReadonlySet<string> = new Set([
  'BAD_REQUEST_TRANSFER_INSUFFICIENT_BALANCE',
  'BAD_REQUEST_NEGATIVE_BALANCE_BREACHED',
]);

export function classifyRejection(code: string): RejectionKind {
  return TRANSIENT_CODES.has(code) ? 'transient' : 'permanent';
}

/** Durable backoff before the next try after a transient failure: doubling, capped. */
export function retryDelayMs(attempts: number, policy: { retryBackoffMs: number; retryBackoffMaxMs: number }): number {
  const exponent = Math.max(0, Math.min(attempts - 1, 20));
  return Math.min(policy.retryBackoffMs * 2 ** exponent, policy.retryBackoffMaxMs);
}
