import { ledgerRouteOf, offlineLedgerAmountPaise, onlineCollectionFor, payableRouteFor, priceOrder, type PairTerms, type PayableOrder } from '../../src/moneyin/orderRules';
import { ORDER_ID_PATTERN, newOrderId, refundIdOf, newTopupId } from '../../src/moneyin/ids';

const account = 'acc_VendorAaaaaaaaa1';
const platformTerms: PairTerms = { settlementMode: 'platform_transfer', linkedAccountId: account };

describe('priceOrder (design.md §2)', () => {
  test('when a ₹100 order is 99% subsidised at 19% commission, then commission is ₹19 and the vendor net ₹81', () => {
    expect(priceOrder({ totalPaise: 10_000, subsidyPaise: 9_900, customerSharePaise: 100 }, 1_900)).toEqual({
      totalPaise: 10_000, subsidyPaise: 9_900, customerSharePaise: 100, commissionBps: 1_900, commissionPaise: 1_900, vendorNetPaise: 8_100,
    });
  });

  test('when the shares do not add up to the total, then the order is refused', () => {
    expect(priceOrder({ totalPaise: 10_000, subsidyPaise: 9_900, customerSharePaise: 99 }, 1_900)).toBe('shares_do_not_add_up');
  });

  test('when the commission has half a paisa, then it rounds half up with integer arithmetic', () => {
    const priced = priceOrder({ totalPaise: 250, subsidyPaise: 0, customerSharePaise: 250 }, 1_900);
    expect(priced).toMatchObject({ commissionPaise: 48, vendorNetPaise: 202 }); // 47.5 → 48
  });
});

describe('onlineCollectionFor', () => {
  const price = (subsidy: number, customer: number) => priceOrder({ totalPaise: subsidy + customer, subsidyPaise: subsidy, customerSharePaise: customer }, 1_900);

  test('when the order is subsidised, then the customer pays only their share and the gateway order carries no split', () => {
    const priced = price(9_900, 100);
    if (typeof priced === 'string') throw new Error(priced);
    expect(onlineCollectionFor(priced, platformTerms)).toEqual({ kind: 'gateway_order', amountPaise: 100, split: null });
  });

  test('when the order is unsubsidised and the vendor has a linked account, then the gateway order carries the vendor net as a split', () => {
    const priced = price(0, 10_000);
    if (typeof priced === 'string') throw new Error(priced);
    expect(onlineCollectionFor(priced, platformTerms)).toEqual({ kind: 'gateway_order', amountPaise: 10_000, split: { account, amountPaise: 8_100 } });
  });

  test('when the unsubsidised vendor net is below ₹1, or the pair is offline, then there is no split', () => {
    const tiny = price(0, 110);
    if (typeof tiny === 'string') throw new Error(tiny);
    expect(onlineCollectionFor(tiny, platformTerms)).toEqual({ kind: 'gateway_order', amountPaise: 110, split: null });
    const priced = price(0, 10_000);
    if (typeof priced === 'string') throw new Error(priced);
    expect(onlineCollectionFor(priced, { settlementMode: 'manual_offline', linkedAccountId: account })).toMatchObject({ split: null });
    expect(onlineCollectionFor(priced, { settlementMode: 'platform_transfer', linkedAccountId: null })).toMatchObject({ split: null });
  });

  test('when the customer share is zero, then there is nothing to collect; when it is 1–99 paise, then Razorpay cannot take it', () => {
    const full = price(10_000, 0);
    const almost = price(9_950, 50);
    if (typeof full === 'string' || typeof almost === 'string') throw new Error('priced');
    expect(onlineCollectionFor(full, platformTerms)).toEqual({ kind: 'nothing_to_collect' });
    expect(onlineCollectionFor(almost, platformTerms)).toEqual({ kind: 'below_gateway_minimum' });
  });
});

describe('payableRouteFor and the offline ledger amount', () => {
  const order: PayableOrder = { paymentMethod: 'online', subsidyPaise: 9_900, commissionPaise: 1_900, vendorNetPaise: 8_100, splitTransferPaise: null, splitLinkedAccountId: null };

  test('when the gateway order carried a split, then the route is that split whatever the pair says now', () => {
    const split = { ...order, subsidyPaise: 0, splitTransferPaise: 8_100, splitLinkedAccountId: account };
    expect(payableRouteFor(split, { settlementMode: 'manual_offline', linkedAccountId: null })).toEqual({ kind: 'split', amountPaise: 8_100, linkedAccountId: account });
  });

  test('when an unsubsidised online order carried no split but the vendor is now transferable, then the platform pays it directly', () => {
    expect(payableRouteFor({ ...order, subsidyPaise: 0 }, platformTerms)).toEqual({ kind: 'direct_transfer', amountPaise: 8_100, linkedAccountId: account });
  });

  test('when a subsidised order is paid, then the vendor is owed its net by direct transfer and the ledger row says so', () => {
    const route = payableRouteFor(order, platformTerms);
    expect(route).toEqual({ kind: 'direct_transfer', amountPaise: 8_100, linkedAccountId: account });
    expect(ledgerRouteOf(route)).toBe('direct_transfer');
    expect(offlineLedgerAmountPaise(order)).toBe(8_100);
  });

  test('when the customer paid cash, then the ledger owes subsidy − commission, possibly negative', () => {
    const cash = { ...order, paymentMethod: 'cash' as const, subsidyPaise: 1_000 };
    expect(offlineLedgerAmountPaise(cash)).toBe(-900);
    expect(ledgerRouteOf(payableRouteFor(cash, platformTerms))).toBe('cash');
  });

  test('when the pair is corporate_direct, then an obligation is the route', () => {
    const route = payableRouteFor(order, { settlementMode: 'corporate_direct', linkedAccountId: account });
    expect(route).toEqual({ kind: 'corporate_direct', amountPaise: 8_100 });
    expect(ledgerRouteOf(route)).toBe('corporate_direct');
  });
});

describe('ids', () => {
  test('when ids are made, then they are a prefix and 14 alphanumerics', () => {
    expect(newOrderId()).toMatch(ORDER_ID_PATTERN);
    expect(newTopupId()).toMatch(/^top_[A-Za-z0-9]{14}$/);
    expect(refundIdOf('pay_A', 'order_cancelled')).toMatch(/^rfr_[A-Za-z0-9]{14}$/);
    // One request per payment and reason: the same pair always names the same receipt.
    expect(refundIdOf('pay_A', 'order_cancelled')).toBe(refundIdOf('pay_A', 'order_cancelled'));
    expect(refundIdOf('pay_A', 'duplicate_capture')).not.toBe(refundIdOf('pay_A', 'order_cancelled'));
  });
});
