/** The API's share of the Razorpay budget (issue 22 item 1): its own provider calls (the order
 * create behind checkout and behind a wallet top-up) pass a token bucket per API process. A request
 * the bucket cannot admit is refused with 503 + Retry-After *before* anything is recorded, so a
 * client retrying with the same client reference meets a clean slate. A token taken for a request
 * that turns out to need no call (a retry whose Razorpay order already exists) is given back. */
import { Counter } from 'prom-client';
import { AppError } from '../appError';
import { TokenBucket } from '../domain/tokenBucket';

export interface ProviderAdmission {
  /** Marks the token used: the provider call is about to be made. */
  spend(): void;
  /** Gives the token back unless it was spent. Call it once the request is done, whatever happened. */
  close(): void;
}

export class ApiProviderBudget {
  private readonly bucket: TokenBucket;
  /** Registered by the API beside its other metrics (one budget, one series, per process). */
  readonly refusals = new Counter({ name: 'payouts_api_provider_budget_refused_total', help: 'Requests this API process refused with 503 because its Razorpay budget (API_RAZORPAY_RPS, API_RAZORPAY_BURST) was spent', labelNames: ['call'], registers: [] });

  constructor(settings: { ratePerSecond: number; burst: number }, nowMs?: () => number) {
    this.bucket = new TokenBucket({ ratePerSecond: settings.ratePerSecond, size: settings.burst }, nowMs);
    // The series exist from the start, so increase() sees a 0 before the first refusal.
    for (const call of ['order', 'top-up'] as const) this.refusals.inc({ call }, 0);
  }

  /** Admits one provider call or throws the 503 the error handler turns into the envelope. */
  admit(call: 'order' | 'top-up'): ProviderAdmission {
    if (!this.bucket.take()) {
      this.refusals.inc({ call });
      const retryAfterSeconds = Math.max(1, Math.ceil(this.bucket.msUntilNextToken() / 1000));
      throw new AppError(503, 'provider_budget_exhausted',
        `this API process is at its Razorpay budget; nothing was recorded for the ${call}, retry in ${retryAfterSeconds} s with the same client reference`,
        { retryAfterSeconds });
    }
    let spent = false;
    let closed = false;
    return {
      spend: () => { spent = true; },
      close: () => {
        if (closed) return;
        closed = true;
        if (!spent) this.bucket.giveBack();
      },
    };
  }
}
