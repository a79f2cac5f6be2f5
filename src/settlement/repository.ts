/** Settlement batches in PostgreSQL: freezing a run's lines into a batch, and finance's decisions on
 * its lines (paid with the bank's UTR, failed, the batch cancelled), each in one transaction with
 * its audit row. A refused decision throws an AppError naming the line and field and changes nothing. */
import { AppError } from '../appError';
import { istDayBounds } from '../domain/calendar';
import { formatRupees } from '../domain/money';
import { inTransaction, type Db, type Tx } from '../db/pool';
import { recordSettlementLinesInLedger } from '../ledger/settlementLines';
import { normaliseUtr } from '../recon/bankStatementCsv';
import { planSettlement, type SkippedVendor } from './netting';
import { batchIdForRun, lineReference } from './references';

/** Two freezes at once would race for the same open lines; one waits for the other. */
export const FREEZE_LOCK = 7_233_104;

export interface FreezeInput { runId: string; workflowId: string; from: string; to: string; vendorIds: string[] | null; actor: string }

export type BatchStatus = 'open' | 'closed' | 'cancelled';
export type LineStatus = 'open' | 'paid' | 'failed' | 'cancelled';

export interface SettlementLineView {
  id: number; reference: string; vendorId: string; vendorName: string; amountPaise: number; members: number;
  beneficiaryName: string; ifsc: string; accountMasked: string;
  status: LineStatus; utr: string | null; paidOn: string | null; failureReason: string | null; decidedBy: string | null; decidedAt: string | null;
}

export interface SettlementTotals { lines: number; open: number; paid: number; failed: number; cancelled: number; amountPaise: number; paidPaise: number; openPaise: number }

export interface SettlementBatchView {
  id: string; workflowId: string; runId: string; from: string; to: string; vendorIds: string[] | null; status: BatchStatus;
  skipped: SkippedVendor[]; createdBy: string; createdAt: string; closedAt: string | null;
  cancelledBy: string | null; cancelReason: string | null; cancelledAt: string | null;
  /** Its bank file's downloads (null: never downloaded): once downloaded, the bank may be paying it. */
  bankFile: BankFileDownloads | null;
  totals: SettlementTotals; lines: SettlementLineView[];
}

/** Freezes every open, unbatched offline line of the period (and, carried forward, older ones still
 * open) for the chosen vendors into a batch. Idempotent on the workflow run: a retried activity finds
 * the batch it made. */
