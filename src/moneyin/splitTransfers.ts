/** The Route split a Razorpay order carried to the vendor (unsubsidised online orders), followed
 * until its transfer is final. Our `split_transfers` row is `expected` until then; `processed` keeps
 * the order out of the `offline_ledger_open` view, `failed` (final) puts it there, so finance pays
 * the vendor another way — never both.
 *
 * Only the provider's answer to a fetch moves the row. transfer.processed / transfer.failed webhooks
 * are hints (design §7): a forged, replayed, stale or early one (e.g. before payment.captured, when
 * markPaid has not written the row yet) only makes us fetch the transfer after the commit. What
 * guarantees the outcome is the split sweep: a Temporal Schedule (`split-transfer-sweep`, every
 * SPLIT_TRANSFER_POLL_MS) that fetches the payment's transfers (GET /v1/payments/:id/transfers) for
 * every split still `expected`, as the payout poll does for direct transfers.
 *
 * Why a Schedule and not a workflow per split: nothing here moves money, it only reads the provider,
 * so there is no per-split state worth a workflow; a per-split run would still need a sweep for the
 * start that is lost between markPaid's commit and the start call (and for rows written before this
 * existed, or paid by the missed-webhook sweep), and that sweep alone is enough. Open splits are few
 * (a split settles within seconds of capture, a failed one is retried by Razorpay for 3 days), the
 * selection is by status through a partial index with no age cutoff, least recently checked first.
 *
 * A failed split is retried by Razorpay on following days, up to 3 times (reference §1.2): it stays
 * `expected` (provider_status `failed`, first_failed_at set) until SPLIT_RETRY_WINDOW_MS has passed
 * since the first failure, and only then becomes `failed`; a transfer.processed in the meantime
 * settles it.
 *
 * A split reversed after it paid (issue 19 item 3: from the Dashboard, by Razorpay, or by a refund
 * with reverse_all) is `reversed`: its reversals are recorded (payouts/transferReversals.ts) and each
 * one the vendor is owed again, one made from outside (a refund made outside the app included, whose
 * clawback line nets it), is an offline-ledger line of its amount, route `transfer_reversal`; one of
 * our own refunds reversed only what the vendor was not owed (splitReversal.ts), so it owes nothing.
 * transfer.reversed is a hint like the others; the sweep also looks again at processed splits whose
 * order a refund with reverse_all, or a refund made outside the app, touched since their last check
 * (a reversal from the Dashboard whose webhook is lost is left to recon: `reversal-not-in-app`). */
import type { Client } from '@temporalio/client';
import { z } from 'zod';
import type { Config } from '../config/config';
import { SPLIT_TRANSFER_SCHEDULE_ID, SPLIT_TRANSFER_SWEEP_WORKFLOW_TYPE, type SplitCheckStatus, type SplitTransferSweepInput } from '../contracts/splitTransfer';
import { inTransaction, type Db, type Tx } from '../db/pool';
import type { Gateway, RzpTransfer } from '../gateway/types';
import { oweOfflineLines } from '../ledger/offlineLines';
import { oweOrders } from '../ledger/orderObligations';
import { recordSplitInLedger } from '../ledger/splitDischarges';
import { logger } from '../logger';
import { classifyReversals, isReversed, recordTransferReversals, reversalsOf, type ClassifiedReversal } from '../payouts/transferReversals';
import { ensureSchedule, sweepScheduleOptions, type EnsuredSchedule, type StartWorkflowScheduleOptions } from '../temporal/schedules';
import type { WebhookEffect } from '../webhooks/types';
import type { AfterCommit } from './afterCommit';

/** Razorpay retries a failed order transfer on following days, up to 3 times: three days and a day's
 * margin. (Not a config key yet: src/config is not ours; see the issue-10 report.) */
export const SPLIT_RETRY_WINDOW_MS = 4 * 86_400_000;

/** What a webhook tells us about the transfer: only enough to decide whether to ask the provider. */
const transferHintSchema = z.looseObject({
  id: z.string().regex(/^trf_[A-Za-z0-9]{14}$/),
  source: z.string().min(1).optional(),
  recipient: z.string().min(1).optional(),
});
const hintPayloadSchema = z.object({ transfer: z.object({ entity: transferHintSchema }) });

