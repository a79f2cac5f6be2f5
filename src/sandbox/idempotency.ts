/** X-Transfer-Idempotency on direct transfers (Route docs): the first answer under a key is kept,
 * rejections included; the same key and body get that answer again and never a second transfer;
 * the same key with a different body is a BAD_REQUEST; while the first request is still being
 * processed, another one with its key gets 409. Whether Razorpay replays a remembered rejection is
 * unconfirmed; the sandbox does (as RazorpayX payouts document). */
import { RazorpayApiError, badRequest } from './errors';

export interface StoredAnswer {
  status: number;
  body: unknown;
}

type Entry = { bodyFingerprint: string; answer: StoredAnswer | null };

const KEY_FORMAT = /^[A-Za-z0-9_\- ]{4,36}$/;

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
  private entries = new Map<string, Entry>();

  /** Throws a RazorpayApiError for a bad key, a different body or a request in progress. */
  claim(key: string, body: unknown): IdempotencyClaim {
    if (!KEY_FORMAT.test(key)) throw badRequest('The X-Transfer-Idempotency header must be 4 to 36 characters: letters, digits, hyphen, underscore or space', 'X-Transfer-Idempotency');
    const bodyFingerprint = fingerprint(body);
    const existing = this.entries.get(key);
    if (existing) {
      if (existing.bodyFingerprint !== bodyFingerprint) throw badRequest('Different request body sent for the same Idempotency Header');
      if (!existing.answer) {
        // API-SRC calls this a SERVER_ERROR_… code; the exact code string is unconfirmed.
        throw new RazorpayApiError(409, 'SERVER_ERROR_IDEMPOTENT_REQUEST_IN_PROGRESS', 'Request failed because another request is in progress with the same Idempotency Key');
      }
      return { kind: 'replay', answer: existing.answer };
    }
    const entry: Entry = { bodyFingerprint, answer: null };
    this.entries.set(key, entry);
    return {
      kind: 'new',
      complete: (answer) => {
        entry.answer = answer;
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