export async function freezeBatch(db: Db, input: FreezeInput): Promise<SettlementBatchView> {
  const batchId = await inTransaction(db, async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [FREEZE_LOCK]);
    const existing = await tx.query<{ id: string }>('SELECT id FROM settlement_batches WHERE run_id = $1', [input.runId]);
    if (existing.rows[0]) return existing.rows[0].id;

    const { rows: open } = await tx.query<{ id: string; vendor_id: string; amount_paise: string }>(
      `SELECT id, vendor_id, amount_paise FROM offline_ledger_open
        WHERE batch_line_id IS NULL AND created_at < $1 AND ($2::text[] IS NULL OR vendor_id = ANY($2))`,
      [istDayBounds(input.to).end, input.vendorIds],
    );
    const vendorIds = [...new Set(open.map((l) => l.vendor_id))];
    const { rows: bank } = await tx.query<{ vendor_id: string }>('SELECT vendor_id FROM vendor_bank_details WHERE vendor_id = ANY($1) FOR SHARE', [vendorIds]);
    const payable = new Set(bank.map((b) => b.vendor_id));
    const plan = planSettlement(open.map((l) => ({ ledgerId: Number(l.id), vendorId: l.vendor_id, amountPaise: Number(l.amount_paise) })), (v) => payable.has(v));

    const id = batchIdForRun(input.runId);
    await tx.query(
      `INSERT INTO settlement_batches (id, workflow_id, run_id, period_from, period_to, vendor_ids, status, skipped, created_by, closed_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, CASE WHEN $7 = 'closed' THEN now() END)`,
      [id, input.workflowId, input.runId, input.from, input.to, input.vendorIds, plan.payments.length === 0 ? 'closed' : 'open', JSON.stringify(plan.skipped), input.actor],
    );
    let sequence = 0;
    for (const payment of plan.payments) {
      sequence += 1;
      const { rows: [line] } = await tx.query<{ id: string }>(
        // The details as they are now, copied in SQL: a JS Date would drop the timestamp's microseconds.
        `INSERT INTO settlement_lines (batch_id, vendor_id, reference, amount_paise, beneficiary_name, ifsc, account_masked, bank_details_updated_at)
         SELECT $1, $2, $3, $4, d.beneficiary_name, d.ifsc, d.account_masked, d.updated_at FROM vendor_bank_details d WHERE d.vendor_id = $2
         RETURNING id`,
        [id, payment.vendorId, lineReference(id, sequence), payment.amountPaise],
      );
      await tx.query(
        `INSERT INTO settlement_line_members (line_id, ledger_id, amount_paise)
         SELECT $1, unnest($2::bigint[]), unnest($3::bigint[])`,
        [line!.id, payment.members.map((m) => m.ledgerId), payment.members.map((m) => m.amountPaise)],
      );
      await recordSettlementLinesInLedger(tx, [line!.id]); // in flight until the bank answers
    }
    const total = plan.payments.reduce((sum, p) => sum + p.amountPaise, 0);
    await audit(tx, id, null, input.actor, 'start', `${input.from}..${input.to}${input.vendorIds ? ` vendors ${input.vendorIds.join(',')}` : ''}: ${plan.payments.length} line(s), ${formatRupees(total)}; ${plan.skipped.length} vendor(s) carried forward`);
    return id;
  });
  return (await readBatch(db, batchId))!;
}

async function audit(tx: Tx, batchId: string, lineId: number | string | null, actor: string, action: string, detail: string): Promise<void> {
  await tx.query('INSERT INTO settlement_actions (batch_id, line_id, actor, action, detail) VALUES ($1, $2, $3, $4, $5)', [batchId, lineId, actor, action, detail]);
}

const LINE_COLUMNS = `l.id, l.reference, l.vendor_id, v.name AS vendor_name, l.amount_paise, l.beneficiary_name, l.ifsc, l.account_masked,
  l.status, l.utr, to_char(l.paid_on, 'YYYY-MM-DD') AS paid_on, l.failure_reason, l.decided_by, l.decided_at,
  (SELECT count(*) FROM settlement_line_members m WHERE m.line_id = l.id) AS members`;

interface LineRow {
  id: string; reference: string; vendor_id: string; vendor_name: string; amount_paise: string; beneficiary_name: string; ifsc: string; account_masked: string;
  status: LineStatus; utr: string | null; paid_on: string | null; failure_reason: string | null; decided_by: string | null; decided_at: Date | null; members: string;
}

function lineView(r: LineRow): SettlementLineView {
  return {
    id: Number(r.id), reference: r.reference, vendorId: r.vendor_id, vendorName: r.vendor_name, amountPaise: Number(r.amount_paise), members: Number(r.members),
    beneficiaryName: r.beneficiary_name, ifsc: r.ifsc, accountMasked: r.account_masked,
    status: r.status, utr: r.utr, paidOn: r.paid_on, failureReason: r.failure_reason, decidedBy: r.decided_by, decidedAt: r.decided_at?.toISOString() ?? null,
  };
}

export function totalsOf(lines: readonly Pick<SettlementLineView, 'status' | 'amountPaise'>[]): SettlementTotals {
  const totals: SettlementTotals = { lines: lines.length, open: 0, paid: 0, failed: 0, cancelled: 0, amountPaise: 0, paidPaise: 0, openPaise: 0 };
  for (const line of lines) {
    totals[line.status] += 1;
    totals.amountPaise += line.amountPaise;
    if (line.status === 'paid') totals.paidPaise += line.amountPaise;
    if (line.status === 'open') totals.openPaise += line.amountPaise;
  }
  return totals;
}

