/** Refunds of captured payments we must not keep: a capture on a gateway order that is not ours,
 * on an order that was cancelled, or a second capture on an order or top-up already paid. The request
 * row is committed first (one per payment and reason); the gateway is asked after the commit.
 *
 * Idempotent the documented way: `receipt` is our refund id (a duplicate receipt is refused, so no
 * second refund can exist) and X-Refund-Idempotency is our refund id too (the same key and body get
 * the same refund back, so a retry after a lost answer learns the refund's id). After a definitive
 * rejection the key becomes `<id>_r<n>`: a provider may replay a remembered rejection for a key.
 *
 * A payment whose gateway order carried a Route split may have paid the vendor's share out of it:
 * such a refund is made with `reverse_all` when the share must come back from the linked account (a
 * cancelled order, or a second capture while the kept payment carries a split too), from the
 * platform balance when the split on it is the vendor's only one, and waits while the split may
 * still run (splitReversal.ts).
 *
 * Outcomes: accepted → `pending` (the refund.* webhooks move it on); a transient rejection (the
 * balance can come back) → stays `requested` with `next_attempt_at` (doubling from
 * REFUND_RETRY_BACKOFF_MS up to REFUND_RETRY_BACKOFF_MAX_MS) and the missed-webhook sweep asks again;
 * any other rejection → `rejected` with its code: the ops queue (GET /ops/refunds?status=rejected)
 * and a recon exception, because the customer's money is still with us. An unknown outcome is asked
 * again at once with the same key (3 times), then left `requested` for the sweep. A duplicate
 * receipt → `pending` without an id, which the sweep looks up by the receipt. Every try is appended
 * to refund_attempts. */
import type { Config } from '../config/config';
import type { Db, Tx } from '../db/pool';
import { GatewayCallError, type Gateway, type MoneyOutcome, type ProviderError, type RzpRefund } from '../gateway/types';
import { logger } from '../logger';
import type { AfterCommit } from './afterCommit';
import { refundIdOf } from './ids';
import { SPLIT_RETRY_WINDOW_MS } from './splitTransfers';
import { SPLIT_NOT_FINAL, splitReversal, type SplitReversal } from './splitReversal';
import type { RefundEntity } from './webhookEnvelope';

export type RefundReason = 'orphan_capture' | 'order_cancelled' | 'duplicate_capture';

export type RefundRequestResult = 'accepted' | 'already_made' | 'retry_later' | 'rejected' | 'unknown' | 'nothing_to_do';

/** Razorpay's answer when a receipt was already used: the refund exists. */
const DUPLICATE_RECEIPT = 'BAD_REQUEST_REFUND_RECEIPT_ALREADY_PRESENT';
const UNKNOWN_OUTCOME_TRIES = 3;

type RetryConfig = Pick<Config, 'REFUND_RETRY_BACKOFF_MS' | 'REFUND_RETRY_BACKOFF_MAX_MS'>;
/** The config defaults, for callers whose deps carry no config. */
const DEFAULT_RETRY: RetryConfig = { REFUND_RETRY_BACKOFF_MS: 60_000, REFUND_RETRY_BACKOFF_MAX_MS: 3_600_000 };

export interface RefundDeps {
  db: Db;
  gateway: Gateway;
  config?: RetryConfig;
}

/** Which refusals can pass once something changes on our side. Only the platform balance does (a
 * settlement, a top-up); Razorpay gives the refund variant no code of its own (reference §3.3), so
 * its `reason` is read, never the message. Everything else is for a human. */
export function isTransientRefundRejection(error: Pick<ProviderError, 'code' | 'reason'>): boolean {
  return error.reason === 'insufficient_balance' || error.code === 'BAD_REQUEST_REFUND_INSUFFICIENT_BALANCE';
}

/** Doubling backoff from the configured first delay, capped. */
export function refundRetryDelayMs(attempts: number, config: RetryConfig): number {
  const exponent = Math.max(0, Math.min(attempts - 1, 20));
  return Math.min(config.REFUND_RETRY_BACKOFF_MS * 2 ** exponent, config.REFUND_RETRY_BACKOFF_MAX_MS);
}

