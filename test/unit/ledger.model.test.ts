import { buildLedger, type PayoutRow, type RailRows } from '../../src/ledger/model';

const NET = 8_100n;
const none: RailRows = { orderLines: [], otherLines: [], payouts: [], members: [], splits: [], employerDirect: [], reversals: [], settlementLines: [] };
const line = (n: number, route = 'direct_transfer') => ({ ledgerId: String(n), orderId: `ord_${n}`, vendorId: 'ven_a', employerId: 'emp_a', amountPaise: NET, route, paymentMethod: 'online', customerSharePaise: 1_000n });
const payout = (over: Partial<PayoutRow>): PayoutRow => ({
  id: 'p1', orderId: 'ord_1', batchId: null, vendorId: 'ven_a', status: 'settled', amountPaise: NET, providerTransferId: 'trf_1', externalReference: null, idempotencyKey: 'k1', cancelledBy: null, ...over,
});
const owedBy = (l: ReturnType<typeof buildLedger>) => Object.fromEntries(l.obligations.map((o) => [o.source, [o.cause, o.rail, o.amountPaise]]));
const paidBy = (l: ReturnType<typeof buildLedger>) => l.discharges.map((d) => [d.kind, d.instrument, d.state, d.amountPaise, d.pays]);

describe('the ledger model: obligations and discharges from the rails', () => {
  test('when an order is paid by its transfer, then its net is one obligation on the transfer rail, paid by one discharge', () => {
    const l = buildLedger({ ...none, orderLines: [line(1)], payouts: [payout({})] });
    expect(owedBy(l)).toEqual({ 'order:ord_1': ['order_net', 'transfer', NET] });
    expect(paidBy(l)).toEqual([['order_transfer', 'trf_1', 'paid', NET, ['order:ord_1']]]);
    expect(l.unplaced).toEqual([]);
  });

  test('when a transfer is reversed and the payout retried, then the reversal owes the net again and the second transfer pays that, not the net twice', () => {
    const l = buildLedger({
      ...none, orderLines: [line(1)], payouts: [payout({ providerTransferId: 'trf_2' })],
      reversals: [{ id: 'rvrsl_1', transferId: 'trf_1', payoutId: 'p1', amountPaise: NET, transferAmountPaise: NET, owedPaise: NET }],
    });
    expect(owedBy(l)).toEqual({ 'order:ord_1': ['order_net', 'transfer', NET], 'reversal:rvrsl_1': ['reversal', 'transfer', NET] });
    expect(paidBy(l)).toEqual([['order_transfer', 'trf_1', 'paid', NET, ['order:ord_1']], ['order_transfer', 'trf_2', 'paid', NET, ['reversal:rvrsl_1']]]);
  });

  test('when a batch pays two orders and is reversed whole, then each member is owed again on its own', () => {
    const l = buildLedger({
      ...none, orderLines: [line(1), line(2)],
      payouts: [payout({ status: 'batched', providerTransferId: null }), payout({ id: 'p2', orderId: 'ord_2', status: 'batched', providerTransferId: null }),
        payout({ id: 'pb', orderId: null, batchId: 'batch_1', status: 'parked', amountPaise: 2n * NET, providerTransferId: 'trf_b' })],
      members: [{ orderId: 'ord_1', batchId: 'batch_1', amountPaise: NET }, { orderId: 'ord_2', batchId: 'batch_1', amountPaise: NET }],
      reversals: [{ id: 'rvrsl_b', transferId: 'trf_b', payoutId: 'pb', amountPaise: 2n * NET, transferAmountPaise: 2n * NET, owedPaise: 2n * NET }],
    });
    expect(paidBy(l)).toEqual([['batch_transfer', 'trf_b', 'paid', 2n * NET, ['order:ord_1', 'order:ord_2']]]);
    expect(Object.keys(owedBy(l)).sort()).toEqual(['order:ord_1', 'order:ord_2', 'reversal:trf_b:ord_1', 'reversal:trf_b:ord_2']);
    expect(l.unplaced).toEqual([]);
  });

  test('when an order is paid by its own transfer AND by its batch\'s, or AND by a split, then the second instrument is not written and is named (the database would refuse it)', () => {
    const batched = buildLedger({
      ...none, orderLines: [line(1)],
      payouts: [payout({}), payout({ id: 'pb', orderId: null, batchId: 'batch_1', providerTransferId: 'trf_b' })],
      members: [{ orderId: 'ord_1', batchId: 'batch_1', amountPaise: NET }],
    });
    expect(batched.unplaced).toEqual(['batch_transfer trf_b would pay order:ord_1, which another instrument already pays']);
    expect(batched.discharges.map((d) => d.instrument)).toEqual(['trf_1']);
    const split = buildLedger({
      ...none, orderLines: [line(1)], payouts: [payout({})],
      splits: [{ orderId: 'ord_1', vendorId: 'ven_a', amountPaise: NET, status: 'processed', providerTransferId: 'trf_s' }],
    });
    expect(split.unplaced).toEqual(['split trf_s would pay order:ord_1, which another instrument already pays']);
  });

  test('when ops cancel a payout, then an adjustment with their reason and name nets the open net to nothing', () => {
    const l = buildLedger({ ...none, orderLines: [line(1)], payouts: [payout({ status: 'cancelled', providerTransferId: null, cancelledBy: { actor: 'key:ops (asha)', reason: 'not owed' } })] });
    expect(l.obligations.find((o) => o.cause === 'adjustment')).toMatchObject({ amountPaise: -NET, reason: 'not owed', actor: 'key:ops (asha)' });
    expect(paidBy(l)).toEqual([['adjustment', 'cancel:p1', 'paid', 0n, ['order:ord_1', 'cancel:p1']]]);
  });

  test('when a settlement line pays an order whose reversed transfer paid its net, then the line pays the reversal\'s obligation', () => {
    const l = buildLedger({
      ...none, orderLines: [line(1)], payouts: [payout({ status: 'offline' })],
      reversals: [{ id: 'rvrsl_1', transferId: 'trf_1', payoutId: 'p1', amountPaise: NET, transferAmountPaise: NET, owedPaise: NET }],
      settlementLines: [{ id: '1', vendorId: 'ven_a', reference: 'SETL000001', amountPaise: NET, status: 'paid', utr: 'UTR1', memberLedgerIds: ['1'] }],
    });
    expect(paidBy(l)).toEqual([['order_transfer', 'trf_1', 'paid', NET, ['order:ord_1']], ['settlement_line', 'SETL000001', 'paid', NET, ['reversal:rvrsl_1']]]);
    expect(owedBy(l)['reversal:rvrsl_1']).toEqual(['reversal', 'settlement_run', NET]);
  });

  test('when a transfer failed after acceptance and the payout was paid otherwise (by its batch, or marked paid by a bank reference), then the failed transfer pays nothing', () => {
    const member = buildLedger({
      ...none, orderLines: [line(1)],
      payouts: [payout({ providerTransferId: 'trf_failed', failedTransferIds: ['trf_failed'] }), payout({ id: 'pb', orderId: null, batchId: 'batch_1', providerTransferId: 'trf_b' })],
      members: [{ orderId: 'ord_1', batchId: 'batch_1', amountPaise: NET }],
    });
    expect(member.unplaced).toEqual([]);
    expect(paidBy(member)).toEqual([['batch_transfer', 'trf_b', 'paid', NET, ['order:ord_1']]]);
    const external = buildLedger({ ...none, orderLines: [line(1)], payouts: [payout({ providerTransferId: 'trf_failed', failedTransferIds: ['trf_failed'], externalReference: 'NEFT123' })] });
    expect(paidBy(external)).toEqual([['external_transfer', 'payout:p1:k1', 'paid', NET, ['order:ord_1']]]);
  });

  test('when ops cancel a batch, then one adjustment carries their decision for every member, not one per member with no one named', () => {
    const l = buildLedger({
      ...none, orderLines: [line(1), line(2)],
      payouts: [payout({ status: 'cancelled', providerTransferId: null }), payout({ id: 'p2', orderId: 'ord_2', status: 'cancelled', providerTransferId: null }),
        payout({ id: 'pb', orderId: null, batchId: 'batch_1', status: 'cancelled', providerTransferId: null, cancelledBy: { actor: 'key:ops (asha)', reason: 'vendor closed' } })],
      members: [{ orderId: 'ord_1', batchId: 'batch_1', amountPaise: NET }, { orderId: 'ord_2', batchId: 'batch_1', amountPaise: NET }],
    });
    expect(l.obligations.filter((o) => o.cause === 'adjustment')).toEqual([expect.objectContaining({ source: 'cancel:pb', amountPaise: -2n * NET, actor: 'key:ops (asha)', reason: 'vendor closed' })]);
    expect(l.unplaced).toEqual([]);
  });

  test('when a batch transfer is reversed in two parts that make the whole, then each member is owed again on its own, as for one whole reversal', () => {
    const l = buildLedger({
      ...none, orderLines: [line(1), line(2)],
      payouts: [payout({ status: 'batched', providerTransferId: null }), payout({ id: 'p2', orderId: 'ord_2', status: 'batched', providerTransferId: null }),
        payout({ id: 'pb', orderId: null, batchId: 'batch_1', status: 'parked', amountPaise: 2n * NET, providerTransferId: 'trf_b' })],
      members: [{ orderId: 'ord_1', batchId: 'batch_1', amountPaise: NET }, { orderId: 'ord_2', batchId: 'batch_1', amountPaise: NET }],
      reversals: [{ id: 'rvrsl_1', transferId: 'trf_b', payoutId: 'pb', amountPaise: 3_000n, transferAmountPaise: 2n * NET, owedPaise: 3_000n },
        { id: 'rvrsl_2', transferId: 'trf_b', payoutId: 'pb', amountPaise: 2n * NET - 3_000n, transferAmountPaise: 2n * NET, owedPaise: 2n * NET - 3_000n }],
    });
    expect(l.obligations.filter((o) => o.cause === 'reversal').map((o) => [o.source, o.amountPaise])).toEqual([['reversal:trf_b:ord_1', NET], ['reversal:trf_b:ord_2', NET]]);
  });
});
