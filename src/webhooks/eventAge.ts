/** The replay window (issue 21 item 7). The signature proves Razorpay sent a body once, not when:
 * a captured body stays valid for ever, and the event id beside it is an unsigned header. So a
 * signed event is applied only while its own `created_at` (inside the signed bytes) is within the
 * span Razorpay retries a delivery (24 h), and not ahead of our clock by more than the skew we allow.
 * The skew also widens the old edge, so a last retry from a gateway clock a little behind ours is
 * still taken. Pure: the receiver passes the clock. */

export interface ReplayWindow {
  maxAgeSeconds: number;
  clockSkewSeconds: number;
}

export type EventAgeVerdict = 'fresh' | 'too_old' | 'from_future';

export function eventAgeVerdict(createdAtSec: number, nowMs: number, window: ReplayWindow): EventAgeVerdict {
  const ageSeconds = nowMs / 1000 - createdAtSec;
  if (ageSeconds > window.maxAgeSeconds + window.clockSkewSeconds) return 'too_old';
  if (-ageSeconds > window.clockSkewSeconds) return 'from_future';
  return 'fresh';
}
