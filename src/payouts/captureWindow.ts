/** Whether a batched order's capture waits for the once-more look's listing window (issue 37, the
 * `daily` goal). Each run of the missed-webhook sweep (every `sweepEveryMs`) lists the windows up to
 * `recheckMs` ago, so the payment's creation second is listed about recheck + one sweep after it.
 * When that comes a sweep before the batch's cutoff, the order waits for it (its batch pays at the
 * cutoff anyway) and costs no capture read of its own; otherwise, or once the sweep is two runs late,
 * it takes a capture listing pass as a per-order payout does. Pure. */

export interface CaptureWindowInput {
  /** When Razorpay made the payment (Unix seconds). */
  createdS: number;
  nowMs: number;
  /** The cutoff of the batch the order joins (epoch ms). */
  cutoffMs: number;
  recheckMs: number;
  sweepEveryMs: number;
}

export type CaptureWindowPlan =
  /** Wait this long, then ask again. */
  | { kind: 'await'; ms: number }
  /** Too close to the cutoff, or the sweep is late: a capture listing pass. */
  | { kind: 'pass'; why: 'cutoff' | 'sweep_late' };

/** How often a run that waits past the window's expected listing asks again, at least. */
export const WINDOW_POLL_MIN_MS = 5_000;

export function captureWindowPlan(i: CaptureWindowInput): CaptureWindowPlan {
  const expectedMs = i.createdS * 1000 + i.recheckMs + i.sweepEveryMs;
  const lastUsefulMs = i.cutoffMs - i.sweepEveryMs;
  if (expectedMs > lastUsefulMs || i.nowMs > lastUsefulMs) return { kind: 'pass', why: 'cutoff' };
  if (i.nowMs > expectedMs + 2 * i.sweepEveryMs) return { kind: 'pass', why: 'sweep_late' };
  if (i.nowMs < expectedMs) return { kind: 'await', ms: expectedMs - i.nowMs };
  // Every half sweep, the last ask just past the two late runs: each ask is a workflow task, and at
  // a tenth of a sweep a thousand runs waiting on a late sweep (bench:day) asked ~20 times each.
  const lateMs = expectedMs + 2 * i.sweepEveryMs + 1 - i.nowMs;
  return { kind: 'await', ms: Math.max(WINDOW_POLL_MIN_MS, Math.min(Math.floor(i.sweepEveryMs / 2), lateMs)) };
}

/** The longest a payout waits for its window (the expected listing and the two late sweeps
 * captureWindowPlan allows), measured from its first wait: the payout sweep leaves it alone so long. */
export function captureWindowWaitMs(knobs: { LATE_CAPTURE_RECHECK_MS: number; MISSED_WEBHOOK_SWEEP_EVERY_MS: number }): number {
  return knobs.LATE_CAPTURE_RECHECK_MS + 3 * knobs.MISSED_WEBHOOK_SWEEP_EVERY_MS;
}

/** A payout (`payouts` as `alias`) waiting for its window now: pending with its mark (captureListing.ts
 * sets it when the wait begins and clears it when the payout goes to a pass). The one predicate the
 * once-more look, the send backlog and the payout sweep read it by. */
export const waitingForWindowSql = (alias: string): string => `(${alias}.status = 'pending' AND ${alias}.capture_window_since IS NOT NULL)`;

/** A payout (`payouts` as `alias`) that has sent nothing yet and that a once-more look window may
 * treat as decided: pending, never claimed (or waiting for its window), and not marked as possibly
 * older than the provider after a restore. A refund the window finds holds it before any send. */
export const sentNothingYetSql = (alias: string): string =>
  `(${alias}.status = 'pending' AND (${alias}.attempts = 0 OR ${waitingForWindowSql(alias)}) AND ${alias}.provider_may_know_since IS NULL)`;
