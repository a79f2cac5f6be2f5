/** Payout schedules (issue 22 item 4): which batch window an instant falls in, and the batch's id.
 * Windows are half-open, [start, cutoff): an order paid exactly at a cutoff belongs to the window
 * that cutoff opens, never to both. India has no daylight saving, so IST is a fixed UTC+05:30. Pure. */
import { createHash } from 'node:crypto';
import { BATCH_ID_PREFIX } from '../contracts/payoutBatch';
import { IST_OFFSET_MS } from './calendar';

export const PAYOUT_SCHEDULES = ['per_order', 'hourly', 'daily'] as const;
export type PayoutSchedule = (typeof PAYOUT_SCHEDULES)[number];
export type BatchSchedule = Exclude<PayoutSchedule, 'per_order'>;

/** Whether an order's payout joins its pair's batch instead of being claimed: the pair pays on a
 * schedule, the payout is open for a claim, its key never went out (one that did goes on alone), and
 * its row is not one the provider's ledger may be newer than (a restored database can forget a
 * transfer that paid it: its claim asks the provider by its note first, and only a finding clears
 * the mark, after which it may join). */
export function joinsBatch(p: { schedule: PayoutSchedule | null; status: string; keySent: boolean; providerMayKnow: boolean }): p is { schedule: BatchSchedule; status: string; keySent: false; providerMayKnow: false } {
  return p.schedule !== null && p.schedule !== 'per_order' && (p.status === 'pending' || p.status === 'failed') && !p.keySent && !p.providerMayKnow;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** A pair's daily cutoff (IST) when none is set. */
export const DEFAULT_DAILY_CUTOFF_IST = '18:00';

export interface BatchWindow {
  schedule: BatchSchedule;
  start: Date;
  cutoff: Date;
}

/** `HH:MM` or `HH:MM:SS` (PostgreSQL's `time` text) as milliseconds after IST midnight. */
export function cutoffOfDay(time: string): number {
  const m = /^(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(time);
  if (!m) throw new RangeError(`not an HH:MM time: ${time}`);
  const [h, min, s] = [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)];
  if (h > 23 || min > 59 || s > 59) throw new RangeError(`not a time of day: ${time}`);
  return ((h * 60 + min) * 60 + s) * 1000;
}

/** The window `at` falls in: the IST hour for `hourly`; for `daily`, the day that ends at the next
 * `dailyCutoff` (IST) strictly after `at`. */
export function windowAt(schedule: BatchSchedule, at: Date, dailyCutoff = DEFAULT_DAILY_CUTOFF_IST): BatchWindow {
  const istMs = at.getTime() + IST_OFFSET_MS;
  if (schedule === 'hourly') {
    const startIst = Math.floor(istMs / HOUR_MS) * HOUR_MS;
    return { schedule, start: new Date(startIst - IST_OFFSET_MS), cutoff: new Date(startIst + HOUR_MS - IST_OFFSET_MS) };
  }
  const offset = cutoffOfDay(dailyCutoff);
  // Shift so that the cutoff is "midnight": the window is then the shifted calendar day.
  const startIst = Math.floor((istMs - offset) / DAY_MS) * DAY_MS + offset;
  return { schedule, start: new Date(startIst - IST_OFFSET_MS), cutoff: new Date(startIst + DAY_MS - IST_OFFSET_MS) };
}

/** The window after `w` (for an order that arrives once `w` has closed). */
export function nextWindow(w: BatchWindow, dailyCutoff = DEFAULT_DAILY_CUTOFF_IST): BatchWindow {
  return windowAt(w.schedule, w.cutoff, dailyCutoff);
}

/** The batch's id, the same for every joiner: derived from the pair, the schedule and the cutoff.
 * 36 characters at most, because it is also the first idempotency key of the batch's transfer. */
export function batchIdOf(pair: { employerId: string; vendorId: string }, w: BatchWindow): string {
  const digest = createHash('sha256').update(`${pair.employerId}\u0000${pair.vendorId}\u0000${w.schedule}\u0000${w.cutoff.toISOString()}`).digest('hex');
  return `${BATCH_ID_PREFIX}${digest.slice(0, 30)}`;
}
