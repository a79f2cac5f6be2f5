/** Finance pages for settlement runs (issue 20): what is owed offline now and who a run would pay or
 * carry forward; starting a run for a period (optionally some vendors) and watching it freeze its
 * batch; the batches. A batch's page: its lines (account numbers masked), totals, the vendors carried
 * forward and why, the run's phase, the bank file download, and per open line a form to record it
 * paid (the bank's UTR) or failed; the bank's response file; cancelling a batch with nothing paid
 * (once its bank file was downloaded, only confirmed never submitted to the bank).
 * Every action calls what the finance API calls (src/settlement/financeActions.ts and the repository);
 * a refused one is shown on the batch page in the API's words, naming the line and field, and
 * changes nothing. */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { AppError } from '../appError';
import { auditActor } from '../auth/routeAuth';
import { keyringFromConfig } from '../banking/keyring';
import type { SettlementProgress } from '../contracts/settlement';
import { addDays, istDateOf } from '../domain/calendar';
import { formatRupees } from '../domain/money';
import { formatIst } from '../domain/istTime';
import { rupeesToPaise } from '../recon/bankStatementCsv';
import { bankFileForBatch } from '../settlement/bankFileDownload';
import {
  cancelBody, failedBody, importResponseFile, paidBody, settlementBatchIdSchema, settlementBatchStatusSchema, settlementReferenceSchema, settlementRunBody, settlementStarterOf, settlementWorkflowIdSchema, tellRun,
} from '../settlement/financeActions';
import type { SkipReason } from '../settlement/netting';
import { owedOfflineByVendor, type OwedVendor } from '../settlement/owedByVendor';
import { cancelBatch, listBatches, readBatch, recordLineFailed, recordLinePaid, type BatchListEntry, type SettlementBatchView, type SettlementLineView } from '../settlement/repository';
import { html, type Html } from './html';
import { csrfField, page } from './layout';
import { readFileIntoFieldScript } from './scripts';
import { consoleRoute, sendPage, sessionOf, type ConsoleDeps } from './access';
import type { ConsoleSession } from './session';

const blank = (v: unknown) => (v === '' ? undefined : v);
const listFilter = z.object({ status: z.preprocess(blank, settlementBatchStatusSchema.optional()), watch: z.preprocess(blank, settlementWorkflowIdSchema.optional()) });
const batchParams = z.object({ batchId: settlementBatchIdSchema });
const lineParams = batchParams.extend({ reference: settlementReferenceSchema });
const progressParams = z.object({ workflowId: settlementWorkflowIdSchema });
const progressQuery = z.object({ batch: z.preprocess(blank, settlementBatchIdSchema.optional()), refresh: z.literal('1').optional() });

/** The form's fields as the API's body: ticked vendors (one or many `vendorIds`), none ticked = every vendor. */
const runForm = z.object({ from: z.string(), to: z.string(), vendorIds: z.union([z.string(), z.array(z.string())]).optional() })
  .transform(({ from, to, vendorIds }) => {
    const ids = [vendorIds ?? []].flat().filter((v) => v !== '');
    return ids.length ? { from, to, vendorIds: [...new Set(ids)].sort() } : { from, to };
  }).pipe(settlementRunBody);
/** An optional amount in rupees (`1234.50`), as the bank's files write it. */
const rupeesField = z.string().trim().optional().transform((text, ctx) => {
  if (!text) return undefined;
  const paise = rupeesToPaise(text);
  if (paise === null) ctx.addIssue({ code: 'custom', message: `"${text}" is not an amount like 1234.50` });
  return paise ?? undefined;
});
const paidForm = z.object({ utr: z.string(), paidOn: z.string(), amount: rupeesField })
  .transform(({ utr, paidOn, amount }) => (amount === undefined ? { utr, paidOn } : { utr, paidOn, amountPaise: amount })).pipe(paidBody);
const reasonForm = z.object({ reason: z.string() });
/** The cancel form: the confirmation box, ticked, is the API's `confirmNotSubmitted: true`. */
const cancelFields = z.object({ reason: z.string(), confirmNotSubmitted: z.literal('yes').optional() })
  .transform(({ reason, confirmNotSubmitted }): z.input<typeof cancelBody> => ({ reason, confirmNotSubmitted: confirmNotSubmitted === 'yes' })).pipe(cancelBody);