interface SplitRow {
  order_id: string;
  vendor_id: string;
  linked_account_id: string;
  amount_paise: number;
  gateway_order_id: string;
  provider_transfer_id: string | null;
  status: 'expected' | 'processed' | 'failed' | 'reversed';
  provider_status: RzpTransfer['status'] | null;
  first_failed_at: Date | null;
}

const SPLIT_COLUMNS = 'order_id, vendor_id, linked_account_id, amount_paise, gateway_order_id, provider_transfer_id, status, provider_status, first_failed_at';

export interface SplitDecision {
  status: SplitRow['status'];
  providerStatus: RzpTransfer['status'];
  lastCode: string | null;
  firstFailedAt: Date | null;
  /** The row becomes final now. */
  final: boolean;
  /** It was `failed` (owed offline) and the provider now says the split paid. */
  processedAfterFinal: boolean;
}

/** When the provider says the transfer failed: its processing time, unless that is in our future. */
function failedAt(transfer: Pick<RzpTransfer, 'processed_at'>, now: Date): Date {
  const at = transfer.processed_at === null ? now : new Date(transfer.processed_at * 1000);
  return at.getTime() > now.getTime() ? now : at;
}

/** Pure: what the provider's transfer means for our row at `now`. The retry window runs from the
 * first failure, so a failure we learn of late is not owed later than it should be. A transfer that
 * shows a reversal paid the vendor and then gave some or all of it back: `reversed` (what is owed
 * again is per reversal, not this row's). */
export function decideSplit(row: Pick<SplitRow, 'status' | 'first_failed_at'>, transfer: Pick<RzpTransfer, 'status' | 'error' | 'processed_at' | 'amount_reversed'>, now: Date): SplitDecision {
  const firstFailedAt = row.first_failed_at ?? (transfer.status === 'failed' ? failedAt(transfer, now) : null);
  const base = { providerStatus: transfer.status, lastCode: transfer.error.code, firstFailedAt, final: false, processedAfterFinal: false };
  const paid = transfer.status === 'processed' || transfer.status === 'partially_reversed';
  const reversed = { ...base, status: 'reversed' as const, lastCode: transfer.error.code ?? 'TRANSFER_REVERSED' };
  switch (row.status) {
    case 'expected':
      if (isReversed(transfer)) return { ...reversed, final: true };
      if (paid) return { ...base, status: 'processed', final: true };
      if (transfer.status === 'failed' && now.getTime() - firstFailedAt!.getTime() >= SPLIT_RETRY_WINDOW_MS) return { ...base, status: 'failed', final: true };
      return { ...base, status: 'expected' };
    case 'processed':
      // The vendor's money was taken back, wholly or in part.
      if (isReversed(transfer)) return reversed;
      return { ...base, status: 'processed' };
    case 'reversed':
      return reversed;
    case 'failed':
      if (paid) return { ...base, status: 'processed', final: true, processedAfterFinal: true };
      return { ...base, status: 'failed' };
  }
}

/** The one transfer among `transfers` that is this split's: by id once known, else by account,
 * source (the gateway order or one of its payments) and amount. */
function splitTransferAmong(row: SplitRow, transfers: RzpTransfer[], paymentIds: string[]): RzpTransfer | null | 'ambiguous' {
  if (row.provider_transfer_id) return transfers.find((t) => t.id === row.provider_transfer_id) ?? null;
  const sources = new Set([row.gateway_order_id, ...paymentIds]);
  const ours = transfers.filter((t) => t.recipient === row.linked_account_id && sources.has(t.source) && t.amount === row.amount_paise);
  if (ours.length > 1) return 'ambiguous';
  return ours[0] ?? null;
}

/** A reversed split's reversals, and for each one the vendor is owed again an offline-ledger line
 * of that amount (route `transfer_reversal`): only while the row is `reversed` (a split already owed
 * offline whole, `failed`, owes nothing more for it). */
