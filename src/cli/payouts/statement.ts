/** `payouts statement VENDOR --from --to`: a vendor's statement for IST days (finance, or that
 * vendor's own key with --key): a table by default, the CSV file (the API's format=csv, written by the
 * same module) or the API's JSON. */
import type { Command } from 'commander' with { 'resolution-mode': 'import' };
import { formatRupees } from '../../domain/money';
import { MAX_STATEMENT_DAYS, vendorIdSchema, type Statement } from '../../statements/contract';
import { statementCsv } from '../../statements/statementCsv';
import { totalRows } from '../../statements/statementLines';
import { connect, isoDayFlag, UsageError } from './context';
import { renderTable, writeJson, writeLines, type Style } from './output';

export function registerStatementCommands(program: Command): void {
  program.command('statement')
    .description('a vendor\'s statement: every order paid in the IST days given, how each was paid (transfer and UTR, split, settlement line and UTR, cash kept, still owed), totals by rail (finance, or the vendor\'s own key)')
    .argument('<vendor>', 'the vendor id')
    .requiredOption('--from <day>', 'first IST day (YYYY-MM-DD)')
    .requiredOption('--to <day>', `last IST day, inclusive (at most ${MAX_STATEMENT_DAYS} days)`)
    .addOption(program.createOption('--format <format>', 'table (default), csv or json; --json is --format json').choices(['table', 'csv', 'json']))
    .action(async (vendor: string, opts: { from: string; to: string; format?: 'table' | 'csv' | 'json' }, cmd: Command) => {
      const vendorId = vendorIdSchema.safeParse(vendor);
      if (!vendorId.success) throw new UsageError(`vendor ${JSON.stringify(vendor)}: ${vendorId.error.issues[0]?.message ?? 'not a vendor id'}`);
      const period = { from: isoDayFlag('--from', opts.from)!, to: isoDayFlag('--to', opts.to)! };
      if (period.from > period.to) throw new UsageError(`--from ${period.from} is after --to ${period.to}`);
      const ctx = connect(cmd, 'finance');
      const statement = await ctx.api.statement(vendorId.data, period);
      const format = opts.format ?? (ctx.json ? 'json' : 'table');
      if (format === 'json') return writeJson(statement);
      if (format === 'csv') return void process.stdout.write(statementCsv(statement));
      writeLines(statementTableLines(statement, ctx.style));
    });
}

export function statementTableLines(s: Statement, style: Style): string[] {
  const rupees = (paise: number | null) => (paise === null ? '' : formatRupees(paise));
  const t = s.totals;
  const lines = renderTable(
    ['DAY', 'ORDER', 'ROUTE', 'TOTAL', 'SUBSIDY', 'CUSTOMER', 'COMMISSION', 'NET', 'AMOUNT', 'HOW PAID'],
    s.lines.map((l) => [l.day, l.kind === 'refund_clawback' ? `${l.orderId} (refund clawback)` : l.orderId, l.route,
      rupees(l.totalPaise), rupees(l.subsidyPaise), rupees(l.customerSharePaise), rupees(l.commissionPaise), rupees(l.vendorNetPaise), rupees(l.paidBy.amountPaise), l.howPaid]),
    style,
  );
  return [
    `statement of ${s.vendor.id} (${s.vendor.name}), IST days ${s.period.from}..${s.period.to}`,
    ...(s.lines.length === 0 ? ['no order paid and no refund clawed back in this period'] : lines),
    '',
    `${t.orders} order${t.orders === 1 ? '' : 's'}: total ${rupees(t.totalPaise)}, subsidy ${rupees(t.subsidyPaise)}, customer share ${rupees(t.customerSharePaise)}, commission ${rupees(t.commissionPaise)}, net ${rupees(t.vendorNetPaise)}`,
    ...renderTable(['RAIL', 'WHAT', 'AMOUNT'], totalRows(s).map(([rail, what, paise]) => [rail, what, rupees(paise)]), style),
    `balance: ${s.balance.words}`,
  ];
}