const responseForm = z.object({ csv: z.string(), fileName: z.preprocess(blank, z.string().trim().max(200).optional()) });
const doneQuery = z.object({
  done: z.enum(['paid', 'already-paid', 'failed', 'already-failed', 'cancelled', 'imported']).optional(),
  line: settlementReferenceSchema.optional(),
  rows: z.coerce.number().int().nonnegative().optional(),
}).catch({});

const PHASES: Record<SettlementProgress['phase'], string> = { freezing: 'freezing the open lines', awaiting_bank: 'awaiting the bank', closed: 'closed', cancelled: 'cancelled' };

function carriedWhy(reason: SkipReason, netPaise: number): string {
  if (reason === 'no_bank_details') return `owed ${formatRupees(netPaise)}, but it has no bank details: carried forward until an admin adds them`;
  return netPaise < 0 ? `owes ${formatRupees(-netPaise)} back: carried forward, netted against its next orders (never a negative payment)` : 'nets to ₹0.00: carried forward';
}

type Live = Awaited<ReturnType<ReturnType<typeof settlementStarterOf>['progress']>>;

async function liveRun(deps: ConsoleDeps, workflowId: string): Promise<Live> {
  return deps.temporal ? settlementStarterOf(deps).progress(workflowId) : null;
}

/** The run's phase from Temporal. A batch's page polls while its run runs (decisions wake it); the
 * runs page polls while the run freezes, then reloads whole (its lists have changed). On a batch's
 * page only the run that froze it counts: a closed batch's workflow id may since run a newer batch. */
function runState(live: Live, forBatch?: SettlementBatchView) {
  const p = live?.progress ?? null;
  const ours = !forBatch || !p?.batchId || p.batchId === forBatch.id;
  const running = live?.status === 'RUNNING' && ours;
  const polls = running && (forBatch !== undefined || !p || p.phase === 'freezing');
  const words = !live ? 'unknown to Temporal (finished long ago?)' : !ours ? `ended (the workflow id now runs batch ${p!.batchId})` : running ? PHASES[p?.phase ?? 'freezing'] : `${live.status.toLowerCase()}${p ? `: ${PHASES[p.phase]}` : ''}`;
  return { running, polls, words, shown: ours ? p : null };
}

function progressFragment(workflowId: string, live: Live, forBatch?: SettlementBatchView): Html {
  const { running, polls, words, shown } = runState(live, forBatch);
  const url = `/console/settlement/runs/${workflowId}/progress?${forBatch ? `batch=${forBatch.id}` : 'refresh=1'}`;
  const poll = polls ? html` hx-get="${url}" hx-trigger="every ${forBatch ? '2s' : '1s'}" hx-swap="outerHTML"` : '';
  return html`<section id="run-progress" aria-labelledby="run-progress-title" data-state="${running ? 'running' : 'done'}" data-phase="${shown?.phase ?? ''}"${poll}>
<h2 id="run-progress-title">Run <code>${workflowId}</code>: <span data-testid="run-phase">${words}</span></h2>
${shown && forBatch ? html`<p class="muted">The batch's counts are the totals below, read from the database with this page (the run's own tally can be a moment behind a decision).</p>` : ''}
${shown && !forBatch ? html`<p role="status" aria-live="polite">${shown.batchId ? html`batch <a href="/console/settlement/batches/${shown.batchId}" data-batch-id="${shown.batchId}">${shown.batchId}</a> · ` : ''}lines ${shown.lines} · open ${shown.open} · paid ${shown.paid} · failed ${shown.failed}${shown.cancelled ? ` · cancelled ${shown.cancelled}` : ''} · ${formatRupees(shown.amountPaise)}, paid ${formatRupees(shown.paidPaise)} · carried forward ${shown.skippedVendors} vendor${shown.skippedVendors === 1 ? '' : 's'}</p>` : ''}
</section>`;
}