async function recordSplitReversals(tx: Tx, row: SplitRow, status: SplitRow['status'], transfer: RzpTransfer, reversals: readonly ClassifiedReversal[], trigger: string): Promise<void> {
  if (reversals.length === 0) return;
  const added = await recordTransferReversals(tx, {
    owner: { splitOrderId: row.order_id, orderId: row.order_id, vendorId: row.vendor_id }, transfer, reversals, source: trigger, owes: status === 'reversed',
  });
  for (const r of added) {
    if (r.owedPaise <= 0) continue;
    const { rows: line } = await tx.query<{ id: string }>(
      `INSERT INTO offline_ledger (order_id, transfer_reversal_id, employer_id, vendor_id, amount_paise, route)
       SELECT NULL, $1, o.employer_id, $3, $4, 'transfer_reversal' FROM orders o WHERE o.id = $2 RETURNING id`,
      [r.id, row.order_id, row.vendor_id, r.owedPaise],
    );
    await oweOfflineLines(tx, line.map((l) => l.id));
  }
}

/** Records what the provider said (or that it showed nothing), in one short transaction. */
async function recordCheck(db: Db, orderId: string, found: RzpTransfer | null, trigger: string, now: Date, reversals: readonly ClassifiedReversal[] = []): Promise<SplitCheckStatus> {
  return inTransaction(db, async (tx) => {
    const row = await lockSplit(tx, orderId);
    if (!row) return 'gone';
    if (found && row.provider_transfer_id && row.provider_transfer_id !== found.id) return row.status; // another transfer is this split's
    let status = row.status;
    const d = found ? decideSplit(row, found, now) : null;
    if (found && d && row.status !== 'expected' && d.status === row.status) {
      // Final and unchanged: an older answer (a sweep that fetched before a webhook's fetch) must not
      // overwrite what the row says the provider said last.
      await tx.query('UPDATE split_transfers SET checked_at = $2, updated_at = now() WHERE order_id = $1', [orderId, now]);
    } else if (found && d) {
      status = d.status;
      if (d.processedAfterFinal) {
        logger.error({ orderId, transferId: found.id }, 'split transfer processed after the split was owed offline: check the vendor was not also paid by hand');
      }
      await tx.query(
        `UPDATE split_transfers SET provider_transfer_id = $2, status = $3, provider_status = $4, last_code = $5, first_failed_at = $6,
                checked_at = $7, final_at = CASE WHEN $8 THEN $7 ELSE final_at END,
                processed_after_final = processed_after_final OR $9, updated_at = now()
          WHERE order_id = $1`,
        [orderId, found.id, d.status, d.providerStatus, d.lastCode, d.firstFailedAt, now, d.final, d.processedAfterFinal],
      );
    } else {
      await tx.query('UPDATE split_transfers SET checked_at = $2, updated_at = now() WHERE order_id = $1', [orderId, now]);
    }
    if (found) await recordSplitReversals(tx, row, status, found, reversals, trigger);
    // The ledger: the split pays the net (in flight, then paid), or failed for good and left it to a
    // settlement run (the net's rail).
    await oweOrders(tx, [orderId]);
    await recordSplitInLedger(tx, orderId);
    await tx.query(
      `INSERT INTO split_transfer_checks (order_id, trigger, provider_transfer_id, provider_status, status_after, raw) VALUES ($1, $2, $3, $4, $5, $6)`,
      [orderId, trigger, found?.id ?? null, found?.status ?? null, status, found ? JSON.stringify(found) : null],
    );
    return status;
  });
}

async function lockSplit(tx: Tx, orderId: string): Promise<SplitRow | null> {
  const { rows } = await tx.query<SplitRow>(`SELECT ${SPLIT_COLUMNS} FROM split_transfers WHERE order_id = $1 FOR UPDATE`, [orderId]);
  return rows[0] ?? null;
}

async function splitRow(db: Db | Tx, orderId: string): Promise<SplitRow | null> {
  const { rows } = await db.query<SplitRow>(`SELECT ${SPLIT_COLUMNS} FROM split_transfers WHERE order_id = $1`, [orderId]);
  return rows[0] ?? null;
}

/** Splits whose transfer is not final yet (partial index), and paid splits whose order a refund
 * touched since their last check (a refund of ours with reverse_all, or one made outside the app,
 * which may have reversed the split: compared on the database clock, as the checks are stamped),
 * least recently checked first. */
