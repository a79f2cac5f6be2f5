/** Finance commands for reconciliation (role `finance`): start a run and follow it to its end,
 * list the exceptions as a table, CSV or JSON, resolve one with a note. */
import { Presets, SingleBar } from 'cli-progress';
import type { Command } from 'commander' with { 'resolution-mode': 'import' };
import { z } from 'zod';
import type { ReconProgress } from '../../contracts/recon';
import { formatRupees } from '../../domain/money';
import { CLASSES, REASONS } from '../../recon/reasons';
import { differencePaise, exceptionReferences, exceptionsCsv, SEVERITIES } from '../../reports/exceptionsCsv';
import { allPages, reconProgressSchema, type ApiClient, type ReconException, type ReconRun } from './apiClient';
import { connect, Failure, isoDayFlag, UsageError } from './context';
import { formatInstant, renderTable, shellQuote, writeJson, writeLines, type Style } from './output';

const POLL_MS = 500;
const PAGE = 1_000;

interface ExceptionFlags { status?: string; class?: string; reason?: string; severity?: string; from?: string; to?: string }

export function registerReconCommands(program: Command): void {
  const recon = program.command('recon').description('reconciliation: runs, exceptions, resolutions (finance)');

  recon.command('run')
    .description('start (or join) the recon run of an IST window; --wait follows it to its end and prints its summary')
    .requiredOption('--from <day>', 'first IST day (YYYY-MM-DD)')
    .requiredOption('--to <day>', 'last IST day, inclusive (at most 32 days)')
    .option('--as-of <day>', 'judge due dates against this IST day (default: the worker\'s today)')
    .option('--wait', 'follow the run with progress until it ends; exit 1 if it failed')
    .action(async (opts: { from: string; to: string; asOf?: string; wait?: boolean }, cmd: Command) => {
      const window = { from: isoDayFlag('--from', opts.from)!, to: isoDayFlag('--to', opts.to)!, asOf: isoDayFlag('--as-of', opts.asOf) };
      if (window.from > window.to) throw new UsageError(`--from ${window.from} is after --to ${window.to}`);
      const ctx = connect(cmd, 'finance');
      const started = await ctx.api.startRecon(window);
      if (!opts.wait) {
        if (ctx.json) return writeJson(started);
        return writeLines([`recon ${started.workflowId} started (run ${started.runId})`, `follow it: payouts recon run --from ${window.from} --to ${window.to}${window.asOf ? ` --as-of ${window.asOf}` : ''} --wait`]);
      }
      const view = progressView(started.workflowId);
      let end: RunEnd;
      try {
        end = await waitForRun(ctx.api, started, view);
      } finally {
        view.stop();
      }
      const open = await listExceptions(ctx.api, { status: 'open', from: window.from, to: window.to });
      if (ctx.json) writeJson({ ...started, status: end.status, run: end.run ?? null, openExceptions: open });
      if (end.status !== 'completed') {
        const error = z.object({ error: z.string() }).safeParse(end.run?.summary);
        throw new Failure(`recon ${started.workflowId} ${end.status.toLowerCase()}${error.success ? `: ${error.data.error}` : ''}`);
      }
      if (!ctx.json) writeLines(summaryLines(started.workflowId, end.run, window, open, ctx.style));
    });

  const exceptions = recon.command('exceptions')
    .description('list recon exceptions (all pages): a table, a CSV file (rupees with Indian grouping, UTR and gateway ids) or JSON')
    .addOption(recon.createOption('--status <status>').choices(['open', 'resolved', 'cleared']))
    .addOption(recon.createOption('--class <class>').choices([...CLASSES]))
    .addOption(recon.createOption('--reason <reason>').choices([...REASONS]))
    .addOption(recon.createOption('--severity <severity>').choices([...SEVERITIES]))
    .option('--from <day>', 'from this IST day (YYYY-MM-DD)')
    .option('--to <day>', 'up to this IST day, inclusive')
    .addOption(recon.createOption('--format <format>', 'table (default), csv or json; --json is --format json').choices(['table', 'csv', 'json']));
  exceptions.action(async ({ format: asked, ...flags }: ExceptionFlags & { format?: 'table' | 'csv' | 'json' }, cmd: Command) => {
    const filter = { ...flags, from: isoDayFlag('--from', flags.from), to: isoDayFlag('--to', flags.to) };
    const ctx = connect(cmd, 'finance');
    const format = asked ?? (ctx.json ? 'json' : 'table');
    const note = countingNote();
    const rows = await listExceptions(ctx.api, filter, note.onPage).finally(note.done);
    if (format === 'json') return writeJson(rows);
    if (format === 'csv') return void process.stdout.write(exceptionsCsv(rows));
    writeLines(exceptionTableLines(rows, ctx.style));
  });

  recon.command('resolve')
    .description('resolve an exception with a note (audited); a resolved one cannot be resolved again')
    .argument('<id>', 'the exception id (first column of recon exceptions)')
    .requiredOption('--note <text>', 'what was found or done')
    .action(async (id: string, opts: { note: string }, cmd: Command) => {
      if (!/^[1-9]\d{0,15}$/.test(id)) throw new UsageError(`exception id ${JSON.stringify(id)}: expected a positive whole number`);
      const ctx = connect(cmd, 'finance');
      const resolved = await ctx.api.resolveException(Number(id), opts.note);
      if (ctx.json) return writeJson(resolved);
      writeLines([`exception ${resolved.id} (${resolved.reason}, ${resolved.day}) resolved by ${resolved.resolvedBy ?? 'you'}: ${resolved.resolutionNote ?? opts.note}`]);
    });
}