export async function readBatch(db: Pick<Db, 'query'>, batchId: string): Promise<SettlementBatchView | null> {
  const { rows: [b] } = await db.query<{
    id: string; workflow_id: string; run_id: string; from: string; to: string; vendor_ids: string[] | null; status: BatchStatus; skipped: SkippedVendor[];
    created_by: string; created_at: Date; closed_at: Date | null; cancelled_by: string | null; cancel_reason: string | null; cancelled_at: Date | null;
  }>(
    `SELECT id, workflow_id, run_id, to_char(period_from, 'YYYY-MM-DD') AS from, to_char(period_to, 'YYYY-MM-DD') AS to, vendor_ids, status, skipped,
            created_by, created_at, closed_at, cancelled_by, cancel_reason, cancelled_at
       FROM settlement_batches WHERE id = $1`,
    [batchId],
  );
  if (!b) return null;
  const { rows } = await db.query<LineRow>(`SELECT ${LINE_COLUMNS} FROM settlement_lines l JOIN vendors v ON v.id = l.vendor_id WHERE l.batch_id = $1 ORDER BY l.reference`, [batchId]);
  const lines = rows.map(lineView);
  return {
    id: b.id, workflowId: b.workflow_id, runId: b.run_id, from: b.from, to: b.to, vendorIds: b.vendor_ids, status: b.status, skipped: b.skipped,
    createdBy: b.created_by, createdAt: b.created_at.toISOString(), closedAt: b.closed_at?.toISOString() ?? null,
    cancelledBy: b.cancelled_by, cancelReason: b.cancel_reason, cancelledAt: b.cancelled_at?.toISOString() ?? null,
    bankFile: await bankFileDownloads(db, batchId),
    totals: totalsOf(lines), lines,
  };
}

export interface BatchListEntry { id: string; from: string; to: string; status: BatchStatus; createdBy: string; createdAt: string; lines: number; amountPaise: number; paidPaise: number; openLines: number }

export async function listBatches(db: Pick<Db, 'query'>, filter: { status?: BatchStatus; limit: number }): Promise<BatchListEntry[]> {
  const { rows } = await db.query<{ id: string; from: string; to: string; status: BatchStatus; created_by: string; created_at: Date; lines: string; amount: string; paid: string; open_lines: string }>(
    `SELECT b.id, to_char(b.period_from, 'YYYY-MM-DD') AS from, to_char(b.period_to, 'YYYY-MM-DD') AS to, b.status, b.created_by, b.created_at,
            count(l.id) AS lines, coalesce(sum(l.amount_paise), 0) AS amount,
            coalesce(sum(l.amount_paise) FILTER (WHERE l.status = 'paid'), 0) AS paid, count(l.id) FILTER (WHERE l.status = 'open') AS open_lines
       FROM settlement_batches b LEFT JOIN settlement_lines l ON l.batch_id = b.id
      WHERE ($1::text IS NULL OR b.status = $1)
      GROUP BY b.id ORDER BY b.created_at DESC LIMIT $2`,
    [filter.status ?? null, filter.limit],
  );
  return rows.map((r) => ({ id: r.id, from: r.from, to: r.to, status: r.status, createdBy: r.created_by, createdAt: r.created_at.toISOString(), lines: Number(r.lines), amountPaise: Number(r.amount), paidPaise: Number(r.paid), openLines: Number(r.open_lines) }));
}

interface LockedLine { id: string; batch_id: string; reference: string; amount_paise: string; status: LineStatus; utr_normalised: string | null; batch_status: BatchStatus }

