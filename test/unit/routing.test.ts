import { routeFor, type RoutableOrder } from '../../src/domain/routing';

const subsidised: RoutableOrder = {
  settlementMode: 'platform_transfer', paymentMethod: 'online', subsidyPaise: 9_900, commissionPaise: 1_900, vendorNetPaise: 8_100, linkedAccountId: 'acc_VendorAaaaaaaaa1',
};

describe('routeFor (design.md §3)', () => {
  test('when a 99%-subsidised ₹100 order is paid online, then the vendor gets a ₹81 direct transfer', () => {
    expect(routeFor(subsidised)).toEqual({ kind: 'direct_transfer', amountPaise: 8_100, linkedAccountId: 'acc_VendorAaaaaaaaa1' });
  });

  test('when the order is paid from a wallet, then it is a direct transfer too', () => {
    expect(routeFor({ ...subsidised, paymentMethod: 'wallet' }).kind).toBe('direct_transfer');
    expect(routeFor({ ...subsidised, paymentMethod: 'wallet', subsidyPaise: 0 }).kind).toBe('direct_transfer');
  });

  test('when nothing is subsidised and the customer pays online, then the order carries a split', () => {
    expect(routeFor({ ...subsidised, subsidyPaise: 0 })).toEqual({ kind: 'split', amountPaise: 8_100, linkedAccountId: 'acc_VendorAaaaaaaaa1' });
  });

  test('when the customer pays cash, then the ledger owes subsidy − commission, negative when commission is larger', () => {
    expect(routeFor({ ...subsidised, paymentMethod: 'cash' })).toEqual({ kind: 'offline_ledger', amountPaise: 8_000, reason: 'cash' });
    expect(routeFor({ ...subsidised, paymentMethod: 'cash', subsidyPaise: 1_000 })).toEqual({ kind: 'offline_ledger', amountPaise: -900, reason: 'cash' });
  });

  test('when the pair is manual_offline or the vendor has no linked account, then the ledger owes the vendor net', () => {
    expect(routeFor({ ...subsidised, settlementMode: 'manual_offline' })).toEqual({ kind: 'offline_ledger', amountPaise: 8_100, reason: 'manual_offline' });
    expect(routeFor({ ...subsidised, linkedAccountId: null })).toEqual({ kind: 'offline_ledger', amountPaise: 8_100, reason: 'no_linked_account' });
  });

  test('when the pair is corporate_direct, then only an obligation is recorded', () => {
    expect(routeFor({ ...subsidised, settlementMode: 'corporate_direct', paymentMethod: 'cash' })).toEqual({ kind: 'corporate_direct', amountPaise: 8_100 });
  });

  test('when the net is below the ₹1 transfer minimum, then it accrues offline instead of blocking', () => {
    expect(routeFor({ ...subsidised, vendorNetPaise: 80 })).toEqual({ kind: 'offline_ledger', amountPaise: 80, reason: 'below_transfer_minimum' });
    expect(routeFor({ ...subsidised, vendorNetPaise: 100 }).kind).toBe('direct_transfer');
  });
});
