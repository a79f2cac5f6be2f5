/** Captures confirmed from Razorpay's payment listing (issue 37). Confirming each online order's
 * capture with one payments.fetch costs a provider read per order; a day of a million orders does not
 * fit the reads budget that way. Instead a payout that needs its capture confirmed waits (at most
 * `gatherMs` after the previous pass) for one **listing pass**: GET /payments?from&count=100&skip,
 * every page of the payments created since the oldest capture recorded after the previous pass. The
 * pass confirms every recorded capture its pages show exactly as we recorded it, for every payout
 * waiting then and for those whose runs have not started yet.
 *
 * The money rule does not change: no platform money moves for a capture Razorpay has not shown. A
 * capture is *covered* by a pass that started after we recorded the capture and listed from at or
 * before the payment's creation. Covered and still not confirmed (the listing did not show it, or
 * showed it otherwise, or could not be read), the send or the batch join asks Razorpay for that
 * payment alone, as before (captureConfirmation.ts), and a forged capture still goes to review.
 *
 * A batched order (its pair pays hourly or daily) needs no pass of its own when the missed-webhook
 * sweep's once-more look will list its payment a sweep before its batch's cutoff: it waits for that
 * window (captureWindow.ts, moneyin/paymentRecheck.ts), which confirms the capture as a pass would. */
import { MAX_PASS_PAGES } from '../contracts/payout';
import type { Db } from '../db/pool';
import { inTransaction } from '../db/pool';
import { PROVIDER_LIST_PAGE, type Gateway } from '../gateway/types';
import { logger } from '../logger';
import { DEFAULT_DAILY_CUTOFF_IST, joinsBatch, windowAt, type PayoutSchedule } from '../domain/batchWindow';
import { paymentCreatedSecondsSql } from '../moneyin/paymentCreatedAt';
import { confirmListedCaptures } from './captureConfirmation';
import { captureWindowPlan } from './captureWindow';

export interface ListingKnobs {
  /** A new pass starts no sooner than this after the previous one: the payouts due meanwhile share it. */
  gatherMs: number;
  /** A capture recorded longer ago than this, or made (authorised) this long before we recorded it, is
   * asked for alone: a pass never lists further back than that. */
  lookbackSeconds: number;
  /** A pass that has not started or written a page for this long (its runner died, or a restored
   * database brought it back unfinished) no longer holds the others back. Renewed by every page. */
  leaseMs: number;
  /** The once-more look's windows, which confirm a batched order's capture (captureWindow.ts). */
  window: { recheckMs: number; sweepEveryMs: number };
}

/** Where an order's capture stands against the listing passes. */
export type CaptureListingStep =
  /** Nothing to wait for: not an online capture, confirmed, or to be asked alone (`fetch`). */
  | { kind: 'settled'; why: 'not_needed' | 'confirmed' | 'fetch' }
  /** This payout runs the next pass (on the reads budget), then asks again. */
  | { kind: 'list'; passId: number }
  /** A pass is in flight, or the previous one is too recent: ask again after `ms`. */
  | { kind: 'wait'; ms: number }
  /** A batched order waits for the once-more look's window to list its payment: ask again after `ms`. */
  | { kind: 'await_window'; ms: number };

/** `recorded_at` as PostgreSQL's text: a JS Date would drop its microseconds, and a pass started
 * within the same millisecond would then cover a capture recorded after it. */
interface CaptureRow { payment_id: string | null; confirmed: boolean; recorded_at: string | null; created_s: string | null; stale: boolean }

const CREATED_S = paymentCreatedSecondsSql('pay');

/** Within the lookback: recorded at most $1 seconds ago, and made (authorised) at most $1 seconds
 * before we recorded it. A capture outside it is asked for alone. */
const WITHIN_LOOKBACK = (param: string): string =>
  `(pay.updated_at >= now() - make_interval(secs => ${param}) AND extract(epoch FROM pay.updated_at) - ${CREATED_S} <= ${param})`;