/** Returns the new request's id, or null when this payment already has one for this reason. */
export async function insertRefundRequest(tx: Tx, req: { paymentId: string; orderId: string | null; amountPaise: number; reason: RefundReason }): Promise<string | null> {
  const { rows } = await tx.query<{ id: string }>(
    `INSERT INTO refunds (id, payment_id, order_id, amount_paise, reason) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (payment_id, reason) DO NOTHING RETURNING id`,
    [refundIdOf(req.paymentId, req.reason), req.paymentId, req.orderId, req.amountPaise, req.reason],
  );
  return rows[0]?.id ?? null;
}

export function requestRefundAfterCommit(refundId: string | null, deps: RefundDeps): AfterCommit[] {
  if (!refundId) return [];
  return [{ what: `request refund ${refundId}`, run: async () => { await requestRefund(deps, refundId); } }];
}

interface RefundRequestRow {
  payment_id: string; amount_paise: number; reason: string; attempts: number; idempotency_key: string | null; order_carries_split: boolean;
  /** A second capture's refund: the payment that keeps the order paid. */
  kept_payment_id: string | null;
  split_status: 'expected' | 'processed' | 'failed' | 'reversed' | null;
  retry_window_passed: boolean;
}

/** Whether to refund with `reverse_all` (splitReversal.ts): only the provider knows which payment the
 * split ran on. Null: the provider could not be asked. */
async function reversalFor(gateway: Gateway, refundId: string, row: RefundRequestRow): Promise<SplitReversal | null> {
  if (!row.order_carries_split) return { kind: 'keep' };
  try {
    const refundedPaymentTransfers = await gateway.listPaymentTransfers(row.payment_id);
    const keptPaymentTransfers = row.kept_payment_id ? await gateway.listPaymentTransfers(row.kept_payment_id) : null;
    return splitReversal({ splitStatus: row.split_status, keptPaymentTransfers, refundedPaymentTransfers, retryWindowPassed: row.retry_window_passed });
  } catch (err) {
    if (!(err instanceof GatewayCallError)) throw err;
    logger.error({ err, refundId, paymentId: row.payment_id }, 'could not list the payment transfers before a refund; asking again later');
    return null;
  }
}

