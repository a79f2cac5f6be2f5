import { bankFileCsv } from '../../src/settlement/bankFile';
import { parseBankResponse } from '../../src/settlement/bankResponse';
import { planSettlement } from '../../src/settlement/netting';
import { batchIdForRun, lineReference, SETTLEMENT_REFERENCE } from '../../src/settlement/references';

describe('settlement netting', () => {
  const line = (ledgerId: number, vendorId: string, amountPaise: number) => ({ ledgerId, vendorId, amountPaise });

  it('pays each vendor its net once, both directions netted', () => {
    const plan = planSettlement([line(1, 'v1', 18_000), line(2, 'v1', -1_000), line(3, 'v2', 7_000)], () => true);
    expect(plan.payments.map((p) => [p.vendorId, p.amountPaise, p.members.map((m) => m.ledgerId)])).toEqual([['v1', 17_000, [1, 2]], ['v2', 7_000, [3]]]);
    expect(plan.skipped).toEqual([]);
  });

  it('never pays a negative or zero net, and leaves out a vendor it cannot pay', () => {
    const plan = planSettlement([line(1, 'owes', 2_000), line(2, 'owes', -5_000), line(3, 'even', 100), line(4, 'even', -100), line(5, 'nobank', 900)], (v) => v !== 'nobank');
    expect(plan.payments).toEqual([]);
    expect(plan.skipped).toEqual([
      { vendorId: 'even', netPaise: 0, lines: 2, reason: 'net_not_positive' },
      { vendorId: 'nobank', netPaise: 900, lines: 1, reason: 'no_bank_details' },
      { vendorId: 'owes', netPaise: -3_000, lines: 2, reason: 'net_not_positive' },
    ]);
  });

  it('refuses fractional paise', () => {
    expect(() => planSettlement([line(1, 'v', 10.5)], () => true)).toThrow(/integer paise/);
  });
});

describe('settlement references', () => {
  it('derives the batch id from the run and unique, bank-safe line references', () => {
    const batch = batchIdForRun('0195f1c4-run');
    expect(batch).toMatch(/^stb_[A-Za-z0-9]{14}$/);
    expect(batchIdForRun('0195f1c4-run')).toBe(batch);
    expect(lineReference(batch, 1)).toMatch(SETTLEMENT_REFERENCE);
    expect(lineReference(batch, 1)).not.toBe(lineReference(batch, 2));
    expect(() => lineReference(batch, 10_000)).toThrow();
  });
});

describe('the bank file', () => {
  it('writes rupees and paise without grouping, quoting what needs it', () => {
    expect(bankFileCsv([{ reference: 'STABCDEFGH0001', amountPaise: 12_345_678, beneficiaryName: 'Dosa, Corner', accountNumber: '50100012345678', ifsc: 'HDFC0001234' }]))
      .toBe('reference,beneficiary_name,account_number,ifsc,amount,amount_paise,narration\r\nSTABCDEFGH0001,"Dosa, Corner",50100012345678,HDFC0001234,123456.78,12345678,PAYOUTS STABCDEFGH0001\r\n');
  });
});

describe("the bank's response file", () => {
  const header = 'reference,status,utr,value_date,amount,reason';

  it('reads paid and failed rows', () => {
    const parsed = parseBankResponse(`${header}\r\nstabcdefgh0001,PAID,hdfc123456,2026-12-01,360.00,\r\nSTABCDEFGH0002,failed,,2026-12-01,70,account closed\r\n`);
    expect(parsed).toEqual({ ok: true, rows: [
      { lineNo: 2, reference: 'STABCDEFGH0001', status: 'paid', utr: 'hdfc123456', utrNormalised: 'HDFC123456', paidOn: '2026-12-01', amountPaise: 36_000 },
      { lineNo: 3, reference: 'STABCDEFGH0002', status: 'failed', reason: 'account closed', amountPaise: 7_000 },
    ] });
  });

  it('names every bad line and field, and yields nothing', () => {
    const parsed = parseBankResponse(`${header}\r\nSTABCDEFGH0001,paid,,2026-12-01,360.00,\r\nSTABCDEFGH0002,failed,,2026-12-01,1.234,\r\nNOTAREF,paid,HDFC123456,2026-02-30,1.00,\r\nSTABCDEFGH0001,failed,,2026-12-01,1.00,x\r\n`);
    expect(parsed.ok).toBe(false);
    const problems = parsed.ok ? [] : parsed.problems;
    expect(problems.map((p) => p.line)).toEqual([2, 3, 4, 5]);
    expect(problems[0]!.message).toContain('utr');
    expect(problems[1]!.message).toContain('amount "1.234"');
    expect(problems[2]!.message).toMatch(/reference.*value_date|value_date.*reference/s);
    expect(problems[3]!.message).toContain('also on line 2');
  });

  it('refuses a file without the columns', () => {
    expect(parseBankResponse('reference,utr\r\nX,Y\r\n')).toEqual({ ok: false, problems: [{ line: 1, message: 'header lacks column(s): status, amount' }] });
  });
});
