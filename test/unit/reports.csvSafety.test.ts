/** No cell of a finance file starts like a formula (issue 41): the one CSV writer refuses an id or a
 * name that would (a field a future change adds cannot slip through), while our own negative amounts
 * and text already made safe are written; the bank's response file refuses such a reason before
 * anything is imported. */
import { parseBankResponse } from '../../src/settlement/bankResponse';
import { bankFileCsv, type BankFileRow } from '../../src/settlement/bankFile';
import { csvFile, spreadsheetSafe, UnsafeCsvCell } from '../../src/reports/csv';
import { exceptionsCsv, type ExceptionForReport } from '../../src/reports/exceptionsCsv';
import { statementCsv } from '../../src/statements/statementCsv';
import { buildStatement, type StatementRow } from '../../src/statements/statementLines';

const FORMULA_STARTS = ['=', '+', '-', '@', '\t', '\r'];

const bankRow: BankFileRow = { reference: 'STABCDEFGH0001', amountPaise: 12_345, beneficiaryName: 'Dosa Corner', accountNumber: '123456789012', ifsc: 'HDFC0001234' };

const AT = new Date('2026-09-02T06:30:00Z');
const statementRow: StatementRow = {
  kind: 'order', orderId: 'ord_1', at: AT, employerId: 'emp_1',
  order: { paymentMethod: 'cash', totalPaise: 12_000, subsidyPaise: 2_000, customerSharePaise: 10_000, commissionPaise: 2_280, vendorNetPaise: 9_720 },
  route: 'cash', owed: { rail: 'settlement_run', amountPaise: -280 }, discharge: null, cashKeptPaise: 10_000, refundId: null, payout: null, batchLine: null, gatewaySettlement: null,
};
const statementOf = (row: StatementRow) => buildStatement({ vendor: { id: 'ven_1', name: 'Dosa' }, period: { from: '2026-09-01', to: '2026-09-30' }, rows: [row], generatedAt: AT });

const exception: ExceptionForReport = {
  id: 7, day: '2026-09-02', status: 'resolved', class: 'mismatched', severity: 'high', reason: 'amount-mismatch', nextAction: 'Compare.',
  entityId: 'pay_AbCdEfGhIjKlMn', settlementId: null, orderId: 'ord_1', bankLineId: null, expectedPaise: 100, actualPaise: 22,
  details: {}, resolvedAt: '2026-09-03T00:00:00.000Z', resolvedBy: 'key:finance', resolutionNote: '-78 paise written off',
};

describe('CSV writers refuse a cell that starts like a formula', () => {
  test.each(FORMULA_STARTS)('when a bank file row has a beneficiary name starting %j, then the file is refused naming the column and row', (start) => {
    expect(() => bankFileCsv([bankRow, { ...bankRow, reference: 'STABCDEFGH0002', beneficiaryName: `${start}2 & Co` }]))
      .toThrow(new UnsafeCsvCell('beneficiary_name', 2));
  });

  test('when a statement line has an employer id starting with -, then the statement CSV is refused naming employer_id', () => {
    expect(() => statementCsv(statementOf({ ...statementRow, employerId: '-A1-1' }))).toThrow(/employer_id.*row 1/);
  });

  test('when an exception has an order id starting with =, then the exceptions CSV is refused naming order_id', () => {
    expect(() => exceptionsCsv([{ ...exception, orderId: '=1+1' }])).toThrow(/order_id.*row 1/);
  });

  test('when the cells are our negative amounts and typed text already made safe, then they are written as they are', () => {
    expect(bankFileCsv([bankRow])).toContain('STABCDEFGH0001,Dosa Corner,123456789012,HDFC0001234,123.45,12345,PAYOUTS STABCDEFGH0001\r\n');
    expect(statementCsv(statementOf(statementRow))).toContain(',-2.80,');
    const csv = exceptionsCsv([exception]);
    expect(csv).toContain(',-0.78,-78,');
    expect(csv).toContain(",'-78 paise written off");
    expect(csvFile(['note'], [[spreadsheetSafe('@SUM(1)')], [-5]])).toBe("note\r\n'@SUM(1)\r\n-5\r\n");
  });

  test('when a cell is text that merely looks like an amount after a formula character, then it is refused', () => {
    expect(() => csvFile(['id'], [['-1+2']])).toThrow(UnsafeCsvCell);
    expect(() => csvFile(['id'], [['+12.00']])).toThrow(UnsafeCsvCell);
  });
});

describe("the bank's response file", () => {
  test.each(['-2', '=HYPERLINK("x")', '@closed', '+91 account closed'])('when a failed row gives the reason %j, then the file is refused naming the line and the reason, nothing imported', (reason) => {
    const parsed = parseBankResponse(`reference,status,utr,value_date,amount,reason\r\nSTABCDEFGH0001,failed,,2026-09-05,70.00,"${reason.replace(/"/g, '""')}"\r\n`);
    expect(parsed).toEqual({ ok: false, problems: [{ line: 2, message: expect.stringMatching(/^reason must not start with =, \+, -, @/) }] });
  });
});
