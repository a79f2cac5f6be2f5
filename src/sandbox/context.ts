/** What every sandbox operation works with: state, clock, webhooks, options, and timers that die
 * with the sandbox. */
import type { SandboxClock } from './clock';
import type { SandboxState } from './state';
import type { WebhookDispatcher } from './webhooks';
import type { IdempotencyStore } from './idempotency';
import type { FaultInjector } from './faults';
import type { TokenBuckets } from './rateLimit';

export interface SandboxOptions {
  platformAccountId: string;
  /** pending → processed delay for transfers and refunds; 0 = at once. */
  transferProcessingDelayMs: number;
}

export class Timers {
  private live = new Map<NodeJS.Timeout, number>();

  later(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.live.delete(t);
      fn();
    }, ms);
    this.live.set(t, ms);
  }

  /** Work queued with no delay (e.g. a refund processed "at once") that has not run yet. */
  immediatePending(): boolean {
    for (const ms of this.live.values()) if (ms === 0) return true;
    return false;
  }

  clear(): void {
    for (const t of this.live.keys()) clearTimeout(t);
    this.live.clear();
  }
}

export interface SandboxContext {
  state: SandboxState;
  clock: SandboxClock;
  webhooks: WebhookDispatcher;
  /** X-Transfer-Idempotency (direct transfers). */
  idempotency: IdempotencyStore;
  /** X-Refund-Idempotency (refunds). */
  refundIdempotency: IdempotencyStore;
  faults: FaultInjector;
  /** Razorpay's rate limit, in front of the fault injector (off unless configured). */
  rateLimit: TokenBuckets;
  timers: Timers;
  options: SandboxOptions;
}
