/** PostgreSQL access for reconciliation: stores gateway rows and settlements as received, loads
 * what one window needs for the pure engine (`loadReconInput`, the specification path; runs match in
 * the database, matchInDatabase.ts), and upserts exceptions so that reruns add nothing and a
 * resolved exception is never touched again. The recon pull streams its pages through COPY into a
 * temporary stage and upserts from there in one statement (`storeReconPages`); other bulk
 * statements go through jsonb_to_recordset. */
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import { inTransaction, type Db, type Tx } from '../db/pool';
import type { RzpReconRow, RzpSettlement } from '../gateway/types';
import { addDays, istDateOf, istDayBounds } from '../domain/calendar';
import { toStoredRow, type StoredReconRow } from './gatewayRows';
import { normaliseUtr } from './bankStatementCsv';
import { CLASSES, describeReason, REASONS } from './reasons';
import { payoutDischargeSql, splitDischargeSql } from './ledgerInstruments';
import type { AppMoneyIn, AppObligation, AppPayment, AppRefund, AppReversal, AppTransfer, BankLine, ExceptionDraft, GatewayRow, ReconInput, SettlementRecord } from './model';

const BATCH = 1000;
/** Captures older than this before the window cannot be due inside it (T+2 working days). */
export const CAPTURE_LOOKBACK_DAYS = 10;

function chunks<T>(items: readonly T[], size = BATCH): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

const STAGE_COLUMNS = `seq, entity_id, settlement_id, type, amount_paise, fee_paise, tax_paise, credit_paise, debit_paise, on_hold,
  settled, recon_day, created_at, settled_at, payment_id, order_id, order_receipt, settlement_utr, note_transaction_id, note_refund_request_id, raw`;

/** A value in COPY's text format: \N for null; backslash, tab, newline and carriage return escaped. */
function copyText(value: string | null): string {
  if (value === null) return '\\N';
  return /[\\\t\n\r]/.test(value) ? value.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r')) : value;
}

/** One stage line (COPY text format) for a validated row; `seq` orders the rows as reported. */
export function reconRowCopyLine(r: StoredReconRow, seq: number): string {
  return `${seq}\t${copyText(r.entityId)}\t${copyText(r.settlementId)}\t${r.type}\t${r.amountPaise}\t${r.feePaise}\t${r.taxPaise}\t${r.creditPaise}\t${r.debitPaise}\t${r.onHold ? 't' : 'f'}\t${
    r.settled ? 't' : 'f'}\t${r.reconDay}\t${r.createdAt.toISOString()}\t${r.settledAt ? r.settledAt.toISOString() : '\\N'}\t${copyText(r.paymentId)}\t${copyText(r.gatewayOrderId)}\t${
    copyText(r.orderReceipt)}\t${copyText(r.settlementUtr)}\t${copyText(r.noteTransactionId)}\t${copyText(r.noteRefundRequestId ?? null)}\t${copyText(JSON.stringify(r.raw))}\n`;
}

export interface StoredReconPages { rows: number; received: number; settlementIds: string[] }

/** Keeps `depth` items requested ahead of the consumer, so that the source (fetching and encoding
 * pages) runs while the consumer waits on the database; never more than `depth` are held. */
async function* readAhead<T>(source: AsyncIterable<T>, depth: number): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]();
  const queue: Array<Promise<IteratorResult<T>>> = [];
  const pull = () => {
    const next = Promise.resolve(iterator.next());
    next.catch(() => undefined); // surfaced when awaited below, not as an unhandled rejection meanwhile
    queue.push(next);
  };
  for (let i = 0; i < depth; i++) pull();
  for (;;) {
    const item = await queue.shift()!;
    if (item.done) return;
    pull();
    yield item.value;
  }
}

