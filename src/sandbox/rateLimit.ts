/** The sandbox's rate limiter: a token bucket per API key and per call class. Razorpay publishes no
 * numbers (reference §7: the only signal is a 429), so the rates are configured; a class whose rate
 * is 0 is not limited. Pure: the clock is injected, and it is a real (monotonic) one, not the
 * sandbox's settable clock, which tests move by days. */
import { TokenBucket } from '../domain/tokenBucket';
import type { FaultEndpoint, RateLimitSettings } from './control';

export type CallClass = 'write' | 'read';


export const RATE_LIMIT_OFF: RateLimitSettings = { writeRps: 0, readRps: 0, burst: 0 };

/** Every call that creates or moves something is a write; the rest read. A Record, so a new
 * endpoint does not compile until it has a class. */
const CALL_CLASS: Record<Exclude<FaultEndpoint, '*'>, CallClass> = {
  'orders.create': 'write', 'payments.capture': 'write', 'payments.transfers': 'write', 'refunds.create': 'write',
  'transfers.create': 'write', 'transfers.reverse': 'write',
  'orders.fetch': 'read', 'orders.payments': 'read', 'payments.fetch': 'read', 'payments.list': 'read', 'payments.refunds': 'read', 'refunds.fetch': 'read',
  'transfers.fetch': 'read', 'transfers.list': 'read', 'transfers.reversals': 'read',
  'settlements.fetch': 'read', 'settlements.list': 'read', 'settlements.recon': 'read',
};

export function callClassOf(endpoint: Exclude<FaultEndpoint, '*'>): CallClass {
  return CALL_CLASS[endpoint];
}

export class TokenBuckets {
  private buckets = new Map<string, TokenBucket>();

  constructor(
    private settings: RateLimitSettings,
    private readonly nowMs: () => number = () => performance.now(),
  ) {}

  /** New rates from now on (a bench sets its world up unlimited, then limits the peak); every bucket
   * starts full at the new rate. */
  configure(settings: RateLimitSettings): void {
    this.settings = settings;
    this.buckets.clear();
  }

  get enabled(): boolean {
    return this.settings.writeRps > 0 || this.settings.readRps > 0;
  }

  /** Spends one token of `key`'s `callClass` bucket; false when it is empty (the call is refused,
   * and spends nothing). A bucket starts full. */
  take(key: string, callClass: CallClass): boolean {
    const rps = callClass === 'write' ? this.settings.writeRps : this.settings.readRps;
    if (rps <= 0) return true;
    const id = `${callClass}\u0000${key}`;
    let bucket = this.buckets.get(id);
    if (!bucket) {
      bucket = new TokenBucket({ ratePerSecond: rps, size: this.settings.burst > 0 ? this.settings.burst : Math.max(1, rps) }, this.nowMs);
      this.buckets.set(id, bucket);
    }
    return bucket.take();
  }

  /** Every bucket full again (the sandbox's reset). */
  reset(): void {
    this.buckets.clear();
  }
}