/** The order's recorded capture: the payment it was paid on, when we recorded its status, and when
 * Razorpay made it (the payload's created_at, the listing's `from`). */
const CAPTURE_SQL = `
SELECT pay.id AS payment_id, pay.capture_confirmed_at IS NOT NULL AS confirmed, pay.updated_at::text AS recorded_at,
       ${CREATED_S} AS created_s, NOT COALESCE(${WITHIN_LOOKBACK('$2')}, false) AS stale
  FROM orders o
  LEFT JOIN payments pay ON pay.id = o.paid_payment_id
 WHERE o.id = $1 AND o.payment_method = 'online' AND o.customer_share_paise > 0`;

/** A pass that covers a capture recorded at $1 and made at $2: it started after the one and listed
 * from the other; in flight (not finished, lease alive) or finished. */
const COVERING_PASS_SQL = `
SELECT id, finished_at IS NOT NULL AS finished,
       GREATEST(0, extract(epoch FROM lease_until - now()) * 1000)::int AS lease_ms_left
  FROM provider_listing_passes
 WHERE kind = 'payments' AND started_at > $1 AND listed_from_s <= $2
   AND (finished_at IS NOT NULL OR lease_until > now())
 ORDER BY finished_at IS NOT NULL DESC, id DESC LIMIT 1`;

/** The previous pass: whether one is in flight, and how long ago it started. */
const LATEST_PASS_SQL = `
SELECT finished_at IS NULL AND lease_until > now() AS in_flight,
       GREATEST(0, extract(epoch FROM now() - started_at) * 1000)::int AS ms_since_start,
       GREATEST(0, extract(epoch FROM lease_until - now()) * 1000)::int AS lease_ms_left
  FROM provider_listing_passes WHERE kind = 'payments' ORDER BY id DESC LIMIT 1`;

/** The oldest creation among captures no finished pass covers yet (recorded after the latest
 * successful pass started, within the lookback): where the next pass lists from. */
const LIST_FROM_SQL = `
SELECT min(${CREATED_S}) AS from_s
  FROM payments pay
 WHERE pay.status = 'captured' AND pay.capture_confirmed_at IS NULL AND pay.order_id IS NOT NULL
   AND ${WITHIN_LOOKBACK('$1')}
   AND pay.updated_at > COALESCE((SELECT max(started_at) FROM provider_listing_passes
                                   WHERE kind = 'payments' AND finished_at IS NOT NULL AND error IS NULL), '-infinity')`;

/** How soon to look again while a pass is in flight: its pages go at the read budget's pace. */
const IN_FLIGHT_RECHECK_MS = 1_000;

/** One lock for deciding who runs the next pass (beside the outbox's 7_233_201). */
const LISTING_LOCK = 7_233_301;

/** A batched order's capture against the once-more look's windows: what its batch join needs (the
 * pair's schedule, its cutoff, the payout open for a join) and whether a finished window listed the
 * payment's creation second: `listed` true when one started after we recorded the capture (it could
 * confirm it), false when only earlier ones did (none will list it again), null when none has. */
const WINDOW_SQL = `
SELECT p.id AS payout_id, ev.payout_schedule AS schedule, ev.payout_cutoff_ist::text AS cutoff_ist, o.paid_at,
       extract(epoch FROM now()) * 1000 AS now_ms,
       p.status, p.key_first_sent_at IS NOT NULL AS key_sent, p.provider_may_know_since IS NOT NULL AS may_know,
       p.capture_window_since IS NOT NULL AS waiting,
       (SELECT bool_or(w.started_at > pay.updated_at) FROM provider_listing_passes w
         WHERE w.kind = 'payments_recheck' AND w.finished_at IS NOT NULL AND w.error IS NULL
           AND w.listed_to_s >= ${CREATED_S} AND w.listed_from_s <= ${CREATED_S}) AS listed
  FROM orders o
  JOIN payments pay ON pay.id = o.paid_payment_id
  JOIN payouts p ON p.order_id = o.id
  LEFT JOIN employer_vendor ev ON ev.employer_id = o.employer_id AND ev.vendor_id = o.vendor_id
 WHERE o.id = $1`;