function owedTable(owed: readonly OwedVendor[]): Html {
  return html`<table data-testid="owed"><caption class="muted">Owed offline now and in no open batch (every day so far). Tick vendors to settle only them; none ticked settles every vendor.</caption>
<thead><tr><th scope="col">Settle</th><th scope="col">Vendor</th><th scope="col" class="num">Open lines</th><th scope="col" class="num">Net</th><th scope="col">Bank details</th><th scope="col">A run now would</th><th scope="col">Oldest line</th></tr></thead>
<tbody>${owed.length === 0 ? html`<tr><td colspan="7">Nothing is owed offline outside a batch.</td></tr>` : owed.map((v) => html`<tr data-vendor-id="${v.vendorId}">
<td><input type="checkbox" name="vendorIds" value="${v.vendorId}" id="vendor-${v.vendorId}"></td><td><label for="vendor-${v.vendorId}">${v.name}</label><code class="nowrap">${v.vendorId}</code></td>
<td class="num">${v.lines}</td><td class="num">${formatRupees(v.netPaise)}</td><td>${v.hasBankDetails ? 'yes' : 'none'}</td>
<td>${v.outcome === 'paid' ? `pay ${formatRupees(v.netPaise)}` : carriedWhy(v.outcome, v.netPaise)}</td><td>${formatIst(v.oldestAt)}</td></tr>`)}</tbody></table>`;
}

function batchTable(batches: readonly BatchListEntry[]): Html {
  return html`<table data-testid="batches"><caption class="muted">Latest 50 batches, newest first.</caption>
<thead><tr><th scope="col">Batch</th><th scope="col">Period</th><th scope="col">Status</th><th scope="col" class="num">Lines</th><th scope="col" class="num">Open lines</th><th scope="col" class="num">Amount</th><th scope="col" class="num">Paid</th><th scope="col">Started by</th><th scope="col">Frozen at</th></tr></thead>
<tbody>${batches.length === 0 ? html`<tr><td colspan="9">No batches yet.</td></tr>` : batches.map((b) => html`<tr data-batch-id="${b.id}">
<td><a href="/console/settlement/batches/${b.id}">${b.id}</a></td><td>${b.from} → ${b.to}</td><td>${b.status}</td><td class="num">${b.lines}</td><td class="num">${b.openLines}</td>
<td class="num">${formatRupees(b.amountPaise)}</td><td class="num">${formatRupees(b.paidPaise)}</td><td>${b.createdBy}</td><td>${formatIst(b.createdAt)}</td></tr>`)}</tbody></table>`;
}

/** A refused decision, in the API's words: the line and field it names, and that nothing changed. */
interface Refusal { status: number; code: string; message: string; line: string | null; field: string | null; problems: Array<{ line: number; message: string }> }

function refusalOf(err: unknown, reference: string | null): Refusal | null {
  if (err instanceof z.ZodError) {
    return { status: 400, code: 'invalid_request', message: err.issues.map((i) => `${i.path.join('.') || 'input'}: ${i.message}`).join('; '), line: reference, field: err.issues.map((i) => i.path.join('.')).join(', ') || null, problems: [] };
  }
  if (!(err instanceof AppError) || err.httpStatus >= 500) return null;
  const details = (err.details ?? {}) as { line?: unknown; field?: unknown; fileLine?: unknown; problems?: unknown };
  const line = typeof details.line === 'string' ? details.line : reference;
  const field = typeof details.field === 'string' ? details.field : null;
  const problems = Array.isArray(details.problems) ? (details.problems as Refusal['problems']) : [];
  return { status: err.httpStatus, code: err.code, message: err.message, line, field, problems };
}

function refusalBox(r: Refusal, csv: string): Html {
  const lines = csv.split(/\r?\n/);
  return html`<div class="error" role="alert" id="refused" data-code="${r.code}"><p><strong>Refused, nothing was changed:</strong> ${r.message}</p>
${r.line || r.field ? html`<p>${r.line ? html`line <code data-testid="refused-line">${r.line}</code>` : ''}${r.line && r.field ? ' · ' : ''}${r.field ? html`field <code data-testid="refused-field">${r.field}</code>` : ''} <span class="muted">(${r.code})</span></p>` : ''}
${r.problems.length ? html`<table><thead><tr><th scope="col" class="num">File line</th><th scope="col">Problem</th><th scope="col">The line</th></tr></thead>
<tbody>${r.problems.map((p) => html`<tr data-line="${p.line}"><td class="num">${p.line}</td><td>${p.message}</td><td><code>${lines[p.line - 1] ?? ''}</code></td></tr>`)}</tbody></table>` : ''}</div>`;
}

