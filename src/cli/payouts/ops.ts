/** Ops commands (role `ops`): the human queue, one payout in full, decisions on one or many
 * payouts, the kill switch for direct transfers and the audit trail. */
import type { Command } from 'commander' with { 'resolution-mode': 'import' };
import type { OpsAction } from '../../contracts/payout';
import { formatRupees } from '../../domain/money';
import { decidedByWords } from '../../payouts/reasons';
import { transferIdSchema } from '../../domain/schemas';
import { allPages, type BatchWithOrders, type BulkDecision, type PauseAnswer, type PayoutDetail, type QueueItem, type TransferSwitch } from './apiClient';
import { connect, Failure, isoDayFlag, UsageError, type CommandContext } from './context';
import { formatAge, formatInstant, renderTable, shellQuote, writeJson, writeLines, type Style } from './output';

const HUMAN_QUEUE = 'parked or review payouts';
const DECISIONS: Array<{ name: string; path: 'retry' | 'mark-paid-externally' | 'pay-offline' | 'cancel'; action: OpsAction; what: string; takes: string }> = [
  { name: 'retry', path: 'retry', action: 'retry', what: 'send the transfer again', takes: HUMAN_QUEUE },
  { name: 'mark-paid', path: 'mark-paid-externally', action: 'mark_paid_externally', what: 'record that the vendor was paid outside Razorpay', takes: HUMAN_QUEUE },
  { name: 'pay-offline', path: 'pay-offline', action: 'pay_offline', what: 'have finance pay the vendor by hand instead: the payout moves to offline and no transfer is ever sent for it', takes: 'pending, failed, parked or review payouts; e.g. while transfers are paused' },
  { name: 'cancel', path: 'cancel', action: 'cancel', what: 'cancel the payout: we do not pay the vendor for this order', takes: HUMAN_QUEUE },
];

/** Results of a bulk decision that count as done. */
const SETTLED_RESULTS = new Set(['applied', 'already_in_effect']);

