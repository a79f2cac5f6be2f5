/** The finance CSV of recon exceptions (shared by the API export and the CLI): RFC 4180 quoting,
 * rupees with Indian grouping beside paise, the gateway references in their own columns. */
import { csvField, EXCEPTION_CSV_HEADER, exceptionReferences, exceptionsCsv, type ExceptionForReport } from '../../src/reports/exceptionsCsv';

const base: ExceptionForReport = {
  id: 7, day: '2026-09-02', status: 'open', class: 'mismatched', severity: 'high', reason: 'amount-mismatch',
  nextAction: 'Compare the gateway amount with our record; correct our record or dispute with Razorpay.',
  entityId: 'pay_AbCdEfGhIjKlMn', settlementId: 'setl_AbCdEfGhIjKlMn', orderId: 'ord_1', bankLineId: null,
  expectedPaise: 12_345_678, actualPaise: 12_345_600, details: {}, resolvedAt: null, resolvedBy: null, resolutionNote: null,
};

describe('recon exceptions CSV', () => {
  test('when exceptions are written, then there is one header row and each amount is in rupees with Indian grouping beside its paise', () => {
    const lines = exceptionsCsv([base]).split('\r\n');
    expect(lines).toEqual([
      EXCEPTION_CSV_HEADER.join(','),
      '7,2026-09-02,open,mismatched,high,amount-mismatch,"1,23,456.78",12345678,"1,23,456.00",12345600,-0.78,-78,,pay_AbCdEfGhIjKlMn,,,setl_AbCdEfGhIjKlMn,pay_AbCdEfGhIjKlMn,ord_1,,'
        + 'Compare the gateway amount with our record; correct our record or dispute with Razorpay.,,,',
      '',
    ]);
    expect(EXCEPTION_CSV_HEADER.slice(6, 20)).toEqual(['expected_rupees', 'expected_paise', 'actual_rupees', 'actual_paise', 'difference_rupees', 'difference_paise',
      'utr', 'payment_id', 'refund_id', 'transfer_id', 'settlement_id', 'entity_id', 'order_id', 'bank_line_id']);
  });

  test('when a field holds a comma, a quote or a line break, then it is quoted with its quotes doubled, and nothing else is', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('1,500.00')).toBe('"1,500.00"');
    expect(csvField('said "no"')).toBe('"said ""no"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField(null)).toBe('');
    const csv = exceptionsCsv([{ ...base, status: 'resolved', resolutionNote: 'checked with "Axis", twice\r\nthen booked', resolvedBy: 'key:finance (Priya)' }]);
    expect(csv.endsWith(',key:finance (Priya),"checked with ""Axis"", twice\r\nthen booked"\r\n')).toBe(true);
  });

  test('when a typed note starts like a formula, then a spreadsheet gets it as text', () => {
    expect(exceptionsCsv([{ ...base, resolutionNote: '=HYPERLINK("http://x")' }]).endsWith(`,"'=HYPERLINK(""http://x"")"\r\n`)).toBe(true);
  });

  test('when there are no exceptions, then the file is the header row alone', () => {
    expect(exceptionsCsv([])).toBe(`${EXCEPTION_CSV_HEADER.join(',')}\r\n`);
  });

  test('when references come from the entity id or the details, then each lands in its own kind', () => {
    expect(exceptionReferences({ entityId: 'rfnd_AbCdEfGhIjKlMn', settlementId: 'setl_S', details: { paymentId: 'pay_P' } }))
      .toEqual({ utr: null, paymentId: 'pay_P', refundId: 'rfnd_AbCdEfGhIjKlMn', transferId: null, settlementId: 'setl_S' });
    expect(exceptionReferences({ entityId: 'trf_T', settlementId: null, details: { sourcePaymentId: 'pay_Q', payout: 'uuid' } }))
      .toEqual({ utr: null, paymentId: 'pay_Q', refundId: null, transferId: 'trf_T', settlementId: null });
    expect(exceptionReferences({ entityId: null, settlementId: 'setl_S', details: { utr: 'AXISCN0001' } }))
      .toEqual({ utr: 'AXISCN0001', paymentId: null, refundId: null, transferId: null, settlementId: 'setl_S' });
    expect(exceptionReferences({ entityId: 'setl_X', settlementId: null, details: null })).toMatchObject({ settlementId: 'setl_X' });
  });
});