function doneNotice(query: unknown): Html | '' {
  const q = doneQuery.parse(query ?? {});
  if (!q.done) return '';
  const words = {
    'paid': `Line ${q.line} recorded paid (audited).`,
    'already-paid': `Line ${q.line} was already recorded paid with that UTR: nothing changed.`,
    'failed': `Line ${q.line} recorded failed (audited): its orders are owed offline again, and the next run pays them.`,
    'already-failed': `Line ${q.line} was already recorded failed: nothing changed.`,
    'cancelled': 'Batch cancelled (audited): its lines are back in the open offline ledger.',
    'imported': `The bank's response was imported (audited): ${q.rows ?? 0} row${q.rows === 1 ? '' : 's'} recorded.`,
  }[q.done];
  return html`<p class="notice" role="status" id="done">${words}</p>`;
}

interface Typed { reference: string; utr: string; paidOn: string; amount: string }

function lineRows(session: ConsoleSession, batch: SettlementBatchView, line: SettlementLineView, today: string, typed: Typed | null): Html {
  const mine = typed?.reference === line.reference ? typed : null;
  const id = line.reference;
  const decided = line.status === 'paid' ? `by ${line.decidedBy ?? '—'}` : line.status === 'failed' ? `${line.failureReason ?? ''} (by ${line.decidedBy ?? '—'})` : line.status === 'cancelled' ? 'batch cancelled' : '';
  const row = html`<tr data-reference="${id}" data-status="${line.status}">
<td class="nowrap"><code>${id}</code></td><td>${line.vendorName}<br><code class="muted nowrap">${line.vendorId}</code></td><td>${line.beneficiaryName}</td><td class="nowrap"><code>${line.accountMasked}</code></td><td class="nowrap"><code>${line.ifsc}</code></td>
<td class="num">${formatRupees(line.amountPaise)}</td><td class="num">${line.members}</td><td data-testid="line-status">${line.status}</td><td class="nowrap"><code>${line.utr ?? '—'}</code></td><td class="nowrap">${line.paidOn ?? '—'}</td><td class="muted">${decided}</td></tr>`;
  if (line.status !== 'open' || batch.status !== 'open') return row;
  return html`${row}<tr class="decide" data-decide="${id}"><td colspan="11">
<form method="post" action="/console/settlement/batches/${batch.id}/lines/${id}/paid" class="inline" aria-label="Record ${id} paid">${csrfField(session)}
<strong>Paid:</strong><label for="utr-${id}">UTR</label><input id="utr-${id}" name="utr" required minlength="6" maxlength="40" size="22" value="${mine?.utr ?? ''}" autocomplete="off">
<label for="paidOn-${id}">Value date</label><input id="paidOn-${id}" name="paidOn" type="date" required value="${mine?.paidOn || today}">
<label for="amount-${id}">Amount ₹ (optional, checked)</label><input id="amount-${id}" name="amount" inputmode="decimal" size="12" placeholder="${(line.amountPaise / 100).toFixed(2)}" value="${mine?.amount ?? ''}">
<button type="submit">Record paid</button></form>
<form method="post" action="/console/settlement/batches/${batch.id}/lines/${id}/failed" class="inline" aria-label="Record ${id} failed" style="margin-top:6px">${csrfField(session)}
<strong>Not paid:</strong><label for="reason-${id}">Reason</label><input id="reason-${id}" name="reason" required minlength="3" maxlength="500" size="40">
<button type="submit" class="secondary">Record failed</button></form></td></tr>`;
}