async function lockLine(tx: Tx, reference: string): Promise<LockedLine> {
  const { rows: [line] } = await tx.query<LockedLine>(
    `SELECT l.id, l.batch_id, l.reference, l.amount_paise, l.status, l.utr_normalised, b.status AS batch_status
       FROM settlement_lines l JOIN settlement_batches b ON b.id = l.batch_id
      WHERE l.reference = $1 FOR UPDATE OF l, b`,
    [reference],
  );
  if (!line) throw new AppError(404, 'settlement_line_not_found', `no settlement line ${reference}`, { line: reference, field: 'reference' });
  if (line.batch_status === 'cancelled') throw new AppError(409, 'settlement_batch_cancelled', `line ${reference} belongs to batch ${line.batch_id}, which was cancelled`, { line: reference, batchId: line.batch_id });
  return line;
}

export interface PaidInput { reference: string; utr: string; paidOn: string; amountPaise?: number; actor: string }
export type DecisionResult = { reference: string; batchId: string; status: LineStatus; alreadyRecorded: boolean; batchStatus: BatchStatus };

/** Records that the bank paid a line: its UTR (used by no other line) and value date; the amount, when
 * given, must be the line's. Recording the same UTR again is answered as already recorded. */
export async function recordLinePaid(db: Db, input: PaidInput): Promise<DecisionResult> {
  return inTransaction(db, (tx) => applyPaid(tx, input));
}

async function applyPaid(tx: Tx, input: PaidInput): Promise<DecisionResult> {
  const line = await lockLine(tx, input.reference);
  const utr = normaliseUtr(input.utr);
  const amount = Number(line.amount_paise);
  if (line.status === 'paid' && line.utr_normalised === utr) return { reference: line.reference, batchId: line.batch_id, status: 'paid', alreadyRecorded: true, batchStatus: line.batch_status };
  if (line.status !== 'open') throw new AppError(409, 'settlement_line_not_open', `line ${line.reference} is already ${line.status}${line.utr_normalised ? ` (UTR ${line.utr_normalised})` : ''}`, { line: line.reference, field: 'status', status: line.status });
  if (input.amountPaise !== undefined && input.amountPaise !== amount) {
    throw new AppError(409, 'settlement_amount_differs', `line ${line.reference} is for ${formatRupees(amount)}, not ${formatRupees(input.amountPaise)}`, { line: line.reference, field: 'amount', expectedPaise: amount, actualPaise: input.amountPaise });
  }
  const { rows: [other] } = await tx.query<{ reference: string }>('SELECT reference FROM settlement_lines WHERE utr_normalised = $1', [utr]);
  if (other) throw new AppError(409, 'utr_already_used', `UTR ${utr} already pays line ${other.reference}`, { line: line.reference, field: 'utr', usedBy: other.reference });
  await tx.query(
    `UPDATE settlement_lines SET status = 'paid', utr = $2, utr_normalised = $3, paid_on = $4, decided_by = $5, decided_at = now() WHERE id = $1`,
    [line.id, input.utr.trim(), utr, input.paidOn, input.actor],
  );
  await recordSettlementLinesInLedger(tx, [line.id]);
  await audit(tx, line.batch_id, line.id, input.actor, 'paid', `UTR ${utr} on ${input.paidOn}, ${formatRupees(amount)}`);
  return { reference: line.reference, batchId: line.batch_id, status: 'paid', alreadyRecorded: false, batchStatus: await closeIfDecided(tx, line.batch_id) };
}

export interface FailedInput { reference: string; reason: string; amountPaise?: number; actor: string }

/** The bank returned the payment: the line fails and its ledger lines are open again. */
export async function recordLineFailed(db: Db, input: FailedInput): Promise<DecisionResult> {
  return inTransaction(db, (tx) => applyFailed(tx, input));
}