export async function splitsAwaitingTransfer(db: Db, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ order_id: string }>(
    `SELECT order_id FROM (
       SELECT order_id, checked_at, created_at FROM split_transfers WHERE status = 'expected'
       UNION
       SELECT s.order_id, s.checked_at, s.created_at
         FROM (SELECT order_id, updated_at AS at FROM refunds WHERE reverse_all AND status IN ('pending', 'processed') AND order_id IS NOT NULL
               UNION ALL SELECT order_id, updated_at FROM outside_refunds) touched
         JOIN split_transfers s ON s.order_id = touched.order_id AND s.status IN ('processed', 'reversed')
        WHERE NOT EXISTS (SELECT 1 FROM split_transfer_checks c WHERE c.order_id = s.order_id AND c.created_at > touched.at)
     ) due ORDER BY checked_at NULLS FIRST, created_at LIMIT $1`, [limit],
  );
  return rows.map((r) => r.order_id);
}

/** Asks the provider for the split's transfer (the transfers of the gateway order's captured
 * payments) and records the answer. No transaction is open during the gateway calls. Throws when the
 * provider cannot be asked (the caller retries later). */
export async function followSplitTransfer(deps: { db: Db; gateway: Gateway }, orderId: string, now: Date, trigger = 'sweep'): Promise<SplitCheckStatus> {
  const row = await splitRow(deps.db, orderId);
  if (!row) return 'gone';
  const { rows } = await deps.db.query<{ id: string }>(
    `SELECT id FROM payments WHERE gateway_order_id = $1 AND status IN ('captured', 'refunded') ORDER BY created_at`, [row.gateway_order_id],
  );
  const paymentIds = rows.map((r) => r.id);
  const transfers: RzpTransfer[] = [];
  for (const paymentId of paymentIds) transfers.push(...(await deps.gateway.listPaymentTransfers(paymentId)));
  const found = splitTransferAmong(row, transfers, paymentIds);
  if (found === 'ambiguous') {
    logger.error({ orderId, transfers }, 'more than one transfer could be this split; left for a human');
    return recordCheck(deps.db, orderId, null, `${trigger} (ambiguous)`, now);
  }
  return recordCheck(deps.db, orderId, found, trigger, now, found ? await reversalsToRecord(deps, found) : []);
}

/** The transfer's reversals and who made each, when it shows any (no transaction open). */
async function reversalsToRecord(deps: { db: Db; gateway: Gateway }, transfer: RzpTransfer): Promise<ClassifiedReversal[]> {
  return isReversed(transfer) ? classifyReversals(deps.db, deps.gateway, await reversalsOf(deps.gateway, transfer)) : [];
}

/** The split a transfer could belong to, by id or by account and source (gateway order or payment). */
async function splitFor(q: Db | Tx, t: { id: string; recipient?: string; source?: string }): Promise<string | null> {
  const { rows } = await q.query<{ order_id: string }>(
    `SELECT s.order_id FROM split_transfers s
      WHERE s.provider_transfer_id = $1
         OR (s.provider_transfer_id IS NULL AND s.linked_account_id = $2
             AND s.gateway_order_id IN (SELECT $3::text UNION SELECT gateway_order_id FROM payments WHERE id = $3))
      ORDER BY (s.provider_transfer_id = $1) DESC NULLS LAST LIMIT 1`,
    [t.id, t.recipient ?? '', t.source ?? ''],
  );
  return rows[0]?.order_id ?? null;
}

/** After the commit of a transfer webhook: fetch the transfer and record what the fetch says. */
async function followHint(deps: { db: Db; gateway: Gateway }, transferId: string, trigger: string): Promise<void> {
  const transfer = await deps.gateway.fetchTransfer(transferId);
  const orderId = await splitFor(deps.db, transfer);
  if (!orderId) return;
  const row = await splitRow(deps.db, orderId);
  // Matched by account and source: the amount must agree too, or it is not this split's transfer.
  if (!row || (row.provider_transfer_id !== transfer.id && transfer.amount !== row.amount_paise)) return;
  await recordCheck(deps.db, orderId, transfer, trigger, new Date(), await reversalsToRecord(deps, transfer));
}

type TransferEvent = 'transfer.processed' | 'transfer.failed' | 'transfer.reversed';