function batchBody(deps: ConsoleDeps, session: ConsoleSession, batch: SettlementBatchView, live: Live, extra: { top: Html | ''; typed: Typed | null; csv: string }): Html {
  const t = batch.totals;
  const today = istDateOf(new Date());
  const webUi = `${deps.config.TEMPORAL_UI_URL.replace(/\/$/, '')}/namespaces/${encodeURIComponent(deps.config.TEMPORAL_NAMESPACE)}/workflows/${encodeURIComponent(batch.workflowId)}`;
  const open = batch.status === 'open';
  return html`${extra.top}
<p><a href="/console/settlement">← All settlement runs</a></p>
<p data-testid="batch-summary">Period <strong>${batch.from} → ${batch.to}</strong> · ${batch.vendorIds ? `vendors ${batch.vendorIds.join(', ')}` : 'all vendors'} · status <strong data-testid="batch-status">${batch.status}</strong> · frozen ${formatIst(batch.createdAt)} by ${batch.createdBy}${batch.closedAt ? ` · closed ${formatIst(batch.closedAt)}` : ''}
${batch.bankFile ? html`<br><span data-testid="bank-file-downloads">Bank file downloaded ${batch.bankFile.downloads} time(s), last ${formatIst(batch.bankFile.lastDownloadedAt)} by ${batch.bankFile.lastDownloadedBy}</span>` : ''}
${batch.cancelledAt ? html`<br>Cancelled ${formatIst(batch.cancelledAt)} by ${batch.cancelledBy}: ${batch.cancelReason}` : ''} · <a href="${webUi}" target="_blank" rel="noopener">the run in the Temporal Web UI</a></p>
${progressFragment(batch.workflowId, live, batch)}
<table data-testid="totals" style="width:auto;min-width:640px"><thead><tr><th scope="col" class="num">Lines</th><th scope="col" class="num">Open</th><th scope="col" class="num">Paid</th><th scope="col" class="num">Failed</th><th scope="col" class="num">Cancelled</th><th scope="col" class="num">Amount</th><th scope="col" class="num">Paid</th><th scope="col" class="num">Still open</th></tr></thead>
<tbody><tr><td class="num">${t.lines}</td><td class="num">${t.open}</td><td class="num">${t.paid}</td><td class="num">${t.failed}</td><td class="num">${t.cancelled}</td><td class="num">${formatRupees(t.amountPaise)}</td><td class="num">${formatRupees(t.paidPaise)}</td><td class="num">${formatRupees(t.openPaise)}</td></tr></tbody></table>
${open && t.open > 0 ? html`<p><a class="button" id="bank-file" href="/console/settlement/batches/${batch.id}/bank-file" download="${batch.id}-bank-file.csv">Download the bank file (${t.open} open line${t.open === 1 ? '' : 's'}, ${formatRupees(t.openPaise)})</a>
<span class="muted">The only place account numbers are shown in full; each download is audited.</span></p>` : ''}
<h2>Lines</h2>
<table data-testid="lines"><thead><tr><th scope="col">Reference</th><th scope="col">Vendor</th><th scope="col">Beneficiary</th><th scope="col">Account</th><th scope="col">IFSC</th><th scope="col" class="num">Amount</th><th scope="col" class="num">Orders</th><th scope="col">Status</th><th scope="col">UTR</th><th scope="col">Paid on</th><th scope="col">Decided</th></tr></thead>
<tbody>${batch.lines.length === 0 ? html`<tr><td colspan="11">No vendor was owed a positive amount with bank details: nothing to pay.</td></tr>` : batch.lines.map((l) => lineRows(session, batch, l, today, extra.typed))}</tbody></table>
<h2>Carried forward</h2>
<table data-testid="carried"><thead><tr><th scope="col">Vendor</th><th scope="col" class="num">Lines</th><th scope="col" class="num">Net</th><th scope="col">Why</th></tr></thead>
<tbody>${batch.skipped.length === 0 ? html`<tr><td colspan="4">No vendor was carried forward.</td></tr>` : batch.skipped.map((s) => html`<tr data-vendor-id="${s.vendorId}" data-reason="${s.reason}"><td><code>${s.vendorId}</code></td><td class="num">${s.lines}</td><td class="num">${formatRupees(s.netPaise)}</td><td>${carriedWhy(s.reason, s.netPaise)}</td></tr>`)}</tbody></table>
${open ? html`<form method="post" action="/console/settlement/batches/${batch.id}/bank-response" aria-label="Import the bank's response"><fieldset><legend>Import the bank's response file: <code>reference,status,utr,value_date,amount[,reason]</code> — every row or none</legend>
${csrfField(session)}<input type="hidden" id="response-name" name="fileName">
<div class="field"><label for="response-file">Choose the file (read into the box below)</label><input id="response-file" type="file" accept=".csv,text/csv" data-read-into="response-csv" data-name-into="response-name"></div><br>
<div class="field"><label for="response-csv">Or paste it</label><textarea id="response-csv" name="csv" rows="6" cols="110" required spellcheck="false">${extra.csv}</textarea></div><br>
<button type="submit">Import the response</button></fieldset></form>${readFileIntoFieldScript}` : ''}
${open && t.paid === 0 ? cancelForm(session, batch) : ''}`;
}

/** Once the bank file was downloaded the bank may be paying the lines: the cancel asks finance to
 * confirm the file never reached the bank, and says what to record otherwise. */
