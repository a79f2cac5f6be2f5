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
 * payment alone, as before (captureConfirmation.ts), and a forged capture still goes to review. */
import { MAX_PASS_PAGES } from '../contracts/payout';
import type { Db } from '../db/pool';
import { inTransaction } from '../db/pool';
import { PROVIDER_LIST_PAGE, type Gateway } from '../gateway/types';
import { logger } from '../logger';
import { paymentCreatedSecondsSql } from '../moneyin/paymentCreatedAt';
import { captureMismatches, capturesToConfirmAmong } from './captureConfirmation';

export interface ListingKnobs {
  /** A new pass starts no sooner than this after the previous one: the payouts due meanwhile share it. */
  gatherMs: number;
  /** A capture recorded longer ago than this, or made (authorised) this long before we recorded it, is
   * asked for alone: a pass never lists further back than that. */
  lookbackSeconds: number;
  /** A pass that has not started or written a page for this long (its runner died, or a restored
   * database brought it back unfinished) no longer holds the others back. Renewed by every page. */
  leaseMs: number;
}

/** Where an order's capture stands against the listing passes. */
export type CaptureListingStep =
  /** Nothing to wait for: not an online capture, confirmed, or to be asked alone (`fetch`). */
  | { kind: 'settled'; why: 'not_needed' | 'confirmed' | 'fetch' }
  /** This payout runs the next pass (on the reads budget), then asks again. */
  | { kind: 'list'; passId: number }
  /** A pass is in flight, or the previous one is too recent: ask again after `ms`. */
  | { kind: 'wait'; ms: number };

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

/** Where the order's capture stands; takes the next pass when it is this payout's to run. */
export async function captureListingStep(db: Db, orderId: string, knobs: ListingKnobs): Promise<CaptureListingStep> {
  const row = (await db.query<CaptureRow>(CAPTURE_SQL, [orderId, knobs.lookbackSeconds])).rows[0];
  if (!row) return { kind: 'settled', why: 'not_needed' };
  if (row.confirmed) return { kind: 'settled', why: 'confirmed' };
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
      `INSERT INTO provider_listing_passes (kind, lease_until, listed_from_s) VALUES ('payments', now() + $1 * interval '1 millisecond', $2) RETURNING id`,
      [knobs.leaseMs, listedFrom]);
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
    summary.confirmed += await confirmListed(db, page.items);
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

/** Confirms the page's payments that match the capture we recorded on them, exactly. */
async function confirmListed(db: Db, payments: Array<Parameters<typeof captureMismatches>[1]>): Promise<number> {
  if (payments.length === 0) return 0;
  const listed = new Map(payments.map((p) => [p.id, p]));
  const recorded = await capturesToConfirmAmong(db, [...listed.keys()]);
  const confirmed = recorded.filter((r) => captureMismatches(r, listed.get(r.paymentId!)!).length === 0).map((r) => r.paymentId!);
  if (confirmed.length === 0) return 0;
  const { rowCount } = await db.query(
    `UPDATE payments SET capture_confirmed_at = now(), capture_confirmed_by = 'listing' WHERE id = ANY($1::text[]) AND capture_confirmed_at IS NULL`, [confirmed]);
  return rowCount ?? 0;
}
