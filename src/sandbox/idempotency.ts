/** Idempotency headers as Razorpay documents them (reference §2), one store per header:
 * - `X-Transfer-Idempotency` on direct transfers (4–36 of letters, digits, `-`, `_`, space);
 * - `X-Refund-Idempotency` on refunds (at least 10 of letters, digits, `-`, `_`).
 * The first answer under a key is kept, rejections included; the same key and body get that answer
 * again and never a second entity; the same key with a different body is a BAD_REQUEST with the
 * product's documented message; while the first request is still being processed, another one with
 * its key gets 409. Whether Razorpay replays a remembered rejection is unconfirmed; the sandbox does
 * (as RazorpayX payouts document), so clients must change the key after a definitive rejection. */
import { RazorpayApiError, badRequest } from './errors';
import { TrackedMap } from './tracked';

export interface StoredAnswer {
  status: number;
  body: unknown;
}

/** `answer` is null while the first request is in progress (such an entry is not saved: after a
 * restart that request never answered). */
export type IdempotencyEntry = { bodyFingerprint: string; answer: StoredAnswer | null };

export interface IdempotencyRules {
  header: string;
  keyFormat: RegExp;
  keyFormatMessage: string;
  differentBodyMessage: string;
}

export const TRANSFER_IDEMPOTENCY: IdempotencyRules = {
  header: 'X-Transfer-Idempotency',
  keyFormat: /^[A-Za-z0-9_\- ]{4,36}$/,
  keyFormatMessage: 'The X-Transfer-Idempotency header must be 4 to 36 characters: letters, digits, hyphen, underscore or space',
  // API-SRC's message for the generic idempotency path.
  differentBodyMessage: 'Different request body sent for the same Idempotency Header',
};

export const REFUND_IDEMPOTENCY: IdempotencyRules = {
  header: 'X-Refund-Idempotency',
  keyFormat: /^[A-Za-z0-9_-]{10,}$/,
  keyFormatMessage: 'The X-Refund-Idempotency header must be at least 10 characters: letters, digits, hyphen or underscore',
  // The documented example for refunds.
  differentBodyMessage: 'Different request with the same idempotency key has already been processed.',
};

/** Key order does not make two bodies different. */
export function fingerprint(value: unknown): string {
  const canonical = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(canonical) : v && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical((v as Record<string, unknown>)[k])])) : v;
  return JSON.stringify(canonical(value));
}

export type IdempotencyClaim =
  | { kind: 'new'; complete(answer: StoredAnswer): void; abandon(): void }
  | { kind: 'replay'; answer: StoredAnswer };

export class IdempotencyStore {
  /** Key → entry; the state file reads and restores it (persistence/collections.ts). */
  readonly entries = new TrackedMap<string, IdempotencyEntry>();

  constructor(private readonly rules: IdempotencyRules = TRANSFER_IDEMPOTENCY) {}

  /** Throws a RazorpayApiError for a bad key, a different body or a request in progress. */
  claim(key: string, body: unknown): IdempotencyClaim {
    if (!this.rules.keyFormat.test(key)) throw badRequest(this.rules.keyFormatMessage, this.rules.header);
    const bodyFingerprint = fingerprint(body);
    const existing = this.entries.get(key);
    if (existing) {
      if (existing.bodyFingerprint !== bodyFingerprint) throw badRequest(this.rules.differentBodyMessage);
      if (!existing.answer) {
        // API-SRC calls this a SERVER_ERROR_… code; the exact code string is unconfirmed.
        throw new RazorpayApiError(409, 'SERVER_ERROR_IDEMPOTENT_REQUEST_IN_PROGRESS', 'Request failed because another request is in progress with the same Idempotency Key');
      }
      return { kind: 'replay', answer: existing.answer };
    }
    const entry: IdempotencyEntry = { bodyFingerprint, answer: null };
    this.entries.set(key, entry);
    return {
      kind: 'new',
      complete: (answer) => {
        entry.answer = answer;
        if (this.entries.get(key) === entry) this.entries.markChanged(key);
      },
      abandon: () => {
        if (this.entries.get(key) === entry) this.entries.delete(key);
      },
    };
  }

  reset(): void {
    this.entries.clear();
  }
}
