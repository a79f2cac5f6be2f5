/** Finance commands for offline settlement (role `finance`): freeze a period's open offline lines into
 * a batch, show it, write its bank file, record lines paid (UTR) or failed, import the bank's
 * response file, cancel a batch with nothing paid (once its bank file was downloaded, only confirmed
 * never submitted to the bank). */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander' with { 'resolution-mode': 'import' };
import { formatRupees } from '../../domain/money';
import { rupeesToPaise } from '../../recon/bankStatementCsv';
import { ApiError, type ApiClient, type SettlementBatch, type SettlementDecision } from './apiClient';
import { readCsvArgument, refusedFile } from './bank';
import { connect, Failure, isoDayFlag, UsageError } from './context';
import { moneyFilePath } from './moneyFiles';
import { formatInstant, renderTable, writeJson, writeLines, type Style } from './output';

const FREEZE_WAIT_MS = 60_000;
const POLL_MS = 300;

export function registerSettlementCommands(program: Command): void {
  const settlement = program.command('settlement').description('offline settlement: batches, the bank file, UTRs (finance)');

  settlement.command('run')
    .description("freeze the open offline lines of a period (and older ones still open) into a batch, one line per vendor; prints the batch")
    .requiredOption('--from <day>', 'first IST day (YYYY-MM-DD)')
    .requiredOption('--to <day>', 'last IST day, inclusive')
    .option('--vendor <id...>', 'only these vendors (repeatable)')
    .action(async (opts: { from: string; to: string; vendor?: string[] }, cmd: Command) => {
      const period = { from: isoDayFlag('--from', opts.from)!, to: isoDayFlag('--to', opts.to)! };
      if (period.from > period.to) throw new UsageError(`--from ${period.from} is after --to ${period.to}`);
      const ctx = connect(cmd, 'finance');
      const started = await ctx.api.startSettlement({ ...period, ...(opts.vendor ? { vendorIds: opts.vendor } : {}) });
      const batchId = await waitForBatch(ctx.api, started.workflowId);
      const batch = await ctx.api.settlementBatch(batchId);
      if (ctx.json) return writeJson({ ...started, batch });
      writeLines([`settlement ${started.workflowId}: batch ${batch.id}`, ...batchLines(batch, ctx.style), '', ...nextSteps(batch)]);
    });

  settlement.command('show')
    .description('a batch with its lines (no batch: the latest batches)')
    .argument('[batch]', 'a batch id (stb_…)')
    .addOption(settlement.createOption('--status <status>', 'with no batch: only batches in this state').choices(['open', 'closed', 'cancelled']))
    .action(async (batchId: string | undefined, opts: { status?: string }, cmd: Command) => {
      const ctx = connect(cmd, 'finance');
      if (batchId) {
        const batch = await ctx.api.settlementBatch(batchId);
        return ctx.json ? writeJson(batch) : writeLines(batchLines(batch, ctx.style));
      }
      const { batches } = await ctx.api.settlementBatches({ status: opts.status });
      if (ctx.json) return writeJson(batches);
      if (batches.length === 0) return writeLines(['no settlement batches']);
      writeLines(renderTable(['BATCH', 'PERIOD', 'STATUS', 'LINES', 'OPEN', 'AMOUNT', 'PAID', 'BY', 'CREATED'],
        batches.map((b) => [b.id, `${b.from} … ${b.to}`, b.status, b.lines, b.openLines, formatRupees(b.amountPaise), formatRupees(b.paidPaise), b.createdBy, formatInstant(b.createdAt, ctx.style)]), ctx.style));
    });

  settlement.command('bank-file')
    .description("write the batch's bank bulk-payment file (its open lines, with account numbers: keep it safe)")
    .argument('<batch>', 'a batch id (stb_…)')
    .option('-o, --out <file>', 'write here (default: <batch>-bank-file.csv in this folder); refused where git would track it')
    .addOption(settlement.createOption('--output <file>', 'the same as --out').hideHelp())
    .action(async (batchId: string, opts: { out?: string; output?: string }, cmd: Command) => {
      const ctx = connect(cmd, 'finance');
      // Checked before the download: a refused path leaves no download in the batch's audit.
      const file = await moneyFilePath(opts.out ?? opts.output ?? `${batchId}-bank-file.csv`);
      const csv = await ctx.api.settlementBankFile(batchId);
      await fs.writeFile(file, csv, { mode: 0o600 });
      await fs.chmod(file, 0o600); // a file that was there keeps its mode through writeFile
      const rows = csv.trim().split(/\r?\n/).length - 1;
      if (ctx.json) return writeJson({ batchId, file, rows });
      writeLines([`${file}: ${rows} payment${rows === 1 ? '' : 's'} for the bank (upload it to the bank's bulk-payment portal)`]);
    });

  settlement.command('paid')
    .description("record a line paid with the bank's UTR")
    .argument('<reference>', 'the line reference (ST…, in the bank file and on the statement)')
    .requiredOption('--utr <utr>', "the bank's UTR for the payment")
    .requiredOption('--paid-on <day>', 'the value date (YYYY-MM-DD)')
    .option('--amount <rupees>', 'the amount the bank paid (e.g. 1234.50): refused if it is not the line\'s')
    .action(async (reference: string, opts: { utr: string; paidOn: string; amount?: string }, cmd: Command) => {
      const amountPaise = opts.amount === undefined ? undefined : rupeesToPaise(opts.amount);
      if (amountPaise === null) throw new UsageError(`--amount ${JSON.stringify(opts.amount)}: expected rupees like 1234.50`);
      const ctx = connect(cmd, 'finance');
      const decided = await ctx.api.settlementPaid(reference, { utr: opts.utr, paidOn: isoDayFlag('--paid-on', opts.paidOn)!, ...(amountPaise === undefined ? {} : { amountPaise }) });
      if (ctx.json) writeJson(decided);
      else writeLines([decisionLine(decided)]);
    });

  settlement.command('failed')
    .description('record that the bank did not pay a line: its offline lines are open again for the next run')
    .argument('<reference>', 'the line reference (ST…)')
    .requiredOption('--reason <text>', "what the bank said (e.g. 'account closed')")
    .action(async (reference: string, opts: { reason: string }, cmd: Command) => {
      const ctx = connect(cmd, 'finance');
      const decided = await ctx.api.settlementFailed(reference, { reason: opts.reason });
      if (ctx.json) writeJson(decided);
      else writeLines([decisionLine(decided)]);
    });

  settlement.command('import')
    .description("import the bank's response file (reference,status,utr,value_date,amount[,reason]): all rows or none")
    .argument('<file>')
    .action(async (file: string, _opts: unknown, cmd: Command) => {
      const csv = await readCsvArgument(file);
      const ctx = connect(cmd, 'finance');
      const name = path.basename(file);
      try {
        const { results } = await ctx.api.importBankResponse(name, csv);
        if (ctx.json) return writeJson({ file: name, results });
        writeLines([`${name}: ${results.length} row${results.length === 1 ? '' : 's'} applied`, ...results.map(decisionLine)]);
      } catch (err) {
        refusedFile(err, 'invalid_bank_response', name, ctx.json);
      }
    });

  settlement.command('cancel')
    .description('cancel a batch none of whose lines is paid: its lines return to the open offline ledger (once its bank file was downloaded, only with --confirm-not-submitted)')
    .argument('<batch>', 'a batch id (stb_…)')
    .requiredOption('--reason <text>', 'why')
    .option('--confirm-not-submitted', 'the bank file was downloaded but never submitted to the bank (audited); otherwise record each line paid or failed')
    .action(async (batchId: string, opts: { reason: string; confirmNotSubmitted?: boolean }, cmd: Command) => {
      const ctx = connect(cmd, 'finance');
      try {
        const batch = await ctx.api.cancelSettlement(batchId, { reason: opts.reason, ...(opts.confirmNotSubmitted ? { confirmNotSubmitted: true } : {}) });
        if (ctx.json) writeJson(batch);
        else writeLines([`batch ${batch.id} cancelled: its ${batch.totals.lines} line(s) are open again`]);
      } catch (err) {
        if (err instanceof ApiError && err.code === 'settlement_batch_file_downloaded') {
          throw new Failure(`${err.oneLine()}\n  payouts settlement paid <reference> --utr <UTR> --paid-on <day>, or failed <reference> --reason …; `
            + `if the file never reached the bank: payouts settlement cancel ${batchId} --reason … --confirm-not-submitted`);
        }
        throw err;
      }
    });
}