/** Rows COPYed into the stage before they are upserted, and encoded pages held ready meanwhile: while
 * PostgreSQL upserts one chunk, the next pages are fetched, validated and encoded (memory: about
 * READ_AHEAD_PAGES pages of 1,000 rows, whatever the day's size). Chosen on bench:recon's pull step:
 * a deeper read-ahead costs memory and, on 2 cores, no time. */
const STAGE_CHUNK_ROWS = 25_000;
const READ_AHEAD_PAGES = 3;

const STAGE_TABLE = `CREATE TEMPORARY TABLE recon_rows_stage (seq bigint NOT NULL, entity_id text NOT NULL, settlement_id text, type text NOT NULL,
  amount_paise bigint NOT NULL, fee_paise bigint NOT NULL, tax_paise bigint NOT NULL, credit_paise bigint NOT NULL, debit_paise bigint NOT NULL,
  on_hold boolean NOT NULL, settled boolean NOT NULL, recon_day date NOT NULL, created_at timestamptz NOT NULL, settled_at timestamptz,
  payment_id text, order_id text, order_receipt text, settlement_utr text, note_transaction_id text, note_refund_request_id text,
  raw jsonb NOT NULL) ON COMMIT DROP`;

/** Upserts the staged chunk: the last row reported per key (found on the narrow key columns; sorting
 * the wide rows would spill to disk), a later chunk's row replacing an earlier one's. Counts the keys
 * this transaction had not stored yet (a key already written by this transaction has
 * last_seen_at = now(); RETURNING old needs PostgreSQL 18). */
const UPSERT_STAGE = `
  WITH upserted AS (
    INSERT INTO recon_rows (entity_id, settlement_id, type, amount_paise, fee_paise, tax_paise, credit_paise, debit_paise, on_hold,
      settled, recon_day, created_at, settled_at, payment_id, order_id, order_receipt, settlement_utr, note_transaction_id, note_refund_request_id, raw)
    SELECT entity_id, settlement_id, type, amount_paise, fee_paise, tax_paise, credit_paise, debit_paise,
      on_hold, settled, recon_day, created_at, settled_at, payment_id, order_id, order_receipt, settlement_utr, note_transaction_id, note_refund_request_id, raw
    FROM recon_rows_stage
    WHERE seq IN (SELECT max(seq) FROM recon_rows_stage GROUP BY entity_id, settlement_id)
    ON CONFLICT (entity_id, settlement_id) DO UPDATE SET
      type = EXCLUDED.type, amount_paise = EXCLUDED.amount_paise, fee_paise = EXCLUDED.fee_paise, tax_paise = EXCLUDED.tax_paise,
      credit_paise = EXCLUDED.credit_paise, debit_paise = EXCLUDED.debit_paise, on_hold = EXCLUDED.on_hold, settled = EXCLUDED.settled,
      recon_day = EXCLUDED.recon_day, settled_at = EXCLUDED.settled_at, settlement_utr = EXCLUDED.settlement_utr,
      note_transaction_id = EXCLUDED.note_transaction_id, note_refund_request_id = EXCLUDED.note_refund_request_id, raw = EXCLUDED.raw,
      last_seen_at = now()
    RETURNING old.last_seen_at IS DISTINCT FROM now() AS new_key
  )
  SELECT count(*) FILTER (WHERE new_key)::bigint AS stored FROM upserted`;

/** Stores one recon day's pages as they arrive: each page is validated (`toStoredRow`) and COPYed
 * into a temporary stage (dropped at commit); every STAGE_CHUNK_ROWS rows, and at the end, one
 * statement upserts the stage into recon_rows on entity id + settlement id, the last row reported for
 * a key winning (offset paging over a report that grows while we read it can repeat a row). All in
 * one transaction: a failed pull stores nothing of the day and a retry starts again. Memory holds
 * READ_AHEAD_PAGES pages at most. Returns the rows stored (distinct
 * keys), rows received and the settlement ids. */