interface WindowRow {
  payout_id: string; schedule: PayoutSchedule | null; cutoff_ist: string | null; paid_at: Date | null; now_ms: string;
  status: string; key_sent: boolean; may_know: boolean; waiting: boolean; listed: boolean | null;
}

/** A batched order's capture confirmed by its window (captureWindow.ts): settled once a window has
 * listed it, a wait while one is due before the cutoff, else null (a pass, as for any payout). */
async function windowStep(db: Db, orderId: string, createdS: number, knobs: ListingKnobs['window']): Promise<CaptureListingStep | null> {
  const row = (await db.query<WindowRow>(WINDOW_SQL, [orderId])).rows[0];
  if (!row) return null;
  // No longer waiting (a pass, or a fetch): unmarked, so it counts as due for its send again.
  const stopWaiting = async <T>(step: T): Promise<T> => {
    if (row.waiting) await db.query('UPDATE payouts SET capture_window_since = NULL WHERE id = $1', [row.payout_id]);
    return step;
  };
  const rule = { schedule: row.schedule, status: row.status, keySent: row.key_sent, providerMayKnow: row.may_know };
  if (!row.paid_at || !joinsBatch(rule)) return stopWaiting(null);
  // Listed after the capture was recorded and not confirmed: the window showed it otherwise, or not
  // at all; asked alone. Listed only before it was recorded: no window will list it again; a pass.
  if (row.listed === true) return stopWaiting({ kind: 'settled', why: 'fetch' } as const);
  if (row.listed === false) return stopWaiting(null);
  const cutoff = windowAt(rule.schedule, row.paid_at, row.cutoff_ist ?? DEFAULT_DAILY_CUTOFF_IST).cutoff;
  const plan = captureWindowPlan({ createdS, nowMs: Math.floor(Number(row.now_ms)), cutoffMs: cutoff.getTime(), ...knobs });
  if (plan.kind === 'pass') return stopWaiting(null);
  // Marked: the window applies this order's payment while its payout is still pending (its once-more look).
  await db.query('UPDATE payouts SET capture_window_since = COALESCE(capture_window_since, now()) WHERE id = $1', [row.payout_id]);
  return { kind: 'await_window', ms: plan.ms };
}

/** Where the order's capture stands; takes the next pass when it is this payout's to run. `byWindow`:
 * the run can wait for a window (runs recorded before it cannot). */
export async function captureListingStep(db: Db, orderId: string, knobs: ListingKnobs, opts: { byWindow?: boolean } = {}): Promise<CaptureListingStep> {
  const row = (await db.query<CaptureRow>(CAPTURE_SQL, [orderId, knobs.lookbackSeconds])).rows[0];
  if (!row) return { kind: 'settled', why: 'not_needed' };
  if (row.confirmed) return { kind: 'settled', why: 'confirmed' };
  if (opts.byWindow && row.payment_id && row.created_s !== null) {
    const byWindow = await windowStep(db, orderId, Number(row.created_s), knobs.window);
    if (byWindow) return byWindow;
  }
  if (!row.payment_id || !row.recorded_at || row.created_s === null || row.stale) return { kind: 'settled', why: 'fetch' };
  const createdS = Number(row.created_s);
  const covering = (await db.query<{ id: string; finished: boolean; lease_ms_left: number }>(COVERING_PASS_SQL, [row.recorded_at, createdS])).rows[0];
  // A finished pass covered it and did not confirm it (or could not be read): ask for it alone.
  if (covering?.finished) return { kind: 'settled', why: 'fetch' };
  if (covering) return { kind: 'wait', ms: Math.min(covering.lease_ms_left, IN_FLIGHT_RECHECK_MS) };
  return inTransaction(db, async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [LISTING_LOCK]);
    // Under the lock: another payout may have just taken the pass that covers this one.
    if ((await tx.query(COVERING_PASS_SQL, [row.recorded_at, createdS])).rows.length > 0) return { kind: 'wait', ms: IN_FLIGHT_RECHECK_MS } as const;
    const latest = (await tx.query<{ in_flight: boolean; ms_since_start: number; lease_ms_left: number }>(LATEST_PASS_SQL)).rows[0];
    if (latest?.in_flight) return { kind: 'wait', ms: Math.min(latest.lease_ms_left, IN_FLIGHT_RECHECK_MS) } as const;
    if (latest && latest.ms_since_start < knobs.gatherMs) return { kind: 'wait', ms: knobs.gatherMs - latest.ms_since_start } as const;
    const fromS = (await tx.query<{ from_s: string | null }>(LIST_FROM_SQL, [knobs.lookbackSeconds])).rows[0]?.from_s;
    const listedFrom = Math.min(createdS, fromS === null || fromS === undefined ? createdS : Number(fromS));
    // A pass is evidence for a day at most (the lookback is minutes): the table stays a day's size.
    await tx.query(`DELETE FROM provider_listing_passes WHERE kind = 'payments' AND started_at < now() - interval '1 day'`);
    const { rows } = await tx.query<{ id: string }>(
      `INSERT INTO provider_listing_passes (kind, lease_until, listed_from_s, run_for) VALUES ('payments', now() + $1 * interval '1 millisecond', $2, $3) RETURNING id`,
      [knobs.leaseMs, listedFrom, orderId]);
    return { kind: 'list', passId: Number(rows[0]!.id) } as const;
  });
}

