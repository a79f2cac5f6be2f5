import { payoutIdOf } from '../../src/domain/payoutIds';

describe('payoutIdOf', () => {
  test('when asked twice for one order, then it gives the same version-5 UUID, and another order gets another', () => {
    const id = payoutIdOf('ord_ABC123');
    expect(id).toBe(payoutIdOf('ord_ABC123'));
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(payoutIdOf('ord_ABC124')).not.toBe(id);
    expect(id).toHaveLength(36); // Razorpay's idempotency key: 4–36 characters
  });

  test('when the namespace is fixed, then a known order keeps its known id (changing it would give every order a second payout)', () => {
    expect(payoutIdOf('ord_ABC123')).toBe('241a6830-3032-5dcd-ad69-07dd7be0455d');
    expect(payoutIdOf('batch_x')).not.toBe(payoutIdOf('ord_ABC123'));
  });
});