export async function storeReconPages(db: Db, reconDay: string, pages: AsyncIterable<readonly RzpReconRow[]> | Iterable<readonly RzpReconRow[]>,
  onPage?: (received: number) => void): Promise<StoredReconPages> {
  const client = await db.connect();
  let received = 0;
  let stored = 0;
  const settlementIds = new Set<string>();
  try {
    await client.query('BEGIN');
    await client.query(STAGE_TABLE);
    let staged = 0;
    const upsertStaged = async () => {
      if (staged === 0) return;
      stored += Number((await client.query<{ stored: number }>(UPSERT_STAGE)).rows[0]!.stored);
      await client.query('TRUNCATE recon_rows_stage');
      staged = 0;
    };
    const encoded = async function* () {
      let seq = 0;
      for await (const page of pages) {
        if (page.length === 0) continue;
        let text = '';
        for (const raw of page) {
          const row = toStoredRow(raw, reconDay);
          if (row.settlementId !== null) settlementIds.add(row.settlementId);
          text += reconRowCopyLine(row, seq++);
        }
        yield { text, rows: page.length };
      }
    };
    // A write the server has not taken yet holds the loop.
    let copy = client.query(copyFrom(`COPY recon_rows_stage (${STAGE_COLUMNS}) FROM STDIN`));
    let copied = finished(copy);
    copied.catch(() => undefined); // awaited below; an early failure must not count as unhandled
    try {
      for await (const { text, rows } of readAhead(encoded(), READ_AHEAD_PAGES)) {
        if (!copy.write(text)) await Promise.race([once(copy, 'drain'), copied]);
        staged += rows;
        received += rows;
        onPage?.(received);
        if (staged >= STAGE_CHUNK_ROWS) {
          copy.end();
          await copied;
          await upsertStaged();
          copy = client.query(copyFrom(`COPY recon_rows_stage (${STAGE_COLUMNS}) FROM STDIN`));
          copied = finished(copy);
          copied.catch(() => undefined);
        }
      }
      copy.end();
      await copied;
    } catch (err) {
      // CopyFail: the server ends the COPY and the connection stays usable for the ROLLBACK.
      copy.destroy(err instanceof Error ? err : new Error(String(err)));
      await copied.catch(() => undefined);
      throw err;
    }
    await upsertStaged();
    await client.query('COMMIT');
    return { rows: stored, received, settlementIds: [...settlementIds].sort() };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/** Stores a settlement as the provider last described it (recon pull, fetch, or its
 * settlement.processed webhook). A UTR once known is never replaced by a missing one, and a status
 * never goes back to `created`; `last_seen_at` paces the refresh of one still without a UTR. */
export async function upsertSettlement(q: Db | Tx, s: RzpSettlement, settledDay: string, via: 'recon' | 'webhook' = 'recon'): Promise<void> {
  await q.query(
    `INSERT INTO settlements AS st (id, amount_paise, fees_paise, tax_paise, status, utr, utr_normalised, settled_day, created_at, raw, first_seen_via)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, to_timestamp($9), $10, $11)
     ON CONFLICT (id) DO UPDATE SET amount_paise = EXCLUDED.amount_paise, fees_paise = EXCLUDED.fees_paise, tax_paise = EXCLUDED.tax_paise,
       status = CASE WHEN EXCLUDED.status = 'created' THEN st.status ELSE EXCLUDED.status END,
       utr = COALESCE(EXCLUDED.utr, st.utr), utr_normalised = COALESCE(EXCLUDED.utr_normalised, st.utr_normalised),
       raw = CASE WHEN EXCLUDED.utr IS NULL AND st.utr IS NOT NULL THEN st.raw ELSE EXCLUDED.raw END,
       last_seen_at = now(), updated_at = now()`,
    [s.id, s.amount, s.fees, s.tax, s.status, s.utr, s.utr ? normaliseUtr(s.utr) : null, settledDay, s.created_at, s, via],
  );
}

/** Settlement ids reported on a day that we have not stored yet. */
export async function unknownSettlementIds(db: Db, ids: readonly string[]): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(`SELECT x.id FROM unnest($1::text[]) AS x(id) WHERE NOT EXISTS (SELECT 1 FROM settlements s WHERE s.id = x.id)`, [ids]);
  return rows.map((r) => r.id);
}

interface RowRecord {
  entity_id: string; settlement_id: string | null; type: GatewayRow['type']; amount_paise: number; fee_paise: number; tax_paise: number;
  credit_paise: number; debit_paise: number; on_hold: boolean; settled: boolean; recon_day: string; payment_id: string | null;
  order_id: string | null; order_receipt: string | null; note_transaction_id: string | null; note_refund_request_id: string | null;
}

function toGatewayRow(r: RowRecord): GatewayRow {
  return {
    entityId: r.entity_id, settlementId: r.settlement_id, type: r.type, amountPaise: r.amount_paise, feePaise: r.fee_paise, taxPaise: r.tax_paise,
    creditPaise: r.credit_paise, debitPaise: r.debit_paise, onHold: r.on_hold, settled: r.settled, reconDay: r.recon_day,
    paymentId: r.payment_id, gatewayOrderId: r.order_id, orderReceipt: r.order_receipt,
    noteTransactionId: r.type === 'transfer' ? r.note_transaction_id : null, noteRefundRequestId: r.type === 'refund' ? r.note_refund_request_id : null,
  };
}

const PAYMENT_COLUMNS = `id, order_id, gateway_order_id, amount_paise, fee_paise, tax_paise, captured_at`;
function toAppPayment(r: { id: string; order_id: string | null; gateway_order_id: string; amount_paise: number; fee_paise: number | null; tax_paise: number | null; captured_at: Date | null }): AppPayment {
  return { id: r.id, orderId: r.order_id, gatewayOrderId: r.gateway_order_id, amountPaise: r.amount_paise, feePaise: r.fee_paise, taxPaise: r.tax_paise, capturedAt: r.captured_at };
}

/** Everything the engine needs for [from, to]; see ReconInput. Rows come in the order they were
 * reported (day, then storage order) and bank lines in storage order: the engine's "first row" and
 * "first line" are those, as in matchInDatabase.ts. */
export async function loadReconInput(db: Db, window: { from: string; to: string; asOf: string; holidays: ReadonlySet<string> }): Promise<ReconInput> {
  const { from, to } = window;
  const rows = (await db.query<RowRecord>(
    `WITH w AS (SELECT * FROM recon_rows WHERE recon_day BETWEEN $1 AND $2),
          more AS (SELECT r.* FROM recon_rows r WHERE r.type = 'payment' AND r.recon_day NOT BETWEEN $1 AND $2
                     AND r.entity_id IN (SELECT entity_id FROM w WHERE type = 'payment'))
     SELECT entity_id, settlement_id, type, amount_paise, fee_paise, tax_paise, credit_paise, debit_paise, on_hold, settled,
            to_char(recon_day, 'YYYY-MM-DD') AS recon_day, payment_id, order_id, order_receipt,
            note_transaction_id, note_refund_request_id
     FROM (SELECT * FROM w UNION ALL SELECT * FROM more) r ORDER BY recon_day, id`,
    [from, to],
  )).rows.map(toGatewayRow);

  const paymentRows = rows.filter((r) => r.type === 'payment');
  const receipts = [...new Set(paymentRows.map((r) => r.orderReceipt).filter((x): x is string => !!x))];
  const gatewayOrderIds = [...new Set(paymentRows.map((r) => r.gatewayOrderId).filter((x): x is string => !!x))];
  const moneyIn: AppMoneyIn[] = (await db.query<{ kind: 'order' | 'topup'; id: string; gateway_order_id: string | null; amount_paise: number }>(
    `SELECT 'order' AS kind, id, gateway_order_id, customer_share_paise AS amount_paise FROM orders WHERE id = ANY($1) OR gateway_order_id = ANY($2)
     UNION ALL
     SELECT 'topup', id, gateway_order_id, amount_paise FROM wallet_topups WHERE id = ANY($1) OR gateway_order_id = ANY($2)`,
    [receipts, gatewayOrderIds],
  )).rows.map((r) => ({ kind: r.kind, id: r.id, gatewayOrderId: r.gateway_order_id, amountPaise: r.amount_paise }));

  const paymentIds = [...new Set([...paymentRows.map((r) => r.entityId), ...rows.map((r) => r.paymentId).filter((x): x is string => !!x)])];
  const payments = (await db.query(`SELECT ${PAYMENT_COLUMNS} FROM payments WHERE id = ANY($1)`, [paymentIds])).rows.map(toAppPayment);

  const refundRows = rows.filter((r) => r.type === 'refund');
  const refundIds = refundRows.map((r) => r.entityId);
  const refundRequestIds = refundRows.map((r) => r.noteRefundRequestId).filter((x): x is string => !!x);
  const refunds: AppRefund[] = (await db.query<{ id: string; gateway_refund_id: string | null; amount_paise: number }>(
    `SELECT id, gateway_refund_id, amount_paise FROM refunds WHERE gateway_refund_id = ANY($1) OR id = ANY($2)`, [refundIds, refundRequestIds],
  )).rows.map((r) => ({ id: r.id, gatewayRefundId: r.gateway_refund_id, amountPaise: r.amount_paise }));

  const transferRows = rows.filter((r) => r.type === 'transfer');
  const transferIds = transferRows.map((r) => r.entityId);
  const noteIds = transferRows.map((r) => r.noteTransactionId).filter((x): x is string => !!x);
  const sourceOrderIds = payments.filter((p) => transferRows.some((t) => t.paymentId === p.id)).map((p) => p.orderId).filter((x): x is string => !!x);
  const transfers: AppTransfer[] = (await db.query<{
    kind: 'payout' | 'split'; id: string; order_id: string; provider_transfer_id: string | null; amount_paise: number; status: string;
    ledger_state: 'in_flight' | 'paid' | null; ledger_transfer_id: string | null;
  }>(
    `SELECT 'payout' AS kind, p.id::text AS id, p.subject_id AS order_id, p.provider_transfer_id, p.amount_paise, p.status,
            d.state AS ledger_state, d.provider_ref AS ledger_transfer_id
       FROM payouts p LEFT JOIN LATERAL (${payoutDischargeSql('p.id')}) d ON true
      WHERE p.provider_transfer_id = ANY($1) OR p.id::text = ANY($2)
     UNION ALL
     SELECT 'split', s.order_id, s.order_id, s.provider_transfer_id, s.amount_paise, s.status, d.state, d.provider_ref
       FROM split_transfers s LEFT JOIN LATERAL (${splitDischargeSql('s.order_id')}) d ON true
      WHERE s.provider_transfer_id = ANY($1) OR s.order_id = ANY($3)`,
    [transferIds, noteIds, sourceOrderIds],
  )).rows.map((r) => ({
    kind: r.kind, id: r.id, orderId: r.order_id, providerTransferId: r.provider_transfer_id, amountPaise: r.amount_paise, status: r.status,
    ledger: r.ledger_state === null ? null : { state: r.ledger_state, transferId: r.ledger_transfer_id },
  }));

  const reversalIds = rows.filter((r) => r.type === 'reversal').map((r) => r.entityId);
  const reversals: AppReversal[] = (await db.query<{ id: string; transfer_id: string; order_id: string; amount_paise: number; transfer_amount_paise: number }>(
    `SELECT id, transfer_id, order_id, amount_paise, transfer_amount_paise FROM transfer_reversals WHERE id = ANY($1) OR transfer_id = ANY($2) ORDER BY transfer_id, id`,
    [reversalIds, transferIds],
  )).rows.map((r) => ({ id: r.id, transferId: r.transfer_id, orderId: r.order_id, amountPaise: r.amount_paise, transferAmountPaise: r.transfer_amount_paise }));

  const settlementSelect = `SELECT id, amount_paise, utr_normalised, to_char(settled_day, 'YYYY-MM-DD') AS settled_day FROM settlements`;
  const toSettlement = (r: { id: string; amount_paise: number; utr_normalised: string | null; settled_day: string }): SettlementRecord =>
    ({ id: r.id, amountPaise: r.amount_paise, utrNormalised: r.utr_normalised, settledDay: r.settled_day });
  const settlements = (await db.query(`${settlementSelect} WHERE settled_day BETWEEN $1 AND $2`, [from, to])).rows.map(toSettlement);
  const settlementUtrs = settlements.map((s) => s.utrNormalised).filter((x): x is string => !!x);
  const bankLines: BankLine[] = (await db.query<{ id: number; utr_normalised: string; amount_paise: number; value_date: string }>(
    `SELECT id, utr_normalised, amount_paise, to_char(value_date, 'YYYY-MM-DD') AS value_date FROM bank_statement_lines
     WHERE value_date BETWEEN $1 AND $2 OR utr_normalised = ANY($3) ORDER BY id`,
    [from, to, settlementUtrs],
  )).rows.map((r) => ({ id: r.id, utrNormalised: r.utr_normalised, amountPaise: r.amount_paise, valueDate: r.value_date }));
  const settlementsForBankLines = (await db.query(`${settlementSelect} WHERE utr_normalised = ANY($1)`, [[...new Set(bankLines.map((l) => l.utrNormalised))]])).rows.map(toSettlement);

  const captures = (await db.query(
    `SELECT ${PAYMENT_COLUMNS} FROM payments WHERE status IN ('captured', 'refunded') AND captured_at >= $1 AND captured_at < $2`,
    [istDayBounds(addDays(from, -CAPTURE_LOOKBACK_DAYS)).start, istDayBounds(to).end],
  )).rows.map(toAppPayment);
  const states = (await db.query<{ entity_id: string; settled: boolean; held: boolean }>(
    `SELECT entity_id, bool_or(settled AND NOT on_hold) AS settled, bool_or(on_hold) AS held FROM recon_rows
     WHERE type = 'payment' AND entity_id = ANY($1) GROUP BY entity_id`,
    [captures.map((c) => c.id)],
  )).rows;

  // What we owe for the window's days: refunds that ended refused or failed, splits paid those days
  // that are not processed yet (judged against their due date) or processed after being owed offline.
  const { start, end } = { start: istDayBounds(from).start, end: istDayBounds(to).end };
  const owed: AppObligation[] = (await db.query<{ kind: 'refund' | 'split'; id: string; order_id: string | null; payment_id: string | null; amount_paise: number; status: string; at: Date; code: string | null; after_final: boolean }>(
    `SELECT 'refund' AS kind, id, order_id, payment_id, amount_paise, status, COALESCE(rejected_at, updated_at) AS at, last_code AS code, false AS after_final
       FROM refunds WHERE status IN ('rejected', 'failed') AND COALESCE(rejected_at, updated_at) >= $1 AND COALESCE(rejected_at, updated_at) < $2
     UNION ALL
     SELECT 'split', s.order_id, s.order_id, o.paid_payment_id, s.amount_paise, s.status, o.paid_at, s.last_code, s.processed_after_final
       FROM split_transfers s JOIN orders o ON o.id = s.order_id
      WHERE (s.status = 'expected' OR s.processed_after_final) AND o.paid_at >= $1 AND o.paid_at < $2`,
    [start, end],
  )).rows.map((r) => ({ kind: r.kind, id: r.id, orderId: r.order_id, paymentId: r.payment_id, amountPaise: r.amount_paise, status: r.status, day: istDateOf(r.at), code: r.code, processedAfterFinal: r.after_final }));

  return {
    ...window, rows, moneyIn, payments, refunds, transfers, reversals, settlements, bankLines, settlementsForBankLines, captures, owed,
    settledPaymentIds: new Set(states.filter((s) => s.settled).map((s) => s.entity_id)),
    heldPaymentIds: new Set(states.filter((s) => s.held && !s.settled).map((s) => s.entity_id)),
  };
}

export interface SavedExceptions { opened: number; changed: number; cleared: number }
export interface FoundExceptionsWindow { from: string; to: string }
export interface FoundSummary extends SavedExceptions { exceptions: number; byReason: Record<string, number>; byClass: Record<string, number> }

const FOUND_TABLE = `CREATE TEMPORARY TABLE recon_found (
  key text PRIMARY KEY, reason text NOT NULL, class text NOT NULL, day date NOT NULL, entity_id text, settlement_id text, order_id text,
  bank_line_id bigint, expected_paise bigint, actual_paise bigint, details jsonb NOT NULL DEFAULT '{}') ON COMMIT DROP`;

/** `recon_found`, dropped at the end of the transaction. */
export async function createFoundExceptionsTable(tx: Tx): Promise<void> {
  await tx.query(FOUND_TABLE);
}

/** Every (reason, class) with its severity and next action (reasons.ts), for the upsert to join. */
const catalogue = JSON.stringify(REASONS.flatMap((reason) => CLASSES.map((klass) => ({ reason, class: klass, ...describeReason(reason, klass) }))));

/** One run's exceptions, in one transaction: `find` fills the temporary table `recon_found` (key,
 * reason, class, references, amounts, details) with what the run found; then they are upserted into
 * recon_exceptions and `last_run_id` names the last run that changed a row. Open exceptions of the
 * window that this run no longer finds are marked `cleared` (the missing side arrived); those raised
 * by gateway events (eventExceptions.ts) are never a run's to clear. Resolved ones are never
 * touched, except a resolved `expected` one that is now unmatched or mismatched: resolving "will
 * settle" must not silence the real difference, so it reopens (the resolution stays in
 * recon_exception_actions). */
export async function withFoundExceptions<T>(db: Db, runId: string, window: FoundExceptionsWindow, find: (tx: Tx) => Promise<T>): Promise<{ found: T; saved: FoundSummary }> {
  return inTransaction(db, async (tx) => {
    await createFoundExceptionsTable(tx);
    const found = await find(tx);
    const { rows } = await tx.query<{ inserted: boolean }>(
      `INSERT INTO recon_exceptions AS e (key, class, reason, severity, next_action, day, entity_id, settlement_id, order_id, bank_line_id,
         expected_paise, actual_paise, details, first_run_id, last_run_id)
       SELECT f.key, f.class, f.reason, c.severity, c."nextAction", f.day, f.entity_id, f.settlement_id, f.order_id, f.bank_line_id,
         f.expected_paise, f.actual_paise, f.details, $2, $2
       FROM recon_found f JOIN jsonb_to_recordset($1::jsonb) AS c(reason text, class text, severity text, "nextAction" text) ON c.reason = f.reason AND c.class = f.class
       ON CONFLICT (key) DO UPDATE SET class = EXCLUDED.class, severity = EXCLUDED.severity, next_action = EXCLUDED.next_action, day = EXCLUDED.day,
         entity_id = EXCLUDED.entity_id, settlement_id = EXCLUDED.settlement_id, order_id = EXCLUDED.order_id, bank_line_id = EXCLUDED.bank_line_id,
         expected_paise = EXCLUDED.expected_paise, actual_paise = EXCLUDED.actual_paise, details = EXCLUDED.details,
         status = 'open', last_run_id = EXCLUDED.last_run_id, updated_at = now(),
         resolved_at = NULL, resolved_by = NULL, resolution_note = NULL
       WHERE (e.status <> 'resolved' OR (e.class = 'expected' AND EXCLUDED.class <> 'expected'))
         AND (e.status, e.class, e.severity, e.next_action, e.day, e.entity_id, e.settlement_id, e.order_id, e.bank_line_id, e.expected_paise, e.actual_paise, e.details)
             IS DISTINCT FROM ('open', EXCLUDED.class, EXCLUDED.severity, EXCLUDED.next_action, EXCLUDED.day, EXCLUDED.entity_id, EXCLUDED.settlement_id,
               EXCLUDED.order_id, EXCLUDED.bank_line_id, EXCLUDED.expected_paise, EXCLUDED.actual_paise, EXCLUDED.details)
       RETURNING (xmax = 0) AS inserted`,
      [catalogue, runId],
    );
    const cleared = await tx.query(
      `UPDATE recon_exceptions e SET status = 'cleared', last_run_id = $3, updated_at = now()
       WHERE e.status = 'open' AND e.raised_by = 'recon' AND NOT EXISTS (SELECT 1 FROM recon_found f WHERE f.key = e.key)
         AND (e.day BETWEEN $1 AND $2
              OR (e.reason = 'captured-not-settled' AND EXISTS (SELECT 1 FROM recon_rows r WHERE r.type = 'payment' AND r.entity_id = e.entity_id)))`,
      [window.from, window.to, runId],
    );
    const counts = (await tx.query<{ reason: string; class: string; n: number }>(`SELECT reason, class, count(*)::int AS n FROM recon_found GROUP BY 1, 2`)).rows;
    const tally = (key: 'reason' | 'class') => counts.reduce<Record<string, number>>((acc, c) => ({ ...acc, [c[key]]: (acc[c[key]] ?? 0) + c.n }), {});
    const opened = rows.filter((r) => r.inserted).length;
    return {
      found,
      saved: { opened, changed: rows.length - opened, cleared: cleared.rowCount ?? 0, exceptions: counts.reduce((n, c) => n + c.n, 0), byReason: tally('reason'), byClass: tally('class') },
    };
  });
}

/** Saves exceptions the pure engine drafted (the specification path; see withFoundExceptions). */
export async function saveExceptions(db: Db, runId: string, window: FoundExceptionsWindow, drafts: readonly ExceptionDraft[]): Promise<SavedExceptions> {
  const { saved } = await withFoundExceptions(db, runId, window, async (tx) => {
    for (const batch of chunks(drafts)) {
      const payload = batch.map((d) => ({
        key: d.key, reason: d.reason, class: d.class, day: d.day, entity_id: d.entityId, settlement_id: d.settlementId, order_id: d.orderId,
        bank_line_id: d.bankLineId, expected_paise: d.expectedPaise, actual_paise: d.actualPaise, details: d.details,
      }));
      await tx.query(
        `INSERT INTO recon_found SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(key text, reason text, class text, day date, entity_id text,
           settlement_id text, order_id text, bank_line_id bigint, expected_paise bigint, actual_paise bigint, details jsonb)`,
        [JSON.stringify(payload)],
      );
    }
  });
  return { opened: saved.opened, changed: saved.changed, cleared: saved.cleared };
}

export async function recordRunStart(db: Db, run: { runId: string; workflowId: string; from: string; to: string; asOf: string }): Promise<void> {
  await db.query(
    `INSERT INTO recon_runs (run_id, workflow_id, from_day, to_day, as_of_day) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (run_id) DO NOTHING`,
    [run.runId, run.workflowId, run.from, run.to, run.asOf],
  );
}

export async function recordRunEnd(db: Db, runId: string, status: 'completed' | 'failed', rowsFetched: number, summary: unknown): Promise<void> {
  await db.query(`UPDATE recon_runs SET status = $2, rows_fetched = $3, summary = $4, finished_at = now() WHERE run_id = $1`, [runId, status, rowsFetched, JSON.stringify(summary)]);
}