/** Every page of the listing; `--severity` is applied here (the listing filters the rest). */
async function listExceptions(api: ApiClient, filter: ExceptionFlags, onPage?: (total: number) => void): Promise<ReconException[]> {
  const { severity, ...query } = filter;
  const rows = await allPages<ReconException, number>(async (after) => {
    const page = await api.exceptionPage({ ...query, limit: PAGE, after });
    return { rows: page.exceptions, next: page.next };
  }, onPage);
  return severity ? rows.filter((e) => e.severity === severity) : rows;
}

/** On a terminal, a running count while a long listing pages in. */
function countingNote(): { onPage?: (total: number) => void; done: () => void } {
  let shown = false;
  if (!process.stderr.isTTY) return { done: () => undefined };
  return {
    onPage: (total) => {
      if (total < PAGE && !shown) return;
      shown = true;
      process.stderr.write(`\rfetched ${total} exceptions…`);
    },
    done: () => { if (shown) process.stderr.write('\n'); },
  };
}

export function exceptionTableLines(rows: readonly ReconException[], style: Style): string[] {
  const rupees = (paise: number | null) => (paise === null ? '' : formatRupees(paise));
  const lines = renderTable(
    ['ID', 'DAY', 'STATUS', 'CLASS', 'SEVERITY', 'REASON', 'EXPECTED', 'ACTUAL', 'DIFFERENCE', 'UTR', 'PAYMENT', 'REFUND', 'TRANSFER', 'SETTLEMENT', 'ORDER', 'NEXT ACTION'],
    rows.map((e) => {
      const refs = exceptionReferences(e);
      return [e.id, e.day, e.status, e.class, e.severity, e.reason, rupees(e.expectedPaise), rupees(e.actualPaise), rupees(differencePaise(e)),
        refs.utr, refs.paymentId, refs.refundId, refs.transferId, refs.settlementId, e.orderId, e.nextAction];
    }),
    style,
  );
  if (!style.tty) return lines;
  if (rows.length === 0) return ['no recon exceptions match'];
  return [...lines, '', `${rows.length} exception${rows.length === 1 ? '' : 's'}, ${formatRupees(atStakePaise(rows))} at stake`];
}

/** What an exception puts in question: the difference when both sides are known, else the one side. */
function atStakePaise(rows: readonly ReconException[]): number {
  return rows.reduce((sum, e) => sum + Math.abs(differencePaise(e) ?? e.actualPaise ?? e.expectedPaise ?? 0), 0);
}

interface ProgressView { update(progress: ReconProgress): void; stop(): void }

