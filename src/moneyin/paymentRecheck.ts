/** The missed-webhook sweep's once-more look by listing (issue 37). Each paid online order is looked
 * at once more LATE_CAPTURE_RECHECK_MS after its payment: a refund made from the Dashboard, or a
 * second capture, whose webhooks were lost is found then. Asking GET /orders/:id/payments for each
 * order costs a provider read per online order. Instead the sweep lists Razorpay's payments by
 * **window**: every payment created in [from, to] (Unix seconds, inclusive), once the whole window
 * is at least the recheck old, a call per page of 100, the windows following each other without a
 * gap (`provider_listing_passes` kind `payments_recheck`). Each listed payment of a paid online order
 * whose payout has decided is applied as the per-order look applied it (the same snapshot path as a
 * webhook), and the order is stamped looked at. A window also confirms the captures it shows exactly
 * as recorded; with CAPTURE_BY_WINDOW=on a batched order waits for its window instead of a capture
 * listing pass of its own (payouts/captureWindow.ts).
 *
 * A paid order the windows do not cover — paid on a payment made before the first window, or whose
 * payout had not decided when its window was listed — is still asked alone by the per-order look
 * (missedPayments.ts). A window whose page could not be read is finished with its error and listed
 * again from its start by the next call. */
import { inTransaction } from '../db/pool';
import { PROVIDER_LIST_PAGE, type RzpPayment } from '../gateway/types';
import { logger } from '../logger';
import type { MoneyInDeps } from './deps';
import { confirmListedCaptures } from '../payouts/captureConfirmation';
import { applyPaymentsRead, awaitingRecheckSql, LATE_CAPTURE_WATCH_MS, RECHECK_CURSOR_SQL, windowAppliesSql } from './missedPayments';
import { paymentCreatedSecondsSql } from './paymentCreatedAt';

/** A window's width: one call at least per window, so an idle day costs 288 calls. */
export const RECHECK_WINDOW_S = 300;

/** One lock for opening the next window (beside the capture listing's 7_233_301). */
const RECHECK_LOCK = 7_233_302;

export interface RecheckPage {
  /** The window read, or null when no window is due. */
  windowId: number | null;
  /** Payments of paid orders applied from this page. */
  applied: number;
  /** Nothing more is due now: no window, or the page could not be read. */
  done: boolean;
  error?: string;
}

interface OpenWindow { id: string; listed_from_s: string; listed_to_s: string; pages: number; items: number; confirmed: number }

/** The window left open, else the next one when it is due by `untilMs` (opened here), else null. */
async function openWindow(deps: MoneyInDeps, recheckS: number, untilMs: number | null): Promise<OpenWindow | null> {
  return inTransaction(deps.db, async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [RECHECK_LOCK]);
    const open = (await tx.query<OpenWindow>(
      `SELECT id, listed_from_s, listed_to_s, pages, items, confirmed FROM provider_listing_passes
        WHERE kind = 'payments_recheck' AND finished_at IS NULL ORDER BY id LIMIT 1`)).rows[0];
    if (open) return open;
    // The first window starts at the oldest paid payment still waiting for its look (the per-order
    // look keeps anything older), or, with none, a window's width before the recheck's edge.
    const { rows } = await tx.query<OpenWindow>(
      `WITH cursor AS (${RECHECK_CURSOR_SQL}),
            edge AS (SELECT LEAST(floor(extract(epoch FROM now()))::bigint, floor($4::bigint / 1000)::bigint) - $1 AS s),
            oldest AS (
              SELECT min(${paymentCreatedSecondsSql('pay')}) AS s FROM orders o JOIN payments pay ON pay.id = o.paid_payment_id
               WHERE ${awaitingRecheckSql('o')} AND o.paid_at > now() - make_interval(secs => $3::double precision / 1000)),
            next AS (SELECT COALESCE((SELECT s FROM cursor), (SELECT s FROM oldest), (SELECT s - $2 + 1 FROM edge)) AS from_s)
       INSERT INTO provider_listing_passes (kind, lease_until, listed_from_s, listed_to_s)
       SELECT 'payments_recheck', now(), next.from_s, LEAST(next.from_s + $2 - 1, edge.s) FROM next, edge
        WHERE LEAST(next.from_s + $2 - 1, edge.s) >= next.from_s
       RETURNING id, listed_from_s, listed_to_s, pages, items, confirmed`,
      [recheckS, RECHECK_WINDOW_S, LATE_CAPTURE_WATCH_MS, untilMs ?? Number.MAX_SAFE_INTEGER]);
    return rows[0] ?? null;
  });
}

