/** A vendor statement as CSV (the API's format=csv, the console's download, the CLI's --format csv):
 * one row per line with how it was paid and its references, rupees with Indian grouping and paise,
 * RFC 4180 quoting, a `total` row per rail and the balance; text from a bank or a person cannot run
 * as a formula. */
import { csvFile } from '../../src/reports/csv';
import { csvRecords as parse } from '../support/csv';
import type { Statement } from '../../src/statements/contract';
import { STATEMENT_CSV_HEADER, statementCsv, statementFileName } from '../../src/statements/statementCsv';
import { buildStatement, type StatementRow } from '../../src/statements/statementLines';

const AT = new Date('2026-09-02T06:30:00Z');
const base: StatementRow = {
  kind: 'order', orderId: 'ord_big', at: AT, employerId: 'emp_1',
  order: { paymentMethod: 'online', totalPaise: 15_240_100, subsidyPaise: 15_240_000, customerSharePaise: 100, commissionPaise: 2_895_619, vendorNetPaise: 12_344_481 },
  route: 'direct_transfer', owed: { rail: 'transfer', amountPaise: 12_344_481 }, refundId: null, cashKeptPaise: 0,
  discharge: { kind: 'order_transfer', state: 'paid', providerRef: 'trf_AAAAAAAAAAAAAA' },
  payout: { status: 'settled', externalReference: null, batchId: null }, batchLine: null,
  gatewaySettlement: { settlementId: 'setl_AAAAAAAAAAAAAA', utr: 'UTR000111' },
};
const cash: StatementRow = {
  ...base, orderId: 'ord_cash', at: new Date(AT.getTime() + 1_000), payout: null, gatewaySettlement: null,
  order: { paymentMethod: 'cash', totalPaise: 12_000, subsidyPaise: 2_000, customerSharePaise: 10_000, commissionPaise: 2_280, vendorNetPaise: 9_720 },
  route: 'cash', owed: { rail: 'settlement_run', amountPaise: -280 }, cashKeptPaise: 10_000,
  discharge: { kind: 'settlement_line', state: 'paid', providerRef: '=HYPERLINK("x")' },
  batchLine: { batchId: 'stb_AAAAAAAAAAAAAA', reference: 'STB0001V01', status: 'paid', utr: '=HYPERLINK("x")', paidOn: '2026-09-05' },
};
const statement = (rows: StatementRow[]): Statement => buildStatement({ vendor: { id: 'ven_dosa', name: 'Dosa, "Corner"' }, period: { from: '2026-09-01', to: '2026-09-30' }, rows, generatedAt: AT });

describe('vendor statement CSV', () => {
  test('when a statement is written, then each line is a row with its money in rupees with Indian grouping and paise, and how it was paid with its references', () => {
    const csv = statementCsv(statement([base, cash]));
    expect(csv.split('\r\n')[0]).toBe(STATEMENT_CSV_HEADER.join(','));
    expect(csv.split('\r\n')[1]).toBe('2026-09-02,order,ord_big,emp_1,online,direct_transfer,"1,52,401.00","1,52,400.00",1.00,"28,956.19","1,23,444.81",0.00,transfer,settled,"1,23,444.81",'
      + 'trf_AAAAAAAAAAAAAA,setl_AAAAAAAAAAAAAA,UTR000111,,,,,"transfer trf_AAAAAAAAAAAAAA settled; Razorpay settlement setl_AAAAAAAAAAAAAA, UTR UTR000111"');
    const [order, cashRow] = parse(csv);
    expect(cashRow).toMatchObject({
      kind: 'order', order_id: 'ord_cash', route: 'cash', cash_kept_rupees: '100.00', paid_by: 'offline', status: 'paid', amount_rupees: '-2.80',
      batch_id: 'stb_AAAAAAAAAAAAAA', settlement_reference: 'STB0001V01', paid_on: '2026-09-05',
      // A UTR a person typed that looks like a formula is text in a spreadsheet.
      utr: `'=HYPERLINK("x")`,
    });
    expect(order!.net_rupees).toBe('1,23,444.81');
    expect(csv.endsWith('\r\n')).toBe(true);
  });

  test('when the lines are written, then total rows follow: the orders, each rail and the balance, and they sum the lines', () => {
    const rows = parse(statementCsv(statement([base, cash])));
    const totals = rows.filter((r) => r.kind === 'total');
    expect(totals[0]).toMatchObject({ paid_by: 'orders', how_paid: '2 orders paid 2026-09-01..2026-09-30, vendor ven_dosa', total_rupees: '1,52,521.00', net_rupees: '1,23,542.01', cash_kept_rupees: '100.00', amount_rupees: '1,23,542.01' });
    const byRail = Object.fromEntries(totals.slice(1).map((r) => [`${r.paid_by}: ${r.how_paid}`, r.amount_rupees]));
    expect(byRail).toMatchObject({
      'transfer: settled': '1,23,444.81', 'offline: paid by bank settlement': '-2.80', 'cash: kept at the counter': '100.00',
      'split: processed': '0.00', 'balance: nothing owed offline for this period': '0.00',
    });
    expect(totals).toHaveLength(15);
  });

  test('when a statement has no lines, then the file is the header and the total rows; its name says the vendor and the period', () => {
    const s = statement([]);
    expect(parse(statementCsv(s)).every((r) => r.kind === 'total')).toBe(true);
    expect(statementFileName(s)).toBe('statement-ven_dosa-2026-09-01-2026-09-30.csv');
  });

  test('when a file is assembled, then fields with a comma, quote or line break are quoted and each line ends with CRLF', () => {
    expect(csvFile(['a', 'b'], [['1,5', 'said "no"'], [null, 'two\nlines']])).toBe('a,b\r\n"1,5","said ""no"""\r\n,"two\nlines"\r\n');
    expect(csvFile(['a'], [])).toBe('a\r\n');
  });
});
