/** One token bucket: starts full (`size` tokens), refills continuously at `ratePerSecond` up to its
 * size, and each call spends one token. Pure: the clock is injected (a monotonic one by default, so
 * a wall-clock step cannot mint or eat tokens). Shared by the sandbox's limiter and the API's
 * provider-call budget. */

export interface TokenBucketSettings {
  ratePerSecond: number;
  /** Tokens a full bucket lets through at once. */
  size: number;
}

/** Below a whole token by no more than float noise still counts as a whole one. */
const EPSILON = 1e-9;

export class TokenBucket {
  private tokens: number;
  private refilledAtMs: number;

  constructor(
    private readonly settings: TokenBucketSettings,
    private readonly nowMs: () => number = () => performance.now(),
  ) {
    if (!(settings.ratePerSecond > 0)) throw new Error(`a token bucket needs a positive rate, not ${settings.ratePerSecond}`);
    if (!(settings.size > 0)) throw new Error(`a token bucket needs a positive size, not ${settings.size}`);
    this.tokens = settings.size;
    this.refilledAtMs = nowMs();
  }

  /** Spends one token; false when there is none (and nothing is spent). */
  take(): boolean {
    this.refill();
    if (this.tokens < 1 - EPSILON) return false;
    this.tokens = Math.max(0, this.tokens - 1);
    return true;
  }

  /** Returns a token taken for a call that was not made after all. */
  giveBack(): void {
    this.refill();
    this.tokens = Math.min(this.settings.size, this.tokens + 1);
  }

  /** How long until a take can succeed (0: now). */
  msUntilNextToken(): number {
    this.refill();
    const missing = 1 - this.tokens;
    return missing <= EPSILON ? 0 : (missing * 1000) / this.settings.ratePerSecond;
  }

  private refill(): void {
    const now = this.nowMs();
    // A clock that went backwards makes no tokens; time is counted from the new reading.
    const elapsedMs = Math.max(0, now - this.refilledAtMs);
    this.tokens = Math.min(this.settings.size, this.tokens + (elapsedMs * this.settings.ratePerSecond) / 1000);
    this.refilledAtMs = now;
  }
}
