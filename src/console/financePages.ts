/** Finance pages: recon runs (list, start, live progress), exceptions (filter, resolve, CSV export)
 * and bank statement upload. Each calls the use case the finance API calls. */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { csvSafe } from '../domain/schemas';
import type { ReconProgress } from '../contracts/recon';
import { reconWindowSchema } from '../contracts/reconWindow';
import { formatRupees } from '../domain/money';
import { formatIst } from '../domain/istTime';
import { AppError } from '../appError';
import { auditActor } from '../auth/routeAuth';
import { importBankStatement } from '../recon/bankStatementImport';
import { exceptionFilterSchema, resolveException, type ReconExceptionView } from '../recon/exceptions';
import { CLASSES, REASONS } from '../recon/reasons';
import { differencePaise, exceptionReferences, exceptionsCsv, listAllExceptions, SEVERITIES } from '../reports/exceptionsCsv';
import { html, type Html } from './html';
import { csrfField, page } from './layout';
import { readFileIntoFieldScript } from './scripts';
import { consoleRoute, sendPage, sessionOf, type ConsoleDeps } from './access';

const workflowIdParams = z.object({ workflowId: z.string().regex(/^recon-\d{4}-\d{2}-\d{2}-\d{4}-\d{2}-\d{2}$/, 'not a recon workflow id') });
// The form sends every field, empty when unset: empty means "any".
const blankToUndefined = (v: unknown) => (v === '' ? undefined : v);
const pageFilterSchema = z.preprocess(
  (q) => Object.fromEntries(Object.entries((q ?? {}) as Record<string, unknown>).map(([k, v]) => [k, blankToUndefined(v)])),
  exceptionFilterSchema.omit({ limit: true, after: true }).extend({ severity: z.enum(SEVERITIES).optional() }),
);
type PageFilter = z.infer<typeof pageFilterSchema>;
const windowBody = z.preprocess((b) => Object.fromEntries(Object.entries((b ?? {}) as Record<string, unknown>).filter(([k, v]) => k !== '_csrf' && v !== '')), reconWindowSchema);
const resolveBody = z.object({ note: csvSafe(z.string().trim().min(3, 'a resolution note is required').max(2000)), back: z.string().optional() });
const bankBody = z.object({ csv: z.string(), fileName: z.string().trim().max(200).optional() });

/** A sum over the rows, a missing amount counting as none. */
const sumOf = <T>(rows: readonly T[], paise: (row: T) => number | null | undefined): number => rows.reduce((s, r) => s + Number(paise(r) ?? 0), 0);
const rupees = (paise: number | null | undefined): string => (paise === null || paise === undefined ? '—' : formatRupees(Number(paise)));

/** The same rows as GET /finance/recon/exceptions.csv for the same filter. */
const exceptionsFor = (deps: ConsoleDeps, filter: PageFilter): Promise<ReconExceptionView[]> => listAllExceptions(deps.db, filter);

const queryString = (filter: PageFilter): string => new URLSearchParams(Object.entries(filter).filter(([, v]) => v !== undefined).map(([k, v]): [string, string] => [k, String(v)])).toString();

interface RunRow {
  run_id: string; workflow_id: string; from: string; to: string; status: string; rows_fetched: number; summary: Partial<ReconProgress & { opened: number; cleared: number }> | null;
  started_at: Date; finished_at: Date | null; open_count: string; open_expected: string | null; open_actual: string | null;
}

/** Settlements matched to bank credits and run lines to bank debits: "3 credits, 1 debit". */
function bankMatched(s: RunRow['summary']): string {
  if (s?.matchedBankCredits === undefined) return '—';
  const n = (k: number, w: string) => `${k} ${w}${k === 1 ? '' : 's'}`;
  return `${n(s.matchedBankCredits, 'credit')}, ${n(s.matchedBankDebits ?? 0, 'debit')}`;
}

function progressFragment(workflowId: string, live: { status: string; progress: ReconProgress | null } | null): Html {
  const p = live?.progress;
  const running = live?.status === 'RUNNING';
  const total = Math.max(p?.daysTotal ?? 1, 1);
  // Pulling is most of a run; matching is the last step: the bar reaches its end only when the run has.
  const value = !running ? 100 : p ? Math.min(95, Math.round((p.daysPulled / total) * 90) + (p.phase === 'matching' ? 5 : 0)) : 0;
  const words = live ? (running ? `${p?.phase ?? 'starting'}` : live.status.toLowerCase()) : 'unknown to Temporal (finished long ago?)';
  const poll = running ? html` hx-get="/console/recon/runs/${workflowId}/progress" hx-trigger="every 500ms" hx-swap="outerHTML"` : '';
  return html`<section id="progress" aria-labelledby="progress-title" data-state="${running ? 'running' : 'done'}"${poll}>
<h2 id="progress-title">Run ${workflowId}: <span data-testid="run-state">${words}</span></h2>
<progress max="100" value="${value}" aria-label="Run progress">${value}%</progress> <span>${value}%</span>
<p role="status" aria-live="polite">days pulled ${p?.daysPulled ?? 0} of ${p?.daysTotal ?? '?'} · gateway rows pulled ${p?.rowsFetched ?? 0} · settlements ${p?.settlementsFetched ?? 0} · ${p?.matchedGatewayRows === undefined ? html`matched ${p?.matched ?? 0}` : html`rows matched ${p.matchedGatewayRows} · bank lines matched ${bankMatched(p)}`} · exceptions so far ${p?.exceptions ?? 0}</p>
</section>`;
}