export function registerOpsCommands(program: Command): void {
  program.command('queue')
    .description('list the payouts waiting for a decision (parked and review), oldest first')
    .addOption(program.createOption('--status <status>', 'only parked or only review').choices(['parked', 'review']))
    .option('--vendor <vendorId>', 'only this vendor')
    .option('--reason <code>', 'only this provider code, e.g. BAD_REQUEST_TRANSFER_NOT_ALLOWED_TO_SUSPENDED_LINKED_ACCOUNT')
    .option('--older-than <age>', 'waiting longer than this: 30m, 4h, 2d')
    .action(async (opts: { status?: string; vendor?: string; reason?: string; olderThan?: string }, cmd: Command) => {
      if (opts.olderThan !== undefined && !/^\d{1,6}[mhd]$/.test(opts.olderThan)) throw new UsageError(`--older-than ${JSON.stringify(opts.olderThan)}: expected a duration such as 30m, 4h or 2d`);
      const ctx = connect(cmd, 'ops');
      const items = await allPages<QueueItem, string>(async (after) => {
        const page = await ctx.api.queuePage({ status: opts.status, vendorId: opts.vendor, reason: opts.reason, olderThan: opts.olderThan, limit: 200, after });
        return { rows: page.items, next: page.next };
      });
      if (ctx.json) return writeJson(items);
      writeLines(queueLines(items, ctx.style));
    });

  program.command('show')
    .description('one payout: status, reason and next step, attempts, decisions, the order and its Web UI link')
    .argument('<orderId>')
    .action(async (orderId: string, _opts: unknown, cmd: Command) => {
      const ctx = connect(cmd, 'ops');
      const detail = await ctx.api.payout(orderId);
      if (ctx.json) return writeJson(detail);
      writeLines(payoutLines(detail, webUiLink(ctx, detail), ctx.style));
    });

  for (const decision of DECISIONS) {
    const command = program.command(decision.name)
      .description(`${decision.what} (${decision.takes})`)
      .addHelpText('after', '\nSeveral order ids make one bulk decision, answered per order; exit 1 if any was not applied.')
      .argument('<orderIds...>')
      .requiredOption('--reason <text>', 'why (kept in the audit trail)');
    if (decision.action === 'pay_offline') {
      command.addHelpText('after', 'When a request of ours went out without a definitive answer, the API asks Razorpay first and refuses (409 live_transfer_exists) while a transfer carrying the payout\'s id is not failed or reversed: if it pays the payout, use mark-paid ORDER_ID --transfer trf_… instead.');
    }
    if (decision.action === 'mark_paid_externally') {
      command
        .option('--transfer <trf_id>', 'the Razorpay transfer that paid it (checked against the payout by the API, then recorded as its transfer)')
        .option('--reference <ref>', 'the reference of the payment made (UTR, cheque number)')
        .addHelpText('after', 'mark-paid needs --transfer, --reference or both; --transfer takes one order id.');
    }
    command.action(async (orderIds: string[], opts: { reason: string; reference?: string; transfer?: string }, cmd: Command) => {
      const unique = [...new Set(orderIds)];
      if (decision.action === 'mark_paid_externally') checkMarkPaidFlags(opts, unique.length);
      const ctx = connect(cmd, 'ops');
      if (unique.length === 1) {
        const answer = await ctx.api.decide(unique[0]!, decision.path, { reason: opts.reason, reference: opts.reference, transferId: opts.transfer });
        if (ctx.json) return writeJson(answer);
        const done = answer.alreadyInEffect ? `${decision.name} was already in effect` : `${decision.name} applied`;
        return writeLines([`${unique[0]}: ${done}; the payout is ${answer.payout.status}`]);
      }
      const answer = await ctx.api.decideMany({ action: decision.action, orderIds: unique, reason: opts.reason, reference: opts.reference });
      if (ctx.json) writeJson(answer);
      else writeLines(bulkLines(answer, ctx.style));
      const refused = answer.results.filter((r) => !SETTLED_RESULTS.has(r.result)).length;
      if (refused > 0) throw new Failure(`${refused} of ${answer.results.length} ${decision.name} decisions were not applied`);
    });
  }

  program.command('batches')
    .description('payout batches of pairs on an hourly or daily schedule, newest cutoff first (payouts show BATCH_ID lists the orders inside)')
    .addOption(program.createOption('--status <status>', 'only open or only closed batches').choices(['open', 'closed']))
    .option('--vendor <vendorId>', 'only this vendor')
    .action(async (opts: { status?: string; vendor?: string }, cmd: Command) => {
      const ctx = connect(cmd, 'ops');
      const { batches } = await ctx.api.batches({ status: opts.status, vendorId: opts.vendor, limit: '500' });
      if (ctx.json) return writeJson(batches);
      writeLines(renderTable(['BATCH', 'VENDOR', 'SCHEDULE', 'CUTOFF', 'STATUS', 'ORDERS', 'SUM', 'TRANSFER'],
        batches.map((b) => [b.batchId, b.vendorId, b.schedule, formatInstant(b.cutoffAt, ctx.style), b.status, b.orderCount, formatRupees(b.totalPaise),
          b.payout ? `${b.payout.status}${b.payout.providerTransferId ? ` ${b.payout.providerTransferId}` : ''}` : '—']), ctx.style));
      if (ctx.style.tty && batches.length === 0) writeLines(['no batches match']);
    });

  program.command('close-batch')
    .description('close an open batch now instead of at its cutoff, and pay it; later orders go to the next window')
    .argument('<batchId>')
    .requiredOption('--reason <text>', 'why (kept in the log)')
    .action(async (batchId: string, opts: { reason: string }, cmd: Command) => {
      const ctx = connect(cmd, 'ops');
      const answer = await ctx.api.closeBatch(batchId, opts.reason);
      if (ctx.json) return writeJson(answer);
      writeLines([`${batchId}: closing now; ${answer.batch.orderCount} orders, ${formatRupees(answer.batch.totalPaise)} in one transfer (payouts show ${batchId})`]);
    });

  program.command('pause')
    .description('pause direct transfers (the kill switch): no new request leaves until resume; requests already past the gate are listed, they may still land')
    .requiredOption('--reason <text>', 'why (kept in the audit trail)')
    .action(async (opts: { reason: string }, cmd: Command) => {
      const ctx = connect(cmd, 'ops');
      const state = await ctx.api.pauseTransfers(opts.reason);
      if (ctx.json) return writeJson(state);
      writeLines([switchLine(state, ctx.style), ...inFlightLines(state.inFlight, ctx.style)]);
    });

  program.command('resume')
    .description('resume direct transfers; what the pause held back is swept at once')
    .requiredOption('--reason <text>', 'why (kept in the audit trail)')
    .action(async (opts: { reason: string }, cmd: Command) => {
      const ctx = connect(cmd, 'ops');
      const state = await ctx.api.resumeTransfers(opts.reason);
      if (ctx.json) return writeJson(state);
      writeLines([
        switchLine(state, ctx.style),
        state.sweep ? `payout sweep started now: ${state.sweep.workflowId}` : 'the payout sweep could not be started now; its Schedule runs it shortly',
      ]);
    });

  program.command('switch')
    .description('show whether direct transfers are paused')
    .action(async (_opts: unknown, cmd: Command) => {
      const ctx = connect(cmd, 'ops');
      const state = await ctx.api.transferSwitch();
      if (ctx.json) return writeJson(state);
      writeLines([switchLine(state, ctx.style)]);
    });

  program.command('audit')
    .description('who did what, newest first: payout decisions, the kill switch, recon resolutions, bank imports, cash confirmations, API keys')
    .option('--actor <text>', 'a key name or a person, e.g. ops-asha or Asha')
    .option('--from <day>', 'from this IST day (YYYY-MM-DD)')
    .option('--to <day>', 'up to this IST day, inclusive')
    .option('--limit <n>', 'at most this many entries (API maximum 500)', '100')
    .action(async (opts: { actor?: string; from?: string; to?: string; limit: string }, cmd: Command) => {
      const from = isoDayFlag('--from', opts.from);
      const to = isoDayFlag('--to', opts.to);
      if (!/^\d{1,3}$/.test(opts.limit) || Number(opts.limit) < 1 || Number(opts.limit) > 500) throw new UsageError(`--limit ${JSON.stringify(opts.limit)}: expected 1 to 500`);
      const ctx = connect(cmd, 'ops');
      const { entries } = await ctx.api.audit({ actor: opts.actor, from, to, limit: opts.limit });
      if (ctx.json) return writeJson(entries);
      writeLines(renderTable(['AT', 'ACTOR', 'KIND', 'ACTION', 'SUBJECT', 'REASON', 'REFERENCE'],
        entries.map((e) => [formatInstant(e.at, ctx.style), e.actor, e.kind, e.action, e.subject, e.reason, e.reference]), ctx.style));
      if (ctx.style.tty && entries.length === 0) writeLines(['no audit entries match']);
    });
}