/** A Route split's source is its gateway order or one of its payments; a direct transfer's is our
 * own account, and is a payout's (never kept as an early split hint). */
const SPLIT_SOURCE = /^(order|pay)_[A-Za-z0-9]+$/;
/** Long past any capture that could still come for it (late authorisations are refunded by then). */
const EARLY_HINT_KEPT_DAYS = 7;

/** A hint that matches no split yet, because the capture that writes the split row has not arrived:
 * kept (early_transfer_hints) for that capture to follow. */
async function keepEarlyHint(tx: Tx, hint: { id: string; source?: string }, event: TransferEvent): Promise<void> {
  if (!hint.source || !SPLIT_SOURCE.test(hint.source)) return;
  await tx.query(`DELETE FROM early_transfer_hints WHERE received_at < now() - make_interval(days => $1)`, [EARLY_HINT_KEPT_DAYS]);
  await tx.query(
    `INSERT INTO early_transfer_hints (transfer_id, source, event) VALUES ($1, $2, $3)
     ON CONFLICT (transfer_id) DO UPDATE SET event = EXCLUDED.event, received_at = now()`, [hint.id, hint.source, event]);
}

/** In the capture's transaction, once markPaid has written the order's split row: the hints that
 * came before it (transfers on its gateway order, or on the payment that paid it: another payment's
 * split is a duplicate capture's, which our refund takes back, never the order's), taken off the
 * table and followed after the commit like any hint. A fetch that fails leaves the split to the
 * sweep, as before. */
export async function followEarlySplitHints(tx: Tx, orderId: string, deps: { db: Db; gateway: Gateway }): Promise<AfterCommit[]> {
  const { rows } = await tx.query<{ transfer_id: string; event: TransferEvent }>(
    `DELETE FROM early_transfer_hints h USING orders o
      WHERE o.id = $1 AND h.source IN (o.gateway_order_id, o.paid_payment_id)
      RETURNING h.transfer_id, h.event`, [orderId]);
  return rows.map((r) => ({
    what: `fetch split transfer ${r.transfer_id} after an early ${r.event}`,
    run: () => followHint(deps, r.transfer_id, `webhook ${r.event} (before the capture)`),
  }));
}

/** Runs `inner` (the payout effect for the same event) and, when the transfer could be one of our
 * splits, adds an after-commit step that fetches it and records the provider's answer. A hint that
 * matches no split yet is kept for the capture that writes the split (followEarlySplitHints); the
 * split sweep follows every open split anyway. */
export function alsoSettlingSplits(event: TransferEvent, inner: WebhookEffect | undefined): WebhookEffect {
  return async (tx, envelope, ctx) => {
    const afterCommit = inner ? await inner(tx, envelope, ctx) : [];
    const hint = hintPayloadSchema.parse(envelope.payload).transfer.entity;
    if (!(await splitFor(tx, hint))) {
      if (afterCommit.length === 0) await keepEarlyHint(tx, hint, event);
      return afterCommit;
    }
    return [...afterCommit, {
      what: `fetch split transfer ${hint.id} after ${event}`,
      run: () => followHint(ctx, hint.id, `webhook ${event}`),
    }];
  };
}

type SplitScheduleConfig = Pick<Config, 'TEMPORAL_TASK_QUEUE' | 'SPLIT_TRANSFER_POLL_MS'>;

export function splitTransferScheduleOptions(config: SplitScheduleConfig): StartWorkflowScheduleOptions {
  const args: [SplitTransferSweepInput] = [{}];
  return sweepScheduleOptions({
    scheduleId: SPLIT_TRANSFER_SCHEDULE_ID, workflowType: SPLIT_TRANSFER_SWEEP_WORKFLOW_TYPE, taskQueue: config.TEMPORAL_TASK_QUEUE,
    everyMs: config.SPLIT_TRANSFER_POLL_MS, args, workflowExecutionTimeout: '1 hour',
  });
}

/** Created (or brought up to date) by the production worker at boot, beside the other Schedules. */
export function ensureSplitTransferSchedule(client: Client, config: SplitScheduleConfig): Promise<EnsuredSchedule> {
  return ensureSchedule(client, splitTransferScheduleOptions(config));
}