async function appendAttempt(db: Db, a: { refundId: string; attemptNo: number; key: string; reverseAll: boolean; outcome: string; code?: string | null; raw?: unknown }): Promise<void> {
  await db.query(
    `INSERT INTO refund_attempts (refund_id, attempt_no, idempotency_key, reverse_all, outcome, provider_code, raw) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [a.refundId, a.attemptNo, a.key, a.reverseAll, a.outcome, a.code ?? null, a.raw === undefined ? null : JSON.stringify(a.raw)],
  );
}

/** Asks the gateway for a refund still `requested` (and due). Idempotent by receipt and key; safe to call again. */
export async function requestRefund(deps: RefundDeps, refundId: string): Promise<RefundRequestResult> {
  const retry = deps.config ?? DEFAULT_RETRY;
  const { rows } = await deps.db.query<RefundRequestRow>(
    `SELECT r.payment_id, r.amount_paise, r.reason, r.attempts, r.idempotency_key, (o.split_transfer_paise IS NOT NULL) AS order_carries_split,
            CASE WHEN r.reason = 'duplicate_capture' AND o.paid_payment_id <> r.payment_id THEN o.paid_payment_id END AS kept_payment_id,
            s.status AS split_status,
            COALESCE(p.captured_at, r.created_at) < now() - make_interval(secs => $2::double precision / 1000) AS retry_window_passed
       FROM refunds r LEFT JOIN orders o ON o.id = r.order_id LEFT JOIN split_transfers s ON s.order_id = r.order_id
            LEFT JOIN payments p ON p.id = r.payment_id
      WHERE r.id = $1 AND r.status = 'requested' AND r.gateway_refund_id IS NULL`,
    [refundId, SPLIT_RETRY_WINDOW_MS],
  );
  const row = rows[0];
  if (!row) return 'nothing_to_do';
  const reversal = await reversalFor(deps.gateway, refundId, row);
  if (reversal === null) return 'unknown';
  if (reversal.kind === 'ask_later') {
    // Nothing was asked of the refund endpoint: the same backoff as a balance refusal, no attempt spent.
    const delayMs = refundRetryDelayMs(row.attempts + 1, retry);
    await deps.db.query(
      `UPDATE refunds SET next_attempt_at = now() + make_interval(secs => $2::double precision / 1000), last_code = $3, last_error = $4, updated_at = now()
        WHERE id = $1 AND status = 'requested'`,
      [refundId, delayMs, SPLIT_NOT_FINAL, JSON.stringify({ why: reversal.why })],
    );
    logger.warn({ refundId, paymentId: row.payment_id, why: reversal.why, delayMs }, 'refund of a split payment waits for the split to be final');
    return 'retry_later';
  }
  const reverseAll = reversal.kind === 'reverse';
  const key = row.idempotency_key ?? refundId;
  const attemptNo = row.attempts + 1;
  await deps.db.query('UPDATE refunds SET attempts = $2, idempotency_key = $3, reverse_all = $4, updated_at = now() WHERE id = $1', [refundId, attemptNo, key, reverseAll]);

  let outcome: MoneyOutcome<RzpRefund> | null = null;
  for (let tryNo = 1; tryNo <= UNKNOWN_OUTCOME_TRIES; tryNo++) {
    outcome = await deps.gateway.createRefund({
      paymentId: row.payment_id, amountPaise: row.amount_paise, receipt: refundId, idempotencyKey: key, reverseAll,
      notes: { refund_request_id: refundId, reason: row.reason },
    });
    if (outcome.type !== 'unknown') break;
    logger.error({ err: outcome, refundId, tryNo }, 'refund outcome unknown; asking again with the same key');
    await appendAttempt(deps.db, { refundId, attemptNo, key, reverseAll, outcome: 'unknown', code: outcome.reason, raw: outcome });
  }
  if (!outcome || outcome.type === 'unknown') return 'unknown'; // still `requested`: the missed-webhook sweep asks again later

  if (outcome.type === 'accepted') {
    await appendAttempt(deps.db, { refundId, attemptNo, key, reverseAll, outcome: 'accepted', raw: outcome.entity });
    await applyRefundSnapshot(deps.db, { id: outcome.entity.id, receipt: refundId, status: outcome.entity.status, payment_id: outcome.entity.payment_id });
    return 'accepted';
  }

  const error = outcome.error;
  if (error.code === DUPLICATE_RECEIPT) {
    // An earlier try went through (e.g. under a key the provider no longer remembers); its refund.*
    // webhook carries our receipt and records the id, or, that lost, the sweep finds it by the receipt.
    await appendAttempt(deps.db, { refundId, attemptNo, key, reverseAll, outcome: 'already_made', code: error.code, raw: outcome });
    await deps.db.query(`UPDATE refunds SET status = 'pending', updated_at = now() WHERE id = $1 AND status = 'requested'`, [refundId]);
    logger.warn({ refundId }, 'refund receipt already present at the gateway: an earlier request went through');
    return 'already_made';
  }
  // The provider's error is logged whole (the SDK's errors have no .message).
  logger.error({ err: outcome, refundId, httpStatus: outcome.httpStatus }, 'gateway rejected a refund');
  if (isTransientRefundRejection(error)) {
    const delayMs = refundRetryDelayMs(attemptNo, retry);
    await appendAttempt(deps.db, { refundId, attemptNo, key, reverseAll, outcome: 'transient_rejection', code: error.code, raw: outcome });
    await deps.db.query(
      `UPDATE refunds SET idempotency_key = $2, next_attempt_at = now() + make_interval(secs => $3::double precision / 1000),
              last_code = $4, last_error = $5, updated_at = now()
        WHERE id = $1 AND status = 'requested'`,
      [refundId, `${refundId}_r${attemptNo}`, delayMs, error.code, JSON.stringify(outcome)],
    );
    return 'retry_later';
  }
  await appendAttempt(deps.db, { refundId, attemptNo, key, reverseAll, outcome: 'rejected', code: error.code, raw: outcome });
  await deps.db.query(
    `UPDATE refunds SET status = 'rejected', rejected_at = now(), next_attempt_at = NULL, last_code = $2, last_error = $3, updated_at = now()
      WHERE id = $1 AND status = 'requested'`,
    [refundId, error.code, JSON.stringify(outcome)],
  );
  return 'rejected';
}

/** `rejected` sits before `pending`: a refund the provider later shows us (its webhook carries our
 * receipt) moves a rejected request on, never back. */
const REFUND_STATUS_ORDER = ['requested', 'rejected', 'pending', 'processed', 'failed'];

/** Records a gateway refund snapshot (API answer or webhook) against our request, forward only. */
export async function applyRefundSnapshot(q: Db | Tx, refund: Pick<RefundEntity, 'id' | 'receipt' | 'status' | 'payment_id'>): Promise<boolean> {
  const { rowCount } = await q.query(
    `UPDATE refunds SET
        gateway_refund_id = COALESCE(gateway_refund_id, $1),
        status = CASE WHEN array_position($4::text[], $3) > array_position($4::text[], status) THEN $3 ELSE status END,
        rejected_at = CASE WHEN array_position($4::text[], $3) > array_position($4::text[], status) THEN NULL ELSE rejected_at END,
        next_attempt_at = NULL,
        updated_at = now()
      WHERE (id = $2 OR gateway_refund_id = $1) AND payment_id = $5`,
    [refund.id, refund.receipt ?? null, refund.status, REFUND_STATUS_ORDER, refund.payment_id],
  );
  return (rowCount ?? 0) > 0;
}

/** The flag on a refund Razorpay said exists ('duplicate receipt') that its payment's refunds did not
 * show within REFUND_RECEIPT_LOOKUP_GIVE_UP_MS: for a human (GET /ops/refunds?status=pending). */
export const REFUND_NOT_FOUND_BY_RECEIPT = 'REFUND_NOT_FOUND_BY_RECEIPT';

/** Our refund among a payment's refunds: by `receipt` (our refund id, unique at the provider), else
 * by the `refund_request_id` note we send with it when exactly one carries it. */
function refundByReceipt(refunds: RzpRefund[], refundId: string): RzpRefund | null {
  const byReceipt = refunds.find((r) => r.receipt === refundId);
  if (byReceipt) return byReceipt;
  const byNote = refunds.filter((r) => !Array.isArray(r.notes) && r.notes.refund_request_id === refundId);
  return byNote.length === 1 ? byNote[0]! : null;
}

interface PendingRefund { id: string; payment_id: string; gateway_refund_id: string | null; last_code: string | null; lookup_past_give_up: boolean }

/** Refunds the gateway accepted as `pending` whose final word (`refund.processed` or
 * `refund.failed`) has not come, asked for again once per `olderThanMs` (each ask stamps
 * `updated_at`): the webhook lost for good must not leave a refund pending for ever (found by the
 * fault campaign). One answered 'duplicate receipt' has no gateway id to fetch: its payment's refunds
 * are listed and ours is found by its receipt (issue 19 item 7). Not found, it is left pending, and
 * flagged for ops once `receiptLookupGiveUpMs` has passed since that answer; it is never made again
 * (the provider said it exists). Reads and forward-only writes, safe to repeat. */
export async function refreshPendingRefunds(
  db: Db, gateway: Pick<Gateway, 'fetchRefund' | 'listPaymentRefunds'>, olderThanMs: number, limit: number, receiptLookupGiveUpMs: number,
): Promise<{ asked: number; moved: number; flagged: number }> {
  const { rows } = await db.query<PendingRefund>(
    `SELECT r.id, r.payment_id, r.gateway_refund_id, r.last_code,
            COALESCE((SELECT max(a.created_at) FROM refund_attempts a WHERE a.refund_id = r.id AND a.outcome = 'already_made'), r.created_at)
              < now() - make_interval(secs => $3::double precision / 1000) AS lookup_past_give_up
       FROM refunds r
      WHERE r.status = 'pending' AND r.updated_at < now() - make_interval(secs => $1::double precision / 1000)
      ORDER BY r.updated_at LIMIT $2`,
    [olderThanMs, limit, receiptLookupGiveUpMs],
  );
  let moved = 0;
  let flagged = 0;
  for (const row of rows) {
    try {
      const refund = row.gateway_refund_id ? await gateway.fetchRefund(row.gateway_refund_id) : refundByReceipt(await gateway.listPaymentRefunds(row.payment_id), row.id);
      if (refund) {
        await applyRefundSnapshot(db, { id: refund.id, receipt: row.id, status: refund.status, payment_id: refund.payment_id });
        if (row.last_code === REFUND_NOT_FOUND_BY_RECEIPT) await db.query('UPDATE refunds SET last_code = NULL, last_error = NULL WHERE id = $1 AND last_code = $2', [row.id, REFUND_NOT_FOUND_BY_RECEIPT]);
        if (refund.status !== 'pending') moved += 1;
      } else if (await leaveUnfound(db, row)) {
        flagged += 1;
      }
    } catch (err) {
      logger.warn({ err, refundId: row.id, gatewayRefundId: row.gateway_refund_id }, 'could not ask the gateway about a pending refund; asking again next sweep');
    }
  }
  return { asked: rows.length, moved, flagged };
}

/** A 'duplicate receipt' refund its payment's refunds do not show: asked again next time round; past
 * the bound, flagged once (and logged once). Returns whether it was flagged now. */
async function leaveUnfound(db: Db, row: PendingRefund): Promise<boolean> {
  const flagNow = row.lookup_past_give_up && row.last_code !== REFUND_NOT_FOUND_BY_RECEIPT;
  const detail = { description: 'Razorpay answered duplicate receipt, but no refund of the payment carries our receipt', paymentId: row.payment_id };
  await db.query(
    `UPDATE refunds SET updated_at = now(), last_code = CASE WHEN $2 THEN $3 ELSE last_code END, last_error = CASE WHEN $2 THEN $4::jsonb ELSE last_error END
      WHERE id = $1 AND status = 'pending' AND gateway_refund_id IS NULL`,
    [row.id, flagNow, REFUND_NOT_FOUND_BY_RECEIPT, JSON.stringify(detail)],
  );
  if (flagNow) logger.error({ refundId: row.id, paymentId: row.payment_id, code: REFUND_NOT_FOUND_BY_RECEIPT }, 'a refund the gateway said exists is not among its payment\'s refunds; flagged for ops, not made again');
  return flagNow;
}

/** Refund requests the gateway has not definitively answered and that are due: a transient
 * rejection once its backoff has passed, anything else once older than `olderThanMs`. Oldest first. */
export async function refundsAwaitingGateway(db: Db, olderThanMs: number, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM refunds WHERE status = 'requested' AND gateway_refund_id IS NULL
        AND CASE WHEN next_attempt_at IS NOT NULL THEN next_attempt_at <= now()
                 ELSE created_at < now() - make_interval(secs => $1::double precision / 1000) END
      ORDER BY created_at LIMIT $2`,
    [olderThanMs, limit],
  );
  return rows.map((r) => r.id);
}