/** A transfer pays one payout; a reference may stand for many (one bank batch). */
function checkMarkPaidFlags(opts: { reference?: string; transfer?: string }, orders: number): void {
  if (opts.reference === undefined && opts.transfer === undefined) throw new UsageError('mark-paid needs --transfer trf_… (the Razorpay transfer that paid it), --reference REF, or both');
  if (opts.transfer !== undefined && !transferIdSchema.safeParse(opts.transfer).success) throw new UsageError(`--transfer ${JSON.stringify(opts.transfer)}: expected a Razorpay transfer id, trf_ and 14 letters or digits`);
  if (opts.transfer !== undefined && orders > 1) throw new UsageError('--transfer pays one payout: give one order id');
}

export function queueLines(items: readonly QueueItem[], style: Style): string[] {
  const lines = renderTable(['ORDER', 'STATUS', 'AMOUNT', 'WAITING', 'ATTEMPTS', 'VENDOR', 'REASON', 'CODE'],
    items.map((i) => [i.orderId, i.status, i.amount.rupees, formatAge(i.ageSeconds), i.attempts, i.vendorId, i.reason.words, i.reason.code]), style);
  if (!style.tty) return lines;
  if (items.length === 0) return ['no payouts wait for a decision'];
  const total = items.reduce((sum, i) => sum + i.amount.paise, 0);
  return [...lines, '', `${items.length} payout${items.length === 1 ? '' : 's'} (${formatRupees(total)}) wait for a decision; details and next step: payouts show ORDER_ID`];
}

function webUiLink(ctx: CommandContext, detail: PayoutDetail): string | null {
  if (detail.webUiUrl) return detail.webUiUrl;
  if (!ctx.connection.temporalUiUrl) return null;
  const namespace = process.env.PAYOUTS_TEMPORAL_NAMESPACE || 'default';
  return `${ctx.connection.temporalUiUrl.replace(/\/+$/, '')}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(detail.workflowId)}`;
}

