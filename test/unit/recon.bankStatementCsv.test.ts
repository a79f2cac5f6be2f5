import { normaliseUtr, parseBankStatementCsv, rupeesToPaise, splitCsvLine } from '../../src/recon/bankStatementCsv';
import { latestPerEntityAndSettlement, transactionIdFromNotes } from '../../src/recon/gatewayRows';

describe('bank statement CSV', () => {
  test('when the file is well formed, then every line is parsed to paise with its line number', () => {
    const csv = 'UTR,Amount,Value_Date,Narration\r\n utr0001abc ,1234.50,2026-11-03,"NEFT RAZORPAY, settlement"\r\nUTR0002,7,2026-11-03,\r\n';
    expect(parseBankStatementCsv(csv)).toEqual({
      ok: true,
      lines: [
        { lineNo: 2, direction: 'credit', utr: 'utr0001abc', utrNormalised: 'UTR0001ABC', amountPaise: 123_450, valueDate: '2026-11-03', narration: 'NEFT RAZORPAY, settlement' },
        { lineNo: 3, direction: 'credit', utr: 'UTR0002', utrNormalised: 'UTR0002', amountPaise: 700, valueDate: '2026-11-03', narration: '' },
      ],
    });
  });

  test('when a type column says DR, then the line is a debit (an offline settlement payment); a bad type is named', () => {
    const result = parseBankStatementCsv('utr,amount,value_date,type\nHDFCN0001,360.00,2026-12-01,DR\nUTR0009,5.00,2026-12-01,cr\n');
    expect(result).toMatchObject({ ok: true, lines: [{ direction: 'debit', amountPaise: 36_000 }, { direction: 'credit', amountPaise: 500 }] });
    const bad = parseBankStatementCsv('utr,amount,value_date,type\nHDFCN0001,360.00,2026-12-01,withdrawal\n');
    expect(bad).toEqual({ ok: false, problems: [{ line: 2, message: 'type must be CR, DR, credit or debit' }] });
  });

  test('when amounts come as integer paise in amount_paise, then they are taken as they are', () => {
    const result = parseBankStatementCsv('utr,amount_paise,value_date\nUTR0003,97640,2026-11-03\n');
    expect(result).toMatchObject({ ok: true, lines: [{ amountPaise: 97_640 }] });
  });

  test('when lines are bad, then every bad line is reported by number and no line is returned', () => {
    const csv = ['utr,amount,value_date,narration', 'UTR0001,100.00,2026-11-03,ok', 'UTR0002,1.234,2026-11-03,x', 'UTR0003,100,2026-02-30,x', 'bad utr!,100,2026-11-03,x', 'UTR0004,-5,2026-11-03,x', 'UTR0005,5', 'UTR0001,100.00,2026-11-03,again'].join('\n');
    const result = parseBankStatementCsv(csv);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems.map((p) => p.line)).toEqual([3, 4, 5, 6, 7, 8]);
    expect(result.problems[0]!.message).toMatch(/amount "1.234"/);
    expect(result.problems[1]!.message).toMatch(/YYYY-MM-DD/);
    expect(result.problems[4]!.message).toMatch(/expected 4 fields/);
    expect(result.problems[5]!.message).toMatch(/duplicate of line 2/);
  });

  test('when the header lacks a column or the file is empty, then line 1 is reported', () => {
    expect(parseBankStatementCsv('utr,value_date\nUTR1,2026-11-03')).toEqual({ ok: false, problems: [{ line: 1, message: 'header lacks column(s): amount' }] });
    expect(parseBankStatementCsv('')).toMatchObject({ ok: false, problems: [{ line: 1 }] });
    expect(parseBankStatementCsv('utr,amount,value_date\n')).toMatchObject({ ok: false, problems: [{ line: 2 }] });
  });

  test('when rupees are converted, then no float is involved', () => {
    expect(rupeesToPaise('0.29')).toBe(29);
    expect(rupeesToPaise('1.1')).toBe(110);
    expect(rupeesToPaise('1,000.00')).toBeNull();
    expect(rupeesToPaise('12e3')).toBeNull();
  });

  test('when fields are quoted, then commas and doubled quotes survive; unbalanced quotes fail', () => {
    expect(splitCsvLine('a,"b,""c""",d')).toEqual(['a', 'b,"c"', 'd']);
    expect(splitCsvLine('a,"b')).toBeNull();
    expect(normaliseUtr('  abC12 ')).toBe('ABC12');
  });

  test('when transfer notes are an object, a JSON string or free text, then only a transaction_id is read', () => {
    expect(transactionIdFromNotes({ transaction_id: 'po-1' })).toBe('po-1');
    expect(transactionIdFromNotes('{"transaction_id":"po-2"}')).toBe('po-2');
    expect(transactionIdFromNotes('Beam me up Scotty.')).toBeNull();
    expect(transactionIdFromNotes([])).toBeNull();
  });

  test('when a report repeats a row across pages, then one row per entity + settlement is kept, the last one', () => {
    const rows = [
      { entityId: 'pay_1', settlementId: 'setl_1', n: 1 },
      { entityId: 'pay_1', settlementId: 'setl_2', n: 2 },
      { entityId: 'pay_1', settlementId: 'setl_1', n: 3 },
      { entityId: 'pay_2', settlementId: null, n: 4 },
      { entityId: 'pay_2', settlementId: null, n: 5 },
    ];
    expect(latestPerEntityAndSettlement(rows).map((r) => r.n)).toEqual([3, 2, 5]);
  });
});
