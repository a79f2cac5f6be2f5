import { maskAccountNumber, validateBankDetails } from '../../src/banking/details';

const GOOD = { accountNumber: '50100123456789', ifsc: 'HDFC0001234', beneficiaryName: "Dosa Corner & Sons Pvt. Ltd - D'Souza" };

const problemsOf = (input: unknown) => {
  const result = validateBankDetails(input);
  return result.ok ? [] : result.problems;
};

describe('bank details validation', () => {
  test('when the details are what a bank accepts, then they pass, the IFSC upper-cased and the name tidied', () => {
    expect(validateBankDetails(GOOD)).toEqual({ ok: true, details: GOOD });
    expect(validateBankDetails({ accountNumber: ' 123456789 ', ifsc: ' sbin0a1b2c3 ', beneficiaryName: '  Chai   Stall ' }))
      .toEqual({ ok: true, details: { accountNumber: '123456789', ifsc: 'SBIN0A1B2C3', beneficiaryName: 'Chai Stall' } });
    expect(validateBankDetails({ ...GOOD, accountNumber: '1'.repeat(18), beneficiaryName: 'A'.repeat(100) }).ok).toBe(true);
  });

  test.each([
    ['an account number of 8 digits', { accountNumber: '12345678' }, 'accountNumber'],
    ['an account number of 19 digits', { accountNumber: '1'.repeat(19) }, 'accountNumber'],
    ['an account number with a letter', { accountNumber: '12345678A0' }, 'accountNumber'],
    ['an account number with a space inside', { accountNumber: '1234 567890' }, 'accountNumber'],
    ['an IFSC without the 0 in fifth place', { ifsc: 'HDFC1001234' }, 'ifsc'],
    ['an IFSC too short', { ifsc: 'HDFC000123' }, 'ifsc'],
    ['an IFSC with digits in the bank code', { ifsc: 'HD1C0001234' }, 'ifsc'],
    ['an empty beneficiary name', { beneficiaryName: '   ' }, 'beneficiaryName'],
    ['a beneficiary name of 101 characters', { beneficiaryName: 'A'.repeat(101) }, 'beneficiaryName'],
    ['a beneficiary name with a character banks refuse', { beneficiaryName: 'Dosa Corner; DROP' }, 'beneficiaryName'],
    ['a number where a string belongs', { accountNumber: 123456789012 }, 'accountNumber'],
  ])('when given %s, then it is refused naming the field', (_what, change, field) => {
    const problems = problemsOf({ ...GOOD, ...change });
    expect(problems.map((p) => p.field)).toEqual([field]);
    expect(problems[0]!.message.length).toBeGreaterThan(10);
  });

  test('when fields are missing or unknown, then each is named', () => {
    expect(problemsOf({ ifsc: 'HDFC0001234' }).map((p) => p.field).sort()).toEqual(['accountNumber', 'beneficiaryName']);
    expect(problemsOf({ ...GOOD, upi: 'x@y' }).map((p) => p.field)).toEqual(['upi']);
    expect(problemsOf(undefined).map((p) => p.field)).toEqual(['body']);
  });

  test('when an account number is refused, then the problem does not echo it', () => {
    const problems = problemsOf({ ...GOOD, accountNumber: '98765432109876543210' });
    expect(JSON.stringify(problems)).not.toContain('98765432109876543210');
  });
});

describe('masking', () => {
  test('when an account number is masked, then only its last four digits show, and not its length', () => {
    expect(maskAccountNumber('50100123456789')).toBe('XXXXXX6789');
    expect(maskAccountNumber('123456789')).toBe('XXXXXX6789');
  });

  test('when something other than a validated account number is masked, then it refuses', () => {
    expect(() => maskAccountNumber('12')).toThrow(RangeError);
  });
});