export function payoutLines(d: PayoutDetail, webUi: string | null, style: Style): string[] {
  const p = d.payout;
  const lines = [
    `payout ${p.id} for order ${p.orderId}: ${p.status}`,
    `  amount      ${formatRupees(p.amountPaise)} to ${p.vendorId} (${p.linkedAccountId})`,
    `  attempts    ${p.attempts} of ${p.attemptLimit}${p.providerTransferId ? `; transfer ${p.providerTransferId}` : ''}${p.externalReference ? `; paid externally, reference ${p.externalReference}` : ''}`,
  ];
  if (d.reason) {
    lines.push(`  reason      ${d.reason.words}${d.reason.code ? ` (${d.reason.code}${d.reason.decidedBy ? `, decided by ${decidedByWords(d.reason.decidedBy)}` : ''})` : ''}`, `  next step   ${d.reason.nextStep}`);
    const id = shellQuote(p.orderId);
    const commands = [`retry ${id} --reason "…"`, `pay-offline ${id} --reason "…"`, `mark-paid ${id} --transfer trf_… --reason "…"`, `mark-paid ${id} --reference REF --reason "…"`, `cancel ${id} --reason "…"`];
    lines.push(...commands.map((c, i) => `  ${i === 0 ? 'commands' : ''}`.padEnd(14) + `payouts ${c}`));
  } else if (p.status === 'pending' || p.status === 'failed') {
    // Not waiting for a decision, but finance may pay it by hand (e.g. while transfers are paused).
    lines.push('  by hand'.padEnd(14) + `payouts pay-offline ${shellQuote(p.orderId)} --reason "…"  (no transfer is sent for it after)`);
  }
  lines.push(`  workflow    ${d.workflowId}${webUi ? `  ${webUi}` : ''}`);
  const o = d.order;
  if (o) {
    lines.push('order',
      `  total ${formatRupees(o.totalPaise)}, subsidy ${formatRupees(o.subsidyPaise)}, customer ${formatRupees(o.customerSharePaise)}, commission ${formatRupees(o.commissionPaise)} (${(o.commissionBps / 100).toFixed(2)}%), vendor net ${formatRupees(o.vendorNetPaise)}`,
      `  ${o.status}; ${o.paymentMethod} payment${o.paidVia && o.paidVia !== o.paymentMethod ? ` via ${o.paidVia}` : ''}${o.paidAt ? ` at ${formatInstant(o.paidAt, style)}` : ''}`);
  }
  if (d.batch) lines.push(...batchLines(d.batch, p.orderId, style));
  lines.push('attempts');
  if (d.attempts.length === 0) lines.push('  none yet');
  for (const a of d.attempts) lines.push(`  #${a.attempt_no}  ${formatInstant(a.created_at, style)}  ${a.outcome}${a.provider_code ? `  ${a.provider_code}` : ''}${a.provider_transfer_id ? `  ${a.provider_transfer_id}` : ''}`);
  lines.push('decisions');
  if (d.reviewActions.length === 0) lines.push('  none');
  for (const r of d.reviewActions) lines.push(`  ${formatInstant(r.created_at, style)}  ${r.actor}  ${r.action}${r.reference ? ` (reference ${r.reference})` : ''}${r.reason ? `: ${r.reason}` : ''}`);
  return lines;
}

/** A batch's own payout lists its orders; a member order names its batch. */
function batchLines(b: BatchWithOrders, shownKey: string, style: Style): string[] {
  const head = `  ${b.batchId} (${b.schedule}, ${b.status}): ${b.orderCount} orders, ${formatRupees(b.totalPaise)}, window ${formatInstant(b.windowStart, style)} to ${formatInstant(b.cutoffAt, style)}`;
  if (shownKey !== b.batchId) return ['paid by batch', head, `  its transfer: ${b.payout ? `${b.payout.status}${b.payout.providerTransferId ? ` ${b.payout.providerTransferId}` : ''}` : 'not closed yet'}; payouts show ${b.batchId}`];
  return ['orders in this batch', head, ...renderTable(['ORDER', 'NET', 'STATUS', 'JOINED'], b.orders.map((o) => [o.orderId, formatRupees(o.amountPaise), o.status, formatInstant(o.joinedAt, style)]), style).map((l) => `  ${l}`)];
}

export function bulkLines(answer: BulkDecision, style: Style): string[] {
  return renderTable(['ORDER', 'RESULT', 'STATUS'], answer.results.map((r) => [r.orderId, r.result, r.status]), style);
}

export function switchLine(state: TransferSwitch, style: Style): string {
  const since = `since ${formatInstant(state.changedAt, style)}${state.changedBy ? ` by ${state.changedBy}` : ''}${state.reason ? `: ${state.reason}` : ''}`;
  return state.paused ? `direct transfers are PAUSED ${since}` : `direct transfers are running ${since}`;
}

/** What a pause could not stop: the requests already past the gate at that moment. */
export function inFlightLines(inFlight: PauseAnswer['inFlight'], style: Style): string[] {
  if (inFlight.count === 0) return ['no request was past the gate at the moment of the pause: nothing more leaves'];
  const lines = [
    `${inFlight.count} request${inFlight.count === 1 ? ' was' : 's were'} already past the gate at the moment of the pause and may still land:`,
    ...renderTable(['ORDER', 'PAYOUT', 'AMOUNT', 'ACCOUNT', 'CLAIMED', 'SENT', 'ANSWER'],
      inFlight.payouts.map((p) => [p.orderId, p.payoutId, formatRupees(p.amountPaise), p.linkedAccountId, formatInstant(p.claimedAt, style), formatInstant(p.requestSentAt, style), p.outcome ?? 'none yet']), style),
  ];
  if (inFlight.payouts.length < inFlight.count) lines.push(`(the oldest ${inFlight.payouts.length} of ${inFlight.count} are listed)`);
  return lines;
}