/** The next page of the due window: one provider call on the reads budget (the caller's queue). A
 * sweep run passes when it began as `untilMs`, so it lists the windows due then and stops: without it
 * each run ended chasing the moving edge with windows of a second or two, a call each. */
export async function recheckNextPage(deps: MoneyInDeps, untilMs: number | null = null): Promise<RecheckPage> {
  const window = await openWindow(deps, Math.ceil(deps.config.LATE_CAPTURE_RECHECK_MS / 1000), untilMs);
  if (!window) return { windowId: null, applied: 0, done: true };
  const windowId = Number(window.id);
  let page: { items: RzpPayment[]; size: number };
  try {
    page = await deps.gateway.paymentsPage({ fromSec: Number(window.listed_from_s), toSec: Number(window.listed_to_s), skip: window.pages * PROVIDER_LIST_PAGE });
  } catch (err) {
    logger.warn({ err, windowId }, 'listing payments for the once-more look failed; the window is listed again next time');
    const error = String((err as Error)?.message ?? err).slice(0, 500);
    await deps.db.query(`UPDATE provider_listing_passes SET error = $2, finished_at = now() WHERE id = $1 AND finished_at IS NULL`, [windowId, error]);
    return { windowId, applied: 0, done: true, error };
  }
  // Captures first: a batched order waiting for this window (payouts/captureListing.ts) reads it as
  // finished only after the update below, and then finds its capture confirmed or asks alone.
  await confirmListedCaptures(deps.db, page.items, 'window');
  const applied = await applyToPaidOrders(deps, page.items);
  // Guarded by the page count read: a page applied twice (a retried call) is counted once.
  await deps.db.query(
    `UPDATE provider_listing_passes SET pages = pages + 1, items = items + $3, confirmed = confirmed + $4,
            finished_at = CASE WHEN $5 THEN now() END
      WHERE id = $1 AND finished_at IS NULL AND pages = $2`,
    [windowId, window.pages, page.size, applied, page.size < PROVIDER_LIST_PAGE]);
  return { windowId, applied, done: false };
}

/** Applies the listed payments of our paid online orders whose payouts have decided (or wait for
 * this window: windowAppliesSql), and stamps
 * those orders looked at. Other payments (unpaid, cancelled or expired orders, other checkouts)
 * have their own paths. */
async function applyToPaidOrders(deps: MoneyInDeps, listed: readonly RzpPayment[]): Promise<number> {
  const gatewayOrders = [...new Set(listed.map((p) => p.order_id).filter((id): id is string => !!id))];
  if (gatewayOrders.length === 0) return 0;
  const { rows } = await deps.db.query<{ id: string; gateway_order_id: string }>(
    `SELECT o.id, o.gateway_order_id FROM orders o
      WHERE o.gateway_order_id = ANY($1::text[]) AND o.status = 'paid' AND o.payment_method = 'online' AND ${windowAppliesSql('o')}`,
    [gatewayOrders]);
  if (rows.length === 0) return 0;
  const ours = new Set(rows.map((r) => r.gateway_order_id));
  const payments = listed.filter((p) => p.order_id && ours.has(p.order_id));
  await applyPaymentsRead(deps, payments);
  await deps.db.query('UPDATE orders SET payment_checked_at = now() WHERE id = ANY($1::text[])', [rows.map((r) => r.id)]);
  return payments.length;
}