/** A bar on a terminal (stderr), otherwise a plain line each time the progress changes. */
function progressView(workflowId: string): ProgressView {
  const steps = (p: ReconProgress) => ({ total: p.daysTotal + 1, value: p.daysPulled + (p.phase === 'completed' ? 1 : 0) });
  const payload = (p: ReconProgress) => ({ phase: p.phase, days: `${p.daysPulled}/${p.daysTotal}`, rows: p.rowsFetched, matched: p.matched, exceptions: p.exceptions });
  if (process.stderr.isTTY) {
    const bar = new SingleBar({
      stream: process.stderr, barsize: 24, hideCursor: false, clearOnComplete: false,
      format: `${workflowId} [{bar}] {phase} | days {days} | {rows} rows | {matched} matched | {exceptions} exceptions`,
    }, Presets.shades_classic);
    let started = false;
    return {
      update(p) {
        const { total, value } = steps(p);
        if (!started) bar.start(total, value, payload(p));
        else bar.update(value, payload(p));
        started = true;
      },
      stop: () => { if (started) bar.stop(); },
    };
  }
  let last = '';
  return {
    update(p) {
      const line = `${workflowId}: ${p.phase}, ${p.daysPulled}/${p.daysTotal} days pulled, ${p.rowsFetched} rows, ${p.matched} matched, ${p.exceptions} exceptions`;
      if (line !== last) process.stderr.write(`${line}\n`);
      last = line;
    },
    stop: () => undefined,
  };
}

type StoredRun = ReconRun['runs'][number];
interface RunEnd { status: string; run: StoredRun | undefined }

/** Until the run's row is closed or Temporal says the run is over (a terminated run leaves its row
 * `running`). `completed` only when the row says so. */
async function waitForRun(api: ApiClient, started: { workflowId: string; runId: string }, view: ProgressView): Promise<RunEnd> {
  for (;;) {
    const state = await api.reconRun(started.workflowId);
    if (state.live?.progress) view.update(state.live.progress);
    const run = state.runs.find((r) => r.run_id === started.runId);
    const rowClosed = run !== undefined && run.status !== 'running';
    const liveEnded = state.live !== null && state.live.status !== 'RUNNING';
    if (rowClosed || liveEnded) {
      if (run?.status === 'completed') return { status: 'completed', run };
      return { status: state.live && state.live.status !== 'RUNNING' ? state.live.status : run?.status ?? 'unknown', run };
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

const summarySchema = reconProgressSchema.extend({
  byReason: z.record(z.string(), z.number()), opened: z.number(), changed: z.number(), cleared: z.number(),
});

export function summaryLines(workflowId: string, run: StoredRun | undefined, window: { from: string; to: string }, open: readonly ReconException[], style: Style): string[] {
  const lines: string[] = [];
  const summary = summarySchema.safeParse(run?.summary);
  if (summary.success) {
    const s = summary.data;
    lines.push(
      `recon ${workflowId} completed: ${s.daysPulled} day${s.daysPulled === 1 ? '' : 's'}, ${s.rowsFetched} gateway rows, ${s.settlementsFetched} settlements fetched, ${s.matched} matched`,
      `  exceptions found: ${s.exceptions} (${s.opened} new, ${s.changed} changed, ${s.cleared} cleared)`,
    );
  } else {
    lines.push(`recon ${workflowId} completed`);
  }
  const byReason = new Map<string, ReconException[]>();
  for (const e of open) byReason.set(e.reason, [...(byReason.get(e.reason) ?? []), e]);
  lines.push(`open exceptions ${window.from}..${window.to}: ${open.length}, ${formatRupees(atStakePaise(open))} at stake`);
  const reasons = [...byReason.entries()].sort(([a], [b]) => a.localeCompare(b));
  if (reasons.length > 0) {
    lines.push(...renderTable(['  REASON', 'COUNT', 'AT STAKE'], reasons.map(([reason, rows]) => [`  ${reason}`, rows.length, formatRupees(atStakePaise(rows))]), { tty: true }));
    lines.push(`see them: payouts recon exceptions --status open --from ${shellQuote(window.from)} --to ${shellQuote(window.to)}`);
  }
  if (run?.finished_at) lines.push(`finished ${formatInstant(run.finished_at, style)}`);
  return lines;
}
