/** A vendor statement as a CSV file: one row per line (an order, or a refund clawed back), how it was
 * paid with its references (transfer, Razorpay settlement and UTR, settlement batch line and bank
 * UTR), then one `total` row per rail and the offline balance. Amounts are rupees with Indian grouping
 * and paise (`1,23,456.78`); the JSON statement has the same in integer paise. One module for the
 * API's `format=csv`, the console's download and the CLI's `--format csv`, so all write one file. */
import { csvFile, rupeesCell, spreadsheetSafe, type CsvCell } from '../reports/csv';
import type { Statement, StatementLine } from './contract';
import { totalRows } from './statementLines';

type Column = [header: string, value: (line: StatementLine) => CsvCell];

const rail = (line: StatementLine, key: string): string | null => {
  const value = (line.paidBy as Record<string, unknown>)[key];
  return typeof value === 'string' ? value : null;
};

const COLUMNS: Column[] = [
  ['day', (l) => l.day],
  ['kind', (l) => l.kind],
  ['order_id', (l) => l.orderId],
  ['employer_id', (l) => l.employerId],
  ['payment_method', (l) => l.paymentMethod],
  ['route', (l) => l.route],
  ['total_rupees', (l) => rupeesCell(l.totalPaise)],
  ['subsidy_rupees', (l) => rupeesCell(l.subsidyPaise)],
  ['customer_share_rupees', (l) => rupeesCell(l.customerSharePaise)],
  ['commission_rupees', (l) => rupeesCell(l.commissionPaise)],
  ['net_rupees', (l) => rupeesCell(l.vendorNetPaise)],
  ['cash_kept_rupees', (l) => rupeesCell(l.cashKeptPaise)],
  ['paid_by', (l) => l.paidBy.rail],
  ['status', (l) => rail(l, 'status')],
  ['amount_rupees', (l) => rupeesCell(l.paidBy.amountPaise)],
  ['transfer_id', (l) => rail(l, 'transferId')],
  ['settlement_id', (l) => rail(l, 'settlementId')],
  // UTRs and references come from a bank or a person: never a formula.
  ['utr', (l) => spreadsheetSafe(rail(l, 'utr'))],
  ['batch_id', (l) => rail(l, 'batchId')],
  ['settlement_reference', (l) => spreadsheetSafe(rail(l, 'reference') ?? rail(l, 'externalReference'))],
  ['paid_on', (l) => rail(l, 'paidOn')],
  ['refund_id', (l) => l.refundId],
  ['how_paid', (l) => spreadsheetSafe(l.howPaid)],
];

export const STATEMENT_CSV_HEADER: readonly string[] = COLUMNS.map(([header]) => header);

const column = (header: string): number => STATEMENT_CSV_HEADER.indexOf(header);

/** A `total` row: its rail in paid_by, what it sums in how_paid, the sum in amount_rupees. */
function totalRow(railName: string, what: string, paise: number, extra: Partial<Record<string, CsvCell>> = {}): CsvCell[] {
  const cells: CsvCell[] = STATEMENT_CSV_HEADER.map(() => null);
  cells[column('kind')] = 'total';
  cells[column('paid_by')] = railName;
  cells[column('amount_rupees')] = rupeesCell(paise);
  cells[column('how_paid')] = what;
  for (const [header, value] of Object.entries(extra)) cells[column(header)] = value ?? null;
  return cells;
}

export function statementCsv(s: Statement): string {
  const t = s.totals;
  const orders = totalRow('orders', `${t.orders} order${t.orders === 1 ? '' : 's'} paid ${s.period.from}..${s.period.to}, vendor ${s.vendor.id}`, t.vendorNetPaise, {
    total_rupees: rupeesCell(t.totalPaise), subsidy_rupees: rupeesCell(t.subsidyPaise), customer_share_rupees: rupeesCell(t.customerSharePaise),
    commission_rupees: rupeesCell(t.commissionPaise), net_rupees: rupeesCell(t.vendorNetPaise), cash_kept_rupees: rupeesCell(t.cashKeptAtCounterPaise),
  });
  const balance = totalRow('balance', s.balance.words, s.balance.stillOwedPaise);
  const rails = totalRows(s).filter(([name]) => name !== 'balance').map(([name, what, paise]) => totalRow(name, what, paise));
  return csvFile(STATEMENT_CSV_HEADER, [...s.lines.map((line) => COLUMNS.map(([, value]) => value(line))), orders, ...rails, balance]);
}

/** `statement-ven_1-2026-09-01-2026-09-30.csv` */
export const statementFileName = (s: Pick<Statement, 'vendor' | 'period'>): string => `statement-${s.vendor.id}-${s.period.from}-${s.period.to}.csv`;
