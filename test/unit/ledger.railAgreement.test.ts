import { driftsOf, vendorBalances } from '../../src/ledger/drift';
import { buildLedger, type RailRows } from '../../src/ledger/model';
import { railDifferences, railDisagreements, type RecordedDischarge, type RecordedObligation } from '../../src/ledger/railAgreement';

const NET = 8_100n;
const rows: RailRows = {
  orderLines: [{ ledgerId: '1', orderId: 'ord_1', vendorId: 'ven_a', employerId: 'emp_a', amountPaise: NET, route: 'direct_transfer', paymentMethod: 'online', customerSharePaise: 1_000n }],
  otherLines: [], members: [], splits: [], employerDirect: [], reversals: [], settlementLines: [],
  payouts: [{ id: 'p1', orderId: 'ord_1', batchId: null, vendorId: 'ven_a', status: 'settled', amountPaise: NET, providerTransferId: 'trf_1', externalReference: null, idempotencyKey: 'k1', cancelledBy: null }],
};
const net: RecordedObligation = { source: 'order:ord_1', vendorId: 'ven_a', cause: 'order_net', amountPaise: NET, rail: 'transfer', orderId: 'ord_1', batchId: null, payoutId: null, reason: null, actor: null };
const transfer: RecordedDischarge = { vendorId: 'ven_a', kind: 'order_transfer', instrument: 'trf_1', providerRef: 'trf_1', amountPaise: NET, state: 'paid', payoutId: 'p1', pays: ['order:ord_1'] };

describe('what the rails wrote against what their rows say', () => {
  test('when the rails wrote the order\'s net and its settled transfer, then the two ledgers agree', () => {
    expect(railDisagreements({ obligations: [net], discharges: [transfer] }, buildLedger(rows))).toEqual([]);
  });

  test('when a rail forgot its transfer, or wrote it still in flight, or wrote a net the rows do not owe, then each difference is named', () => {
    const built = buildLedger(rows);
    expect(railDisagreements({ obligations: [net], discharges: [] }, built)).toEqual([expect.stringMatching(/^discharge order_transfer trf_1 follows from the rails' rows, but no rail wrote it/)]);
    expect(railDisagreements({ obligations: [net], discharges: [{ ...transfer, state: 'in_flight' }] }, built)).toEqual([expect.stringMatching(/^discharge order_transfer trf_1 was written as .*"in_flight".*, the rails' rows say .*"paid"/)]);
    expect(railDisagreements({ obligations: [net, { ...net, source: 'order:ord_9', orderId: 'ord_9' }], discharges: [transfer] }, built))
      .toEqual([expect.stringMatching(/^obligation order:ord_9 was written by a rail, but the rails' rows do not show it/)]);
  });
});

describe('a vendor\'s drift between the ledger as written and as its rails\' rows say', () => {
  test('when both ledgers are the same, then no vendor drifts; when a rail forgot a settled transfer, then its vendor drifts by the net, with the difference named', () => {
    const built = buildLedger(rows);
    expect(driftsOf({ obligations: [net], discharges: [transfer] }, built, railDifferences({ obligations: [net], discharges: [transfer] }, built))).toEqual([]);
    const forgot = { obligations: [net], discharges: [] };
    expect(driftsOf(forgot, built, railDifferences(forgot, built))).toEqual([{
      vendorId: 'ven_a',
      written: { owedPaise: NET, paidPaise: 0n, inFlightPaise: 0n, openPaise: NET },
      derived: { owedPaise: NET, paidPaise: NET, inFlightPaise: 0n, openPaise: 0n },
      differences: [expect.stringMatching(/^discharge order_transfer trf_1 follows from the rails' rows, but no rail wrote it/)],
    }]);
  });

  test('when discharges pay obligations, then the balance counts paid and in flight apart, and open is what is left', () => {
    const b = vendorBalances(
      [{ vendorId: 'v', source: 'a', amountPaise: 100n }, { vendorId: 'v', source: 'b', amountPaise: 50n }, { vendorId: 'v', source: 'c', amountPaise: -30n }],
      [{ vendorId: 'v', state: 'paid', pays: ['a'] }, { vendorId: 'v', state: 'in_flight', pays: ['c'] }]);
    expect(b.get('v')).toEqual({ owedPaise: 120n, paidPaise: 100n, inFlightPaise: -30n, openPaise: 50n });
  });
});