async function applyFailed(tx: Tx, input: FailedInput): Promise<DecisionResult> {
  const line = await lockLine(tx, input.reference);
  if (line.status === 'failed') return { reference: line.reference, batchId: line.batch_id, status: 'failed', alreadyRecorded: true, batchStatus: line.batch_status };
  if (line.status !== 'open') throw new AppError(409, 'settlement_line_not_open', `line ${line.reference} is already ${line.status}`, { line: line.reference, field: 'status', status: line.status });
  const amount = Number(line.amount_paise);
  if (input.amountPaise !== undefined && input.amountPaise !== amount) {
    throw new AppError(409, 'settlement_amount_differs', `line ${line.reference} is for ${formatRupees(amount)}, not ${formatRupees(input.amountPaise)}`, { line: line.reference, field: 'amount', expectedPaise: amount, actualPaise: input.amountPaise });
  }
  await tx.query(`UPDATE settlement_lines SET status = 'failed', failure_reason = $2, decided_by = $3, decided_at = now() WHERE id = $1`, [line.id, input.reason, input.actor]);
  await tx.query('UPDATE settlement_line_members SET active = false WHERE line_id = $1', [line.id]);
  await recordSettlementLinesInLedger(tx, [line.id]);
  await audit(tx, line.batch_id, line.id, input.actor, 'failed', input.reason);
  return { reference: line.reference, batchId: line.batch_id, status: 'failed', alreadyRecorded: false, batchStatus: await closeIfDecided(tx, line.batch_id) };
}

async function closeIfDecided(tx: Tx, batchId: string): Promise<BatchStatus> {
  const { rowCount } = await tx.query(
    `UPDATE settlement_batches SET status = 'closed', closed_at = now()
      WHERE id = $1 AND status = 'open' AND NOT EXISTS (SELECT 1 FROM settlement_lines WHERE batch_id = $1 AND status = 'open')`,
    [batchId],
  );
  return rowCount ? 'closed' : 'open';
}

export interface CancelInput { batchId: string; reason: string; actor: string; confirmNotSubmitted?: boolean | undefined }

/** A batch can be cancelled while none of its lines is paid: its lines return to the open ledger,
 * and the next run pays them. Once its bank file was downloaded the bank may be paying those lines
 * already, so the cancel also needs finance's word that the file was never submitted to the bank
 * (audited with the downloads); otherwise each line's answer is recorded, paid or failed. */
export async function cancelBatch(db: Db, input: CancelInput): Promise<SettlementBatchView> {
  await inTransaction(db, async (tx) => {
    const { rows: [batch] } = await tx.query<{ status: BatchStatus }>('SELECT status FROM settlement_batches WHERE id = $1 FOR UPDATE', [input.batchId]);
    if (!batch) throw new AppError(404, 'not_found', `no settlement batch ${input.batchId}`);
    if (batch.status === 'cancelled') return;
    const { rows: paid } = await tx.query<{ reference: string }>(`SELECT reference FROM settlement_lines WHERE batch_id = $1 AND status = 'paid' ORDER BY reference`, [input.batchId]);
    if (paid.length > 0) throw new AppError(409, 'settlement_batch_has_paid_lines', `batch ${input.batchId} has paid line(s) ${paid.map((p) => p.reference).join(', ')}: record the rest as failed instead`, { lines: paid.map((p) => p.reference) });
    if (batch.status !== 'open') throw new AppError(409, 'settlement_batch_not_open', `batch ${input.batchId} is ${batch.status}`);
    const downloads = await bankFileDownloads(tx, input.batchId);
    if (downloads && input.confirmNotSubmitted !== true) throw await fileDownloadedRefusal(tx, input.batchId, downloads);
    await tx.query(`UPDATE settlement_line_members m SET active = false FROM settlement_lines l WHERE l.id = m.line_id AND l.batch_id = $1`, [input.batchId]);
    const { rows: cancelled } = await tx.query<{ id: string }>(
      `UPDATE settlement_lines SET status = 'cancelled', decided_by = $2, decided_at = now() WHERE batch_id = $1 AND status = 'open' RETURNING id`, [input.batchId, input.actor]);
    await recordSettlementLinesInLedger(tx, cancelled.map((l) => l.id));
    await tx.query(`UPDATE settlement_batches SET status = 'cancelled', cancelled_by = $2, cancel_reason = $3, cancelled_at = now() WHERE id = $1`, [input.batchId, input.actor, input.reason]);
    const confirmed = downloads ? `; bank file downloaded ${downloads.downloads} time(s) (last sha256 ${downloads.lastSha256}), confirmed not submitted to the bank` : '';
    await audit(tx, input.batchId, null, input.actor, 'cancel', `${input.reason}${confirmed}`);
  });
  return (await readBatch(db, input.batchId))!;
}