/** The freeze is one activity: seconds, unless no worker is running. */
async function waitForBatch(api: ApiClient, workflowId: string): Promise<string> {
  const deadline = Date.now() + FREEZE_WAIT_MS;
  for (;;) {
    const run = await api.settlementRun(workflowId);
    const batchId = run.live?.progress?.batchId ?? (run.live === null ? run.batchIds[0] : undefined);
    if (batchId) return batchId;
    if (Date.now() > deadline) throw new Failure(`settlement ${workflowId} has not frozen its batch after ${FREEZE_WAIT_MS / 1000}s: is a worker running?`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

export function batchLines(batch: SettlementBatch, style: Style): string[] {
  const t = batch.totals;
  const lines = [
    `batch ${batch.id} (${batch.from} … ${batch.to}): ${batch.status}; ${t.lines} line(s), ${formatRupees(t.amountPaise)}; paid ${t.paid} (${formatRupees(t.paidPaise)}), open ${t.open}, failed ${t.failed}${t.cancelled ? `, cancelled ${t.cancelled}` : ''}`,
  ];
  if (batch.bankFile) lines.push(`bank file downloaded ${batch.bankFile.downloads} time(s), last by ${batch.bankFile.lastDownloadedBy} at ${formatInstant(batch.bankFile.lastDownloadedAt, style)}`);
  if (batch.lines.length > 0) {
    lines.push(...renderTable(['REFERENCE', 'VENDOR', 'BENEFICIARY', 'ACCOUNT', 'IFSC', 'AMOUNT', 'ORDERS', 'STATUS', 'UTR', 'PAID ON'],
      batch.lines.map((l) => [l.reference, l.vendorId, l.beneficiaryName, l.accountMasked, l.ifsc, formatRupees(l.amountPaise), l.members, l.status + (l.failureReason ? ` (${l.failureReason})` : ''), l.utr, l.paidOn]), style));
  }
  for (const s of batch.skipped) {
    lines.push(`carried forward: ${s.vendorId}, ${s.lines} line(s) netting ${formatRupees(s.netPaise)} (${s.reason === 'no_bank_details' ? 'no bank details: PUT /v1/admin/vendors/<id>/bank-details' : 'owes at least as much as it is owed'})`);
  }
  return lines;
}

function nextSteps(batch: SettlementBatch): string[] {
  if (batch.status !== 'open') return ['nothing to pay in this batch'];
  return [
    'next:',
    `  payouts settlement bank-file ${batch.id}            # the file for the bank`,
    `  payouts settlement paid <reference> --utr <UTR> --paid-on <day>`,
    `  payouts settlement import <bank-response.csv>         # or every line at once`,
  ];
}

function decisionLine(d: SettlementDecision): string {
  return `${d.reference}: ${d.status}${d.alreadyRecorded ? ' (already recorded)' : ''}; batch ${d.batchId} ${d.batchStatus}`;
}