export async function financePages(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  app.get('/console/recon', consoleRoute('finance', 'Console: recon runs, start a run, its progress'), async (request, reply) => {
    const session = sessionOf(request);
    const watch = z.object({ watch: workflowIdParams.shape.workflowId.optional() }).parse(request.query ?? {}).watch;
    const { rows } = await deps.db.query<RunRow>(
      `SELECT r.run_id, r.workflow_id, to_char(r.from_day, 'YYYY-MM-DD') AS from, to_char(r.to_day, 'YYYY-MM-DD') AS to, r.status, r.rows_fetched, r.summary,
              r.started_at, r.finished_at, x.open_count, x.open_expected, x.open_actual
       FROM recon_runs r
       LEFT JOIN LATERAL (SELECT count(*) AS open_count, sum(expected_paise) AS open_expected, sum(actual_paise) AS open_actual
                          FROM recon_exceptions e WHERE e.status = 'open' AND e.day BETWEEN r.from_day AND r.to_day) x ON true
       ORDER BY r.started_at DESC LIMIT 50`);
    const live = watch && deps.reconStarter ? await deps.reconStarter.progress(watch) : null;
    return sendPage(reply, page({
      title: 'Recon runs', session, current: '/console/recon',
      body: html`
<form method="post" action="/console/recon/runs" aria-label="Start a run"><fieldset><legend>Start a run for an IST window (at most 32 days)</legend>
${csrfField(session)}
<div class="field"><label for="from">From</label><input id="from" name="from" type="date" required></div>
<div class="field"><label for="to">To</label><input id="to" name="to" type="date" required></div>
<div class="field"><label for="asOf">Judge due dates as of (optional)</label><input id="asOf" name="asOf" type="date"></div>
<div class="field"><button type="submit">Start run</button></div></fieldset></form>
${watch ? progressFragment(watch, live) : ''}
<h2>Runs</h2>
<table><caption class="muted">Latest 50 runs. Gateway rows are Razorpay's settlement line items of the window; each one matched is a payment, refund, transfer or reversal of ours with the same amount. Bank lines matched: settlements found as bank credits (UTR and amount), and settlement-run payments found as bank debits. Open exceptions are those of the run's window today.</caption>
<thead><tr><th scope="col">Window</th><th scope="col">Status</th><th scope="col" class="num">Gateway rows pulled / matched</th><th scope="col" class="num">Bank lines matched</th><th scope="col" class="num">Exceptions found</th><th scope="col" class="num">Opened / cleared</th><th scope="col" class="num">Open now</th><th scope="col" class="num">Open: expected</th><th scope="col" class="num">Open: actual</th><th scope="col">Started</th><th scope="col">Progress</th></tr></thead>
<tbody>${rows.length === 0 ? html`<tr><td colspan="11">No runs yet.</td></tr>` : rows.map((r) => html`<tr>
<td class="nowrap">${r.from} → ${r.to}</td><td>${r.status}</td><td class="num">${r.rows_fetched} / ${r.summary?.matchedGatewayRows ?? '—'}</td><td class="num">${bankMatched(r.summary)}</td><td class="num">${r.summary?.exceptions ?? '—'}</td>
<td class="num">${r.summary ? `${r.summary.opened ?? 0} / ${r.summary.cleared ?? 0}` : '—'}</td><td class="num">${r.open_count}</td>
<td class="num">${rupees(r.open_expected === null ? null : Number(r.open_expected))}</td><td class="num">${rupees(r.open_actual === null ? null : Number(r.open_actual))}</td>
<td>${formatIst(r.started_at)}</td><td><a href="/console/recon?watch=${r.workflow_id}">watch</a></td></tr>`)}</tbody></table>`,
    }));
  });

  app.post('/console/recon/runs', consoleRoute('finance', 'Console: start (or join) a recon run'), async (request, reply) => {
    const window = windowBody.parse(request.body ?? {});
    if (!deps.reconStarter) throw new AppError(503, 'recon_unavailable', 'reconciliation runs are not wired in this process');
    const started = await deps.reconStarter.start(window);
    request.log.debug({ ...started, actor: auditActor(request) }, 'recon run requested from the console');
    return reply.redirect(`/console/recon?watch=${encodeURIComponent(started.workflowId)}`, 303);
  });

  app.get('/console/recon/runs/:workflowId/progress', consoleRoute('finance', "Console: a recon run's progress (an htmx fragment)"), async (request, reply) => {
    const { workflowId } = workflowIdParams.parse(request.params);
    const live = deps.reconStarter ? await deps.reconStarter.progress(workflowId) : null;
    return sendPage(reply, progressFragment(workflowId, live).text);
  });

  const exceptionRow = (session: ReturnType<typeof sessionOf>, e: ReconExceptionView, back: string): Html => {
    const refs = exceptionReferences(e);
    const ref = (label: string, value: string | number | null) => (value === null || value === undefined ? '' : html`<div><span class="muted">${label}</span> <span class="ref">${value}</span></div>`);
    return html`<tr data-exception-id="${e.id}">
<td>${e.id}</td><td>${e.day}</td><td>${e.status}</td><td>${e.class}<br><span class="muted">${e.severity}</span></td><td>${e.reason}</td>
<td>${ref('order', e.orderId)}${ref('payment', refs.paymentId)}${ref('refund', refs.refundId)}${ref('transfer', refs.transferId)}${ref('settlement', refs.settlementId)}${ref('UTR', refs.utr)}${ref('entity', refs.paymentId || refs.refundId || refs.transferId ? null : e.entityId)}${ref('bank line', e.bankLineId)}</td>
<td class="num">${rupees(e.expectedPaise)}</td><td class="num">${rupees(e.actualPaise)}</td><td class="num">${rupees(differencePaise(e))}</td>
<td>${e.nextAction}</td>
<td>${e.status === 'resolved' ? html`<span class="muted">by ${e.resolvedBy}: ${e.resolutionNote}</span>` : html`<form method="post" action="/console/exceptions/${e.id}/resolve" class="inline">${csrfField(session)}
<input type="hidden" name="back" value="${back}"><label for="note-${e.id}">Note</label><input id="note-${e.id}" name="note" required minlength="3" maxlength="2000" size="18"><button type="submit">Resolve</button></form>`}</td></tr>`;
  };

  app.get('/console/exceptions', consoleRoute('finance', 'Console: recon exceptions with filters'), async (request, reply) => {
    const session = sessionOf(request);
    const filter = pageFilterSchema.parse(request.query ?? {});
    const all = await exceptionsFor(deps, filter);
    const shown = all.slice(0, 500);
    const qs = queryString(filter);
    const back = `/console/exceptions${qs ? `?${qs}` : ''}`;
    const select = (name: string, label: string, options: readonly string[], value: string | undefined) => html`<div class="field"><label for="f-${name}">${label}</label><select id="f-${name}" name="${name}"><option value="">any</option>${options.map((o) => html`<option${o === value ? html` selected` : ''}>${o}</option>`)}</select></div>`;
    const resolved = z.object({ resolved: z.coerce.number().int().optional() }).safeParse(request.query ?? {});
    return sendPage(reply, page({
      title: 'Exceptions', session, current: '/console/exceptions',
      body: html`${resolved.success && resolved.data.resolved ? html`<p class="notice" role="status">Exception ${resolved.data.resolved} resolved (audited).</p>` : ''}
<form method="get" action="/console/exceptions" aria-label="Filter exceptions"><fieldset><legend>Filter</legend>
${select('status', 'Status', ['open', 'resolved', 'cleared'], filter.status)}${select('class', 'Class', CLASSES, filter.class)}
${select('reason', 'Reason', REASONS, filter.reason)}${select('severity', 'Severity', SEVERITIES, filter.severity)}
<div class="field"><label for="f-from">From day</label><input id="f-from" name="from" type="date" value="${filter.from ?? ''}"></div>
<div class="field"><label for="f-to">To day</label><input id="f-to" name="to" type="date" value="${filter.to ?? ''}"></div>
<div class="field"><button type="submit">Apply filter</button> <a class="button secondary" id="export-csv" href="/console/exceptions.csv${qs ? `?${qs}` : ''}">Export this filter as CSV</a></div></fieldset></form>
<p data-testid="exception-totals"><strong>${all.length.toLocaleString('en-IN')} exception${all.length === 1 ? '' : 's'}</strong>${all.length ? ` · expected ${formatRupees(sumOf(all, (e) => e.expectedPaise))}, actual ${formatRupees(sumOf(all, (e) => e.actualPaise))}, difference ${formatRupees(sumOf(all, differencePaise))}` : ''}${all.length > shown.length ? ` (first ${shown.length} shown; the CSV has all)` : ''}.</p>
<table><thead><tr><th scope="col">Id</th><th scope="col">Day</th><th scope="col">Status</th><th scope="col">Class</th><th scope="col">Reason</th><th scope="col">References</th><th scope="col" class="num">Expected</th><th scope="col" class="num">Actual</th><th scope="col" class="num">Difference</th><th scope="col">Next action</th><th scope="col">Resolve</th></tr></thead>
<tbody>${shown.length ? shown.map((e) => exceptionRow(session, e, back)) : html`<tr><td colspan="11">No exception matches this filter.</td></tr>`}</tbody></table>`,
    }));
  });

  app.get('/console/exceptions.csv', consoleRoute('finance', 'Console: the filtered exceptions as CSV (the same file as GET /finance/recon/exceptions.csv)'), async (request, reply) => {
    const rows = await exceptionsFor(deps, pageFilterSchema.parse(request.query ?? {}));
    return reply.type('text/csv; charset=utf-8').header('content-disposition', 'attachment; filename="recon-exceptions.csv"').send(exceptionsCsv(rows));
  });

  app.post('/console/exceptions/:id/resolve', consoleRoute('finance', 'Console: resolve an exception with a note (audited)'), async (request, reply) => {
    const { id } = z.object({ id: z.coerce.number().int().positive() }).parse(request.params);
    const { note, back } = resolveBody.parse(request.body ?? {});
    const result = await resolveException(deps.db, id, auditActor(request), note);
    if (result.type === 'not_found') throw new AppError(404, 'not_found', `no recon exception ${id}`);
    if (result.type === 'already_resolved') throw new AppError(409, 'already_resolved', `recon exception ${id} is already resolved`);
    const target = back?.startsWith('/console/exceptions') ? back : '/console/exceptions';
    return reply.redirect(`${target}${target.includes('?') ? '&' : '?'}resolved=${id}`, 303);
  });

  const bankPage = (session: ReturnType<typeof sessionOf>, outcome: Html | '', csv = '') => page({
    title: 'Bank statements', session, current: '/console/bank-statements',
    body: html`${outcome}
<form method="post" action="/console/bank-statements" aria-label="Upload a bank statement"><fieldset><legend>Upload a statement CSV (utr, amount, value_date, narration)</legend>
${csrfField(session)}<input type="hidden" id="fileName" name="fileName">
<div class="field"><label for="file">Choose a file (read into the box below)</label><input id="file" type="file" accept=".csv,text/csv" data-read-into="csv" data-name-into="fileName"></div><br>
<div class="field"><label for="csv">Or paste the CSV</label><textarea id="csv" name="csv" rows="10" cols="110" required spellcheck="false">${csv}</textarea></div><br>
<button type="submit">Import statement</button></fieldset></form>
${readFileIntoFieldScript}`,
  });

  app.get('/console/bank-statements', consoleRoute('finance', 'Console: upload a bank statement'), async (request, reply) => sendPage(reply, bankPage(sessionOf(request), '')));

  app.post('/console/bank-statements', { ...consoleRoute('finance', 'Console: import a bank statement CSV; bad lines listed by line number'), bodyLimit: deps.config.API_FILE_BODY_LIMIT_BYTES }, async (request, reply) => {
    const session = sessionOf(request);
    const body = bankBody.parse(request.body ?? {});
    // Browsers post a textarea's line ends as CRLF: back to LF, so a file pasted or read here hashes
    // (and is found a duplicate) as the same LF file posted to the API.
    const text = body.csv.replace(/\r\n/g, '\n');
    const result = await importBankStatement(deps.db, { text, fileName: body.fileName || undefined, actor: auditActor(request) });
    if (!result.ok) {
      const lines = text.split('\n');
      return sendPage(reply.status(400), bankPage(session, html`<div class="error" role="alert" id="bank-errors"><p>The statement has bad lines; nothing was imported.</p>
<table><thead><tr><th scope="col" class="num">Line</th><th scope="col">Problem</th><th scope="col">The line</th></tr></thead>
<tbody>${result.problems.map((p) => html`<tr data-line="${p.line}"><td class="num">${p.line}</td><td>${p.message}</td><td><code>${lines[p.line - 1] ?? ''}</code></td></tr>`)}</tbody></table></div>`, body.csv));
    }
    const words = result.duplicateFile
      ? `This file was imported before (import #${result.importId}): it added nothing.`
      : result.linesAdded === 0 ? `Imported as #${result.importId}: its ${result.lineCount} lines were all known already, so it added nothing.`
        : `Imported as #${result.importId}: ${result.linesAdded} of ${result.lineCount} lines added.`;
    return sendPage(reply.status(result.duplicateFile ? 200 : 201), bankPage(session, html`<p class="notice" role="status" id="bank-result">${words}</p>`));
  });
}