/** The batch's bank file downloads (each audited as `bank_file`), or null when none. */
export interface BankFileDownloads { downloads: number; lastDownloadedAt: string; lastDownloadedBy: string; lastSha256: string | null }

async function bankFileDownloads(db: Pick<Db, 'query'>, batchId: string): Promise<BankFileDownloads | null> {
  const { rows: [d] } = await db.query<{ n: number; at: Date | null; by: string | null; detail: string | null }>(
    `SELECT count(*)::int AS n, max(created_at) AS at, (array_agg(actor ORDER BY id DESC))[1] AS by, (array_agg(detail ORDER BY id DESC))[1] AS detail
       FROM settlement_actions WHERE batch_id = $1 AND action = 'bank_file'`,
    [batchId],
  );
  if (!d || d.n === 0) return null;
  return { downloads: d.n, lastDownloadedAt: d.at!.toISOString(), lastDownloadedBy: d.by!, lastSha256: /sha256 ([0-9a-f]{64})/.exec(d.detail ?? '')?.[1] ?? null };
}

async function fileDownloadedRefusal(tx: Tx, batchId: string, d: BankFileDownloads): Promise<AppError> {
  const { rows } = await tx.query<{ reference: string }>(`SELECT reference FROM settlement_lines WHERE batch_id = $1 AND status = 'open' ORDER BY reference`, [batchId]);
  return new AppError(409, 'settlement_batch_file_downloaded',
    `batch ${batchId}'s bank file was downloaded (${d.downloads} time(s), last by ${d.lastDownloadedBy} at ${d.lastDownloadedAt}), so the bank may be paying its lines; `
    + 'a cancelled batch\'s lines are paid again by the next run. Instead, record each line paid with its UTR or failed with the bank\'s reason (one by one or by the bank\'s response file). '
    + 'Cancel only if the file was never submitted to the bank, saying so (confirmNotSubmitted: true); that is audited',
    { batchId, field: 'confirmNotSubmitted', downloads: d.downloads, lastDownloadedAt: d.lastDownloadedAt, lastDownloadedBy: d.lastDownloadedBy, lines: rows.map((r) => r.reference) });
}

export type ImportRow = ({ status: 'paid' } & Omit<PaidInput, 'actor'>) | ({ status: 'failed' } & Omit<FailedInput, 'actor'>);

/** Applies a bank response file whole or not at all: the first refused row (named by its file line)
 * rolls back every row. */
export async function importBankResponse(db: Db, input: { rows: Array<ImportRow & { lineNo: number }>; fileName?: string | undefined; actor: string }): Promise<DecisionResult[]> {
  return inTransaction(db, async (tx) => {
    const results: DecisionResult[] = [];
    const batches = new Set<string>();
    for (const row of input.rows) {
      try {
        results.push(row.status === 'paid' ? await applyPaid(tx, { ...row, actor: input.actor }) : await applyFailed(tx, { ...row, actor: input.actor }));
      } catch (err) {
        if (err instanceof AppError) throw new AppError(err.httpStatus === 404 ? 400 : err.httpStatus, err.code, `file line ${row.lineNo}: ${err.message}; nothing was imported`, { fileLine: row.lineNo, ...(err.details as object) });
        throw err;
      }
      batches.add(results[results.length - 1]!.batchId);
    }
    for (const batchId of batches) await audit(tx, batchId, null, input.actor, 'import', `${input.fileName ?? 'bank response'}: ${input.rows.length} row(s)`);
    return results;
  });
}

