/** PostgreSQL access for reconciliation: stores gateway rows and settlements as received (what one
 * window needs for the pure engine, the specification path, is inputLoader.ts; runs match in the
 * database, matchInDatabase.ts), and upserts exceptions so that reruns add nothing and a
 * resolved exception is never touched again. The recon pull streams its pages through COPY into a
 * temporary stage and upserts from there in one statement (`storeReconPages`); other bulk
 * statements go through jsonb_to_recordset. */
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import { inTransaction, type Db, type Tx } from '../db/pool';
import type { RzpReconRow, RzpSettlement } from '../gateway/types';
import { toStoredRow, type StoredReconRow } from './gatewayRows';
import { normaliseUtr } from './bankStatementCsv';
import { CLASSES, describeReason, REASONS } from './reasons';
import type { ExceptionDraft } from './model';

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
