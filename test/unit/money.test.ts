import { commissionPaise, formatRupees, vendorNetPaise } from '../../src/domain/money';

describe('money', () => {
  test('when ₹100 carries 19% commission, then the vendor net is ₹81 whatever the subsidy', () => {
    expect(commissionPaise(10_000, 1_900)).toBe(1_900);
    expect(vendorNetPaise(10_000, 1_900)).toBe(8_100);
  });

  test('when the commission has a half paisa, then it rounds half up in integers', () => {
    expect(commissionPaise(105, 1_000)).toBe(11); // 10.5 → 11
    expect(commissionPaise(104, 1_000)).toBe(10); // 10.4 → 10
    expect(commissionPaise(1, 5_000)).toBe(1); // 0.5 → 1
  });

  test('when the total is huge, then the arithmetic stays exact', () => {
    const total = Number.MAX_SAFE_INTEGER - 1;
    expect(commissionPaise(total, 10_000)).toBe(total);
    expect(commissionPaise(total, 1)).toBe(Number((BigInt(total) + 5_000n) / 10_000n));
  });

  test('when the amount or rate is not an integer, then it is refused', () => {
    expect(() => commissionPaise(100.5, 100)).toThrow(RangeError);
    expect(() => commissionPaise(100, 10_001)).toThrow(RangeError);
    expect(() => commissionPaise(100, 1.5)).toThrow(RangeError);
  });

  test('when paise are displayed, then they show as rupees', () => {
    expect(formatRupees(8_100)).toBe('₹81.00');
    expect(formatRupees(-81)).toBe('-₹0.81');
    expect(formatRupees(12_345_678)).toBe('₹1,23,456.78');
  });
});