/** What the bank file needs for each open line, after checking it is still right to pay: every member
 * still owed offline in this line, and the vendor's bank details unchanged since the freeze. */
export async function linesForBankFile(tx: Pick<Db, 'query'>, batchId: string): Promise<Array<{ reference: string; vendorId: string; amountPaise: number; beneficiaryName: string; ifsc: string }>> {
  const { rows: [batch] } = await tx.query<{ status: BatchStatus }>('SELECT status FROM settlement_batches WHERE id = $1', [batchId]);
  if (!batch) throw new AppError(404, 'not_found', `no settlement batch ${batchId}`);
  if (batch.status !== 'open') throw new AppError(409, 'settlement_batch_not_open', `batch ${batchId} is ${batch.status}: there is nothing to pay`);
  const { rows: stale } = await tx.query<{ reference: string; order_id: string | null; ledger_id: string }>(
    `SELECT l.reference, o.order_id, m.ledger_id
       FROM settlement_lines l JOIN settlement_line_members m ON m.line_id = l.id AND m.active
       JOIN offline_ledger o ON o.id = m.ledger_id
      WHERE l.batch_id = $1 AND l.status = 'open'
        AND NOT EXISTS (SELECT 1 FROM offline_ledger_open v WHERE v.id = m.ledger_id AND v.batch_line_id = l.id)
      ORDER BY l.reference LIMIT 20`,
    [batchId],
  );
  if (stale.length > 0) {
    throw new AppError(409, 'settlement_line_no_longer_owed', `line ${stale[0]!.reference}: order ${stale[0]!.order_id ?? `ledger line ${stale[0]!.ledger_id}`} is no longer owed offline (a transfer may pay it); cancel the batch and run again`, { lines: stale.map((s) => ({ line: s.reference, orderId: s.order_id })) });
  }
  const { rows: changed } = await tx.query<{ reference: string; vendor_id: string }>(
    `SELECT l.reference, l.vendor_id FROM settlement_lines l LEFT JOIN vendor_bank_details d ON d.vendor_id = l.vendor_id
      WHERE l.batch_id = $1 AND l.status = 'open' AND (d.updated_at IS DISTINCT FROM l.bank_details_updated_at) ORDER BY l.reference`,
    [batchId],
  );
  if (changed.length > 0) {
    throw new AppError(409, 'bank_details_changed', `line ${changed[0]!.reference}: vendor ${changed[0]!.vendor_id}'s bank details changed after the batch was frozen; cancel the batch and run again`, { lines: changed.map((c) => ({ line: c.reference, vendorId: c.vendor_id })) });
  }
  const { rows } = await tx.query<{ reference: string; vendor_id: string; amount_paise: string; beneficiary_name: string; ifsc: string }>(
    `SELECT reference, vendor_id, amount_paise, beneficiary_name, ifsc FROM settlement_lines WHERE batch_id = $1 AND status = 'open' ORDER BY reference`,
    [batchId],
  );
  return rows.map((r) => ({ reference: r.reference, vendorId: r.vendor_id, amountPaise: Number(r.amount_paise), beneficiaryName: r.beneficiary_name, ifsc: r.ifsc }));
}

/** In the download's transaction (bankFileDownload.ts), which holds the batch FOR SHARE. */
export async function recordBankFileDownload(tx: Tx, batchId: string, actor: string, sha256: string, lines: number): Promise<void> {
  await audit(tx, batchId, null, actor, 'bank_file', `${lines} line(s), sha256 ${sha256}`);
}