function cancelForm(session: ConsoleSession, batch: SettlementBatchView): Html {
  const d = batch.bankFile;
  return html`<form method="post" action="/console/settlement/batches/${batch.id}/cancel" aria-label="Cancel the batch"><fieldset><legend>Cancel the batch (nothing is paid yet): its lines return to the open offline ledger</legend>
${d ? html`<p class="error" data-testid="bank-file-downloaded">The bank file was downloaded: the bank may be paying these lines, and a cancelled batch's lines are paid again by the next run.
Record each line paid with its UTR or failed with the bank's reason instead. Cancel only if the file was never submitted to the bank.</p>` : ''}
${csrfField(session)}<div class="field"><label for="cancel-reason">Reason</label><input id="cancel-reason" name="reason" required minlength="3" maxlength="500" size="60"></div>
${d ? html`<div class="field"><input type="checkbox" id="confirm-not-submitted" name="confirmNotSubmitted" value="yes" required> <label for="confirm-not-submitted">I confirm this bank file was not submitted to the bank (audited)</label></div>` : ''}
<div class="field"><button type="submit" class="danger">Cancel batch</button></div></fieldset></form>`;
}

export async function settlementPages(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  const keyring = keyringFromConfig(deps.config);

  async function batchPage(request: FastifyRequest, reply: FastifyReply, batchId: string, extra: { top: Html | ''; typed?: Typed | null; csv?: string }, status = 200): Promise<FastifyReply> {
    const batch = await readBatch(deps.db, batchId);
    if (!batch) throw new AppError(404, 'not_found', `no settlement batch ${batchId}`);
    const live = await liveRun(deps, batch.workflowId);
    return sendPage(reply.status(status), page({
      title: `Settlement batch ${batch.id}`, session: sessionOf(request), current: '/console/settlement',
      body: batchBody(deps, sessionOf(request), batch, live, { top: extra.top, typed: extra.typed ?? null, csv: extra.csv ?? '' }),
    }));
  }

  /** Runs a decision; a refusal re-renders the batch page with the API's words (nothing changed). */
  async function decide(request: FastifyRequest, reply: FastifyReply, batchId: string, reference: string | null, action: () => Promise<string>, typed: { typed?: Typed; csv?: string } = {}): Promise<FastifyReply> {
    let target: string;
    try {
      target = await action();
    } catch (err) {
      const refusal = refusalOf(err, reference);
      if (!refusal) throw err;
      return batchPage(request, reply, batchId, { top: refusalBox(refusal, typed.csv ?? ''), ...typed }, refusal.status);
    }
    return reply.redirect(target, 303);
  }
  const back = (batchId: string, query: Record<string, string>) => `/console/settlement/batches/${batchId}?${new URLSearchParams(query).toString()}`;

  app.get('/console/settlement', consoleRoute('finance', 'Console: settlement runs (what is owed offline, start a run, its progress, the batches)'), async (request, reply) => {
    const session = sessionOf(request);
    const filter = listFilter.parse(request.query ?? {});
    const today = istDateOf(new Date());
    const [owed, batches, live] = await Promise.all([
      owedOfflineByVendor(deps.db), listBatches(deps.db, { status: filter.status, limit: 50 }), filter.watch ? liveRun(deps, filter.watch) : Promise.resolve(null),
    ]);
    return sendPage(reply, page({
      title: 'Settlement runs', session, current: '/console/settlement',
      body: html`<form method="post" action="/console/settlement/runs" aria-label="Start a settlement run"><fieldset><legend>Start a run: freeze the open offline lines of IST days (both included, and older ones still open) into a batch, one line per vendor</legend>
${csrfField(session)}
<div class="field"><label for="run-from">From</label><input id="run-from" name="from" type="date" required value="${addDays(today, -6)}"></div>
<div class="field"><label for="run-to">To</label><input id="run-to" name="to" type="date" required value="${today}"></div>
<div class="field"><button type="submit">Start run</button></div>
${owedTable(owed)}</fieldset></form>
${filter.watch ? progressFragment(filter.watch, live) : ''}
<h2>Batches</h2>
<form method="get" action="/console/settlement" aria-label="Filter batches" class="inline"><label for="b-status">Status</label><select id="b-status" name="status"><option value="">any</option>${settlementBatchStatusSchema.options.map((s) => html`<option${s === filter.status ? html` selected` : ''}>${s}</option>`)}</select><button type="submit" class="secondary">Show</button></form>
${batchTable(batches)}`,
    }));
  });

  app.post('/console/settlement/runs', consoleRoute('finance', 'Console: start (or join) a settlement run'), async (request, reply) => {
    const body = runForm.parse(request.body ?? {});
    const started = await settlementStarterOf(deps).start({ from: body.from, to: body.to, vendorIds: body.vendorIds ?? null, actor: auditActor(request) });
    return reply.redirect(`/console/settlement?watch=${encodeURIComponent(started.workflowId)}`, 303);
  });

  app.get('/console/settlement/runs/:workflowId/progress', consoleRoute('finance', "Console: a settlement run's phase (an htmx fragment)"), async (request, reply) => {
    const { workflowId } = progressParams.parse(request.params);
    const { batch: batchId, refresh } = progressQuery.parse(request.query ?? {});
    const batch = (batchId ? await readBatch(deps.db, batchId) : null) ?? undefined;
    const live = await liveRun(deps, workflowId);
    if (refresh && !runState(live, batch).polls) reply.header('hx-refresh', 'true');
    return sendPage(reply, progressFragment(workflowId, live, batch).text);
  });

  app.get('/console/settlement/batches/:batchId', consoleRoute('finance', 'Console: a settlement batch (lines, totals, carried forward, decisions)'), async (request, reply) => {
    const { batchId } = batchParams.parse(request.params);
    return batchPage(request, reply, batchId, { top: doneNotice(request.query) });
  });

  app.get('/console/settlement/batches/:batchId/bank-file', consoleRoute('finance', "Console: the batch's bank bulk-payment file (the same file as the API's; audited)"), async (request, reply) => {
    const { batchId } = batchParams.parse(request.params);
    const file = await bankFileForBatch(deps.db, keyring, batchId, auditActor(request));
    return reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${file.fileName}"`).header('cache-control', 'no-store').header('x-content-sha256', file.sha256).send(file.csv);
  });

  app.post('/console/settlement/batches/:batchId/lines/:reference/paid', consoleRoute('finance', "Console: record a line paid with the bank's UTR (audited)"), async (request, reply) => {
    const { batchId, reference } = lineParams.parse(request.params);
    const raw = (request.body ?? {}) as Record<string, unknown>;
    const typed = { reference, utr: String(raw.utr ?? ''), paidOn: String(raw.paidOn ?? ''), amount: String(raw.amount ?? '') };
    return decide(request, reply, batchId, reference, async () => {
      const result = await recordLinePaid(deps.db, { reference, ...paidForm.parse(raw), actor: auditActor(request) });
      await tellRun(deps, [result.batchId]);
      return back(result.batchId, { done: result.alreadyRecorded ? 'already-paid' : 'paid', line: result.reference });
    }, { typed });
  });

  app.post('/console/settlement/batches/:batchId/lines/:reference/failed', consoleRoute('finance', 'Console: record that the bank did not pay a line (audited)'), async (request, reply) => {
    const { batchId, reference } = lineParams.parse(request.params);
    return decide(request, reply, batchId, reference, async () => {
      const result = await recordLineFailed(deps.db, { reference, ...failedBody.parse(reasonForm.parse(request.body ?? {})), actor: auditActor(request) });
      await tellRun(deps, [result.batchId]);
      return back(result.batchId, { done: result.alreadyRecorded ? 'already-failed' : 'failed', line: result.reference });
    });
  });

  app.post('/console/settlement/batches/:batchId/cancel', consoleRoute('finance', 'Console: cancel a batch with nothing paid (audited; after the bank file was downloaded, only confirmed not submitted to the bank)'), async (request, reply) => {
    const { batchId } = batchParams.parse(request.params);
    return decide(request, reply, batchId, null, async () => {
      await cancelBatch(deps.db, { batchId, ...cancelFields.parse(request.body ?? {}), actor: auditActor(request) });
      await tellRun(deps, [batchId]);
      return back(batchId, { done: 'cancelled' });
    });
  });

  app.post('/console/settlement/batches/:batchId/bank-response', { ...consoleRoute('finance', "Console: import the bank's response file (every row or none; audited)"), bodyLimit: deps.config.API_FILE_BODY_LIMIT_BYTES }, async (request, reply) => {
    const { batchId } = batchParams.parse(request.params);
    const form = responseForm.parse(request.body ?? {});
    return decide(request, reply, batchId, null, async () => {
      const results = await importResponseFile(deps, { csv: form.csv, fileName: form.fileName }, auditActor(request));
      await tellRun(deps, results.map((r) => r.batchId));
      return back(batchId, { done: 'imported', rows: String(results.length) });
    }, { csv: form.csv });
  });
}