export interface PassSummary {
  passId: number; pages: number; items: number; confirmed: number; error: string | null;
  /** False while the pass has pages left. Absent in answers recorded before passes went a page per call. */
  done?: boolean;
}

/** The pass's next page, one provider call (so each page is a call on the reads budget): its captures
 * confirmed as they come; a short page finishes the pass. A failed call, or a pass past
 * MAX_PASS_PAGES, finishes it with its error: the captures it covered are then asked for alone.
 * Each page written renews the pass's lease for the next. Asking again for a finished pass changes nothing. */
export async function listNextPage(db: Db, gateway: Gateway, passId: number, leaseMs: number): Promise<PassSummary> {
  const pass = (await db.query<{ listed_from_s: string; finished_at: Date | null; pages: number; items: number; confirmed: number; error: string | null }>(
    'SELECT listed_from_s, finished_at, pages, items, confirmed, error FROM provider_listing_passes WHERE id = $1', [passId])).rows[0];
  if (!pass) throw new Error(`listing pass ${passId} does not exist`);
  const summary: PassSummary = { passId, pages: pass.pages, items: pass.items, confirmed: pass.confirmed, error: pass.error, done: pass.finished_at !== null };
  if (summary.done) return summary;
  let last = false;
  try {
    if (pass.pages >= MAX_PASS_PAGES) throw new Error(`more than ${MAX_PASS_PAGES} pages of payments since ${pass.listed_from_s}`);
    const page = await gateway.paymentsPage({ fromSec: Number(pass.listed_from_s), skip: pass.pages * PROVIDER_LIST_PAGE });
    summary.pages += 1;
    summary.items += page.size;
    summary.confirmed += await confirmListedCaptures(db, page.items, 'listing');
    last = page.size < PROVIDER_LIST_PAGE;
  } catch (err) {
    logger.warn({ err, passId }, 'listing payments failed; the captures this pass covers are asked for one by one');
    summary.error = String((err as Error)?.message ?? err).slice(0, 500);
    last = true;
  }
  // Guarded by the page count read: a page written twice (a retried call) is written once.
  await db.query(
    `UPDATE provider_listing_passes SET pages = $2, items = $3, confirmed = $4, error = $5, finished_at = CASE WHEN $6 THEN now() END,
            lease_until = now() + $8 * interval '1 millisecond'
      WHERE id = $1 AND finished_at IS NULL AND pages = $7`,
    [passId, summary.pages, summary.items, summary.confirmed, summary.error, last, pass.pages, leaseMs]);
  return { ...summary, done: last };
}