/** The ops queue: refunds in a status (default `rejected`), most recently changed first. */
export interface RefundQueueItem {
  id: string; paymentId: string; orderId: string | null; amountPaise: number; reason: string; status: string;
  attempts: number; lastCode: string | null; lastError: unknown; reverseAll: boolean | null; gatewayRefundId: string | null;
  nextAttemptAt: string | null; rejectedAt: string | null; createdAt: string; updatedAt: string;
}

export async function refundsInStatus(db: Db, status: string, limit: number): Promise<RefundQueueItem[]> {
  const { rows } = await db.query<{
    id: string; payment_id: string; order_id: string | null; amount_paise: number; reason: string; status: string; attempts: number;
    last_code: string | null; last_error: unknown; reverse_all: boolean | null; gateway_refund_id: string | null;
    next_attempt_at: Date | null; rejected_at: Date | null; created_at: Date; updated_at: Date;
  }>(
    `SELECT id, payment_id, order_id, amount_paise, reason, status, attempts, last_code, last_error, reverse_all, gateway_refund_id,
            next_attempt_at, rejected_at, created_at, updated_at
       FROM refunds WHERE status = $1 ORDER BY updated_at DESC, id LIMIT $2`,
    [status, limit],
  );
  return rows.map((r) => ({
    id: r.id, paymentId: r.payment_id, orderId: r.order_id, amountPaise: r.amount_paise, reason: r.reason, status: r.status,
    attempts: r.attempts, lastCode: r.last_code, lastError: r.last_error, reverseAll: r.reverse_all, gatewayRefundId: r.gateway_refund_id,
    nextAttemptAt: r.next_attempt_at?.toISOString() ?? null, rejectedAt: r.rejected_at?.toISOString() ?? null,
    createdAt: r.created_at.toISOString(), updatedAt: r.updated_at.toISOString(),
  }));
}
