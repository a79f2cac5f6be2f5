import { campaignPlan } from '../campaign/main';
import { ORDER_KINDS, planDigest } from '../campaign/plan';
import { checkRails } from '../campaign/railChecker';
import type { OfflineSettlement } from '../campaign/offline';
import { checkOrders, tableByRoute, type DbLedger, type ProviderLedger } from '../campaign/checker';
import type { OrderHistory, World } from '../campaign/workload';
import type { RzpRefund, RzpTransfer } from '../../src/gateway/types';

describe('the fault campaign plan', () => {
  test('the same seed gives the same plan (workload and fault schedule); another seed another one', () => {
    const a = campaignPlan({ orders: 100, seed: 42 });
    const b = campaignPlan({ orders: 100, seed: 42 });
    expect(b).toEqual(a);
    expect(planDigest(b)).toBe(planDigest(a));
    const c = campaignPlan({ orders: 100, seed: 43 });
    expect(planDigest(c)).not.toBe(planDigest(a));
    expect(c.orders.map((o) => o.kind)).not.toEqual(a.orders.map((o) => o.kind));
  });

  test('a 100-order plan covers every route and every fault the issue lists, inside the workload', () => {
    const plan = campaignPlan({ orders: 100, seed: 5 });
    expect(new Set(plan.orders.map((o) => o.kind))).toEqual(new Set(ORDER_KINDS));
    expect(new Set(plan.faults.map((f) => f.kind))).toEqual(new Set([
      'api_faults', 'webhook_fault', 'webhook_delivery_off', 'webhook_target_down', 'kill_worker', 'terminate_runs',
      'restart_temporal', 'restart_postgres', 'kill_switch', 'kill_switch_flutter', 'balance_zero', 'suspend_account',
    ]));
    const api = plan.faults.find((f) => f.kind === 'api_faults')!;
    if (api.kind !== 'api_faults') throw new Error('unreachable');
    const kindsOnTransfers = new Set(api.rules.filter((r) => r.endpoint === 'transfers.create').map((r) => r.fault.kind));
    expect(kindsOnTransfers).toEqual(new Set(['server_error_before', 'drop_after_commit', 'delay_after_commit', 'rate_limited', 'latency']));
    for (const endpoint of ['orders.create', 'payments.fetch', 'refunds.create', 'transfers.list']) expect(api.rules.some((r) => r.endpoint === endpoint)).toBe(true);
    expect(plan.faults.filter((f) => f.kind === 'kill_worker').length).toBeGreaterThanOrEqual(3);
    for (const f of plan.faults) expect(f.atMs).toBeLessThan(plan.durationMs);
    expect(plan.orders.every((o) => o.atMs < plan.durationMs && o.totalPaise === o.subsidyPaise + (o.totalPaise - o.subsidyPaise))).toBe(true);
    // One captured-not-settled per forged capture: its payment never reaches a settlement.
    const forged = plan.orders.filter((o) => o.kind === 'forged_capture').length;
    expect(forged).toBeGreaterThan(0);
    expect(plan.planted.map((p) => p.reason).sort()).toEqual(['adjustment', ...Array<string>(forged).fill('captured-not-settled'), 'on-hold']);
  });

  test('a cluster plan adds the cluster\'s faults and every engine fault: a failover, a rolling deploy, a rollback of 10 s or more clear of the rest', () => {
    const plan = campaignPlan({ orders: 1000, seed: 20261203, cluster: true });
    const kinds = plan.faults.map((f) => f.kind);
    for (const k of ['kill_temporal_service', 'restart_temporal_service', 'postgres_failover', 'rolling_deploy', 'db_rollback'] as const) expect(kinds).toContain(k);
    const rollback = plan.faults.find((f) => f.kind === 'db_rollback')!;
    if (rollback.kind !== 'db_rollback') throw new Error('unreachable');
    expect(rollback.lostMs).toBeGreaterThanOrEqual(10_000);
    const failover = plan.faults.find((f) => f.kind === 'postgres_failover')!;
    expect(Math.abs(failover.atMs - rollback.atMs)).toBeGreaterThan(8_000);
    expect(planDigest(plan)).not.toBe(planDigest(campaignPlan({ orders: 1000, seed: 20261203 })));
  });

  test('no finance round is planned across the restore (seed 20261210 --cluster planned its late round inside the lost window): a bank file recorded after a restore names lines the database forgot', () => {
    for (const seed of [20261210, 20261203, 7, 12]) {
      const plan = campaignPlan({ orders: 1000, seed, cluster: true });
      const rollback = plan.faults.find((f) => f.kind === 'db_rollback')!;
      if (rollback.kind !== 'db_rollback') throw new Error('unreachable');
      for (const round of plan.settlements) {
        expect(round.atMs <= rollback.atMs - 20_000 || round.atMs >= rollback.atMs + rollback.backlogMs + rollback.lostMs + 10_000).toBe(true);
      }
    }
  });

  test('the webhook target stays down longer than the sandbox keeps retrying, so some events are given up for good', () => {
    const plan = campaignPlan({ orders: 100, seed: 9 });
    const down = plan.faults.find((f) => f.kind === 'webhook_target_down')!;
    expect(down.kind === 'webhook_target_down' && down.forMs).toBeGreaterThan(50 * (2 ** 7 - 1));
  });
});

describe('the campaign checker', () => {
  const world: World = {
    tag: 't', employers: { main: 'emp_m', corporate: 'emp_c', offline: 'emp_o' },
    vendors: { direct_a: 'v_a', direct_b: 'v_b', direct_c: 'v_c', split: 'v_s', nolink: 'v_n', flaky: 'v_f', shut: 'v_x', batched: 'v_h' },
    accounts: { direct_a: 'acc_a', direct_b: 'acc_b', direct_c: 'acc_c', split: 'acc_s', nolink: null, flaky: 'acc_f', shut: 'acc_x', batched: 'acc_h' },
  };
  const plan = campaignPlan({ orders: 100, seed: 11 });
  const direct = { ...plan.orders.find((o) => o.kind === 'direct_99')!, vendor: 'direct_a' as const };
  const history: OrderHistory = { planned: direct, orderId: 'ord_1', gatewayOrderId: 'order_1', vendorNetPaise: 8_100, paymentIds: ['pay_1'], retries: 0, error: null };
  const transfer = (id: string, over: Partial<RzpTransfer> = {}): RzpTransfer => ({
    id, entity: 'transfer', status: 'processed', source: 'acc_platform', recipient: 'acc_a', amount: 8_100, currency: 'INR', amount_reversed: 0,
    notes: { transaction_id: 'p1', order_id: 'ord_1' }, created_at: 0, ...over,
  } as RzpTransfer);
  const db = (payoutStatus = 'settled', transferId: string | null = 'trf_1'): DbLedger => ({
    orders: new Map([['ord_1', { status: 'paid', vendorId: 'v_a', vendorNetPaise: 8_100, subsidyPaise: 9_900, commissionPaise: 1_900, totalPaise: 10_000 }]]),
    payouts: new Map([['ord_1', { status: payoutStatus, amountPaise: 8_100, providerTransferId: transferId, linkedAccountId: 'acc_a', lastCode: null }]]),
    splits: new Map(), ledger: new Map([['ord_1', { route: 'direct_transfer', amountPaise: 8_100 }]]), openLedger: new Set(), obligations: new Map(), refunds: [],
    settlementMembers: [], paidSettlementLines: [], outsideRefunds: [], clawbacks: new Map(), reversalLines: new Map(), batchOf: new Map(), batches: new Map(),
  });
  const provider = (transfers: RzpTransfer[]): ProviderLedger => ({ transfers, refunds: [], heardRefundIds: new Set(), platformAccountSource: (t) => t.source === 'acc_platform' });

  test('one live transfer of the net to the right account, recorded on the payout, passes', () => {
    const result = checkOrders([history], world, db(), provider([transfer('trf_1')]));
    expect(result.violations).toEqual([]);
    expect(tableByRoute(result.verdicts)).toEqual([{ route: 'direct_99', orders: 1, transfers: 1, duplicates: 0, lost: 0, stuck: 0, parked: 0, disagreements: 0 }]);
  });

  test('a second live transfer for the order is a duplicate, whatever PostgreSQL says', () => {
    const result = checkOrders([history], world, db(), provider([transfer('trf_1'), transfer('trf_2')]));
    expect(result.verdicts[0]!.duplicates).toBe(1);
    expect(result.violations.join('\n')).toMatch(/2 live transfers/);
  });

  test('a settled payout with no transfer at the provider is lost; one still processing is stuck', () => {
    const lost = checkOrders([history], world, db(), provider([]));
    expect(lost.verdicts[0]!.lost).toBe(true);
    const stuck = checkOrders([history], world, db('processing', null), provider([]));
    expect(stuck.verdicts[0]!.stuck).toBe(true);
    expect(stuck.verdicts[0]!.lost).toBe(false);
  });

  test('a transfer to the wrong account or of the wrong amount is a disagreement; one for no order of the campaign is unattributed', () => {
    const wrong = checkOrders([history], world, db(), provider([transfer('trf_1', { amount: 8_000 })]));
    expect(wrong.verdicts[0]!.disagreements.join('\n')).toMatch(/8000 ≠ vendor net 8100/);
    const stray = checkOrders([history], world, db(), provider([transfer('trf_1'), transfer('trf_9', { notes: { transaction_id: 'x', order_id: 'ord_other' } })]));
    expect(stray.unattributed.map((t) => t.id)).toEqual(['trf_9']);
    expect(stray.violations.join('\n')).toMatch(/trf_9 .* belongs to no order/);
  });

  describe('a transfer reversed from the Dashboard, and a restore that forgot the reversal', () => {
    const reversedPlan = { ...plan.orders.find((o) => o.kind === 'reversed_transfer')!, vendor: 'direct_a' as const };
    const reversedHistory = (): OrderHistory => ({ ...history, planned: reversedPlan, reversed: { transferId: 'trf_1', reversalId: 'rvrsl_1', seen: false } });
    const reversedDb = (status: string, lastCode: string | null): DbLedger => {
      const ledger = db(status, 'trf_1');
      ledger.payouts.set('ord_1', { ...ledger.payouts.get('ord_1')!, lastCode });
      return ledger;
    };
    const reversedTransfer = transfer('trf_1', { status: 'reversed', amount_reversed: 8_100 });

    test('rows that never heard of it stay settled under the reversed transfer, and recon must raise it', () => {
      const h = reversedHistory();
      const result = checkOrders([h], world, reversedDb('settled', null), provider([reversedTransfer]));
      expect(result.violations).toEqual([]);
      expect(h.reversed!.seen).toBe(false);
    });

    test('rows that learnt it later (the payout written again after the restore found its transfer reversed by its note) wait in ops\' queue under it', () => {
      const h = reversedHistory();
      const result = checkOrders([h], world, reversedDb('parked', 'TRANSFER_REVERSED'), provider([reversedTransfer]));
      expect(result.violations).toEqual([]);
      expect(result.verdicts[0]!.parked).toBe(true);
      expect(h.reversed!.seen).toBe(true); // so recon must not raise it
    });

    test('parked for another reason, or settled by another transfer, is still a violation', () => {
      const other = checkOrders([reversedHistory()], world, reversedDb('parked', 'BAD_REQUEST_ACCOUNT_SUSPENDED'), provider([reversedTransfer]));
      expect(other.violations.join('\n')).toMatch(/a reversal our rows never heard of, yet the payout is parked/);
    });
  });

  describe('orders of a pair paid hourly (one transfer per batch)', () => {
    const batchedPlan = { ...plan.orders.find((o) => o.kind === 'batched')!, vendor: 'batched' as const };
    const member = (orderId: string): OrderHistory => ({ planned: { ...batchedPlan, totalPaise: 10_000, subsidyPaise: 9_900 }, orderId, gatewayOrderId: `order_${orderId}`, vendorNetPaise: 8_100, paymentIds: [], retries: 0, error: null });
    const batchDb = (over: { payout?: { status: string; amountPaise: number; providerTransferId: string | null }; memberStatus?: string } = {}): DbLedger => {
      const ids = ['ord_h1', 'ord_h2'];
      return {
        ...db(),
        orders: new Map(ids.map((id) => [id, { status: 'paid', vendorId: 'v_h', vendorNetPaise: 8_100, subsidyPaise: 9_900, commissionPaise: 1_900, totalPaise: 10_000 }])),
        payouts: new Map(ids.map((id) => [id, { status: over.memberStatus ?? 'settled', amountPaise: 8_100, providerTransferId: null, linkedAccountId: 'acc_h', lastCode: null }])),
        ledger: new Map(ids.map((id) => [id, { route: 'direct_transfer', amountPaise: 8_100 }])),
        batchOf: new Map(ids.map((id) => [id, 'batch_1'])),
        batches: new Map([['batch_1', { status: 'closed', members: ids, payout: { status: 'settled', amountPaise: 16_200, providerTransferId: 'trf_b1', linkedAccountId: 'acc_h', ...over.payout } }]]),
      };
    };
    const batchTransfer = (id: string, over: Partial<RzpTransfer> = {}) => transfer(id, { recipient: 'acc_h', amount: 16_200, notes: { transaction_id: 'pb', batch_id: 'batch_1' }, ...over });
    const check = (ledger: DbLedger, transfers: RzpTransfer[]) => checkOrders([member('ord_h1'), member('ord_h2')], world, ledger, provider(transfers));

    test('one live transfer of the sum, held by the batch\'s payout, pays every member once', () => {
      const result = check(batchDb(), [batchTransfer('trf_b1')]);
      expect(result.violations).toEqual([]);
      expect(result.unattributed).toEqual([]);
      expect(result.verdicts.map((v) => v.liveTransfers)).toEqual([1, 1]);
    });

    test('a second transfer for the batch is a duplicate for every member; a transfer short of the sum is a disagreement', () => {
      const twice = check(batchDb(), [batchTransfer('trf_b1'), batchTransfer('trf_b2')]);
      expect(twice.verdicts.map((v) => v.duplicates)).toEqual([1, 1]);
      const short = check(batchDb({ payout: { status: 'settled', amountPaise: 8_100, providerTransferId: 'trf_b1' } }), [batchTransfer('trf_b1', { amount: 8_100 })]);
      expect(short.violations.join('\n')).toMatch(/batch batch_1 pays 8100, its 2 orders' nets add up to 16200/);
      expect(short.violations.join('\n')).toMatch(/transfer trf_b1 of 8100 ≠ the sum of batch batch_1's nets, 16200/);
    });

    test('a refund made while the batch was open and recorded as owed back is a violation when its webhook reached us, not when every delivery was given up (only the sweep could find it, maybe after the batch paid)', () => {
      const refundPlan = { ...plan.orders.find((o) => o.kind === 'batch_refund_before')!, vendor: 'batched' as const, totalPaise: 10_000, subsidyPaise: 9_900 };
      const refunded = (): OrderHistory => ({ ...member('ord_h1'), planned: refundPlan, paymentIds: ['pay_h1'], batch: { batchId: 'batch_1', refundedWhile: 'open', refundId: 'rfnd_1' } });
      const ledger = { ...batchDb(), outsideRefunds: [{ id: 'rfnd_1', orderId: 'ord_h1', action: 'owed_back', clawbackPaise: 8_100, status: 'processed' }] };
      const refund = { id: 'rfnd_1', entity: 'refund', payment_id: 'pay_h1', amount: 100, status: 'processed' } as RzpRefund;
      const run = (heard: boolean) => checkOrders([refunded(), member('ord_h2')], world, ledger,
        { ...provider([batchTransfer('trf_b1')]), refunds: [refund], heardRefundIds: new Set(heard ? ['rfnd_1'] : []) }).violations.join('\n');
      expect(run(true)).toMatch(/refunded from the Dashboard while its batch batch_1 was open, yet recorded as owed_back/);
      expect(run(false)).not.toMatch(/was open, yet recorded as owed_back/);
    });

    test('a member still waiting in its batch with no transfer is stuck, not lost', () => {
      const waiting = check(batchDb({ memberStatus: 'batched', payout: { status: 'pending', amountPaise: 16_200, providerTransferId: null } }), []);
      expect(waiting.verdicts.every((v) => v.stuck && !v.lost)).toBe(true);
    });
  });

  describe('across rails (transfers and offline settlement together)', () => {
    const cashPlan = { ...plan.orders.find((o) => o.kind === 'cash')!, vendor: 'nolink' as const };
    const cash: OrderHistory = { planned: cashPlan, orderId: 'ord_2', gatewayOrderId: null, vendorNetPaise: 9_000, paymentIds: [], retries: 0, error: null };
    const settlement = (over: Partial<OfflineSettlement> = {}): OfflineSettlement => ({ rounds: 1, paid: [{ reference: 'STAAAAAAAA0001', vendorId: 'v_n', amountPaise: 500, utr: 'UTR00001', paidOn: '2026-12-01' }], failed: [], carriedForward: [], problems: [], ...over });
    const offlineDb = (over: Partial<DbLedger> = {}): DbLedger => ({
      ...db(),
      orders: new Map([...db().orders, ['ord_2', { status: 'paid', vendorId: 'v_n', vendorNetPaise: 9_000, subsidyPaise: 2_400, commissionPaise: 1_900, totalPaise: 10_000 }]]),
      ledger: new Map([...db().ledger, ['ord_2', { route: 'cash', amountPaise: 500 }]]),
      settlementMembers: [{ orderId: 'ord_2', reference: 'STAAAAAAAA0001', status: 'paid', vendorId: 'v_n', amountPaise: 500 }],
      paidSettlementLines: [{ reference: 'STAAAAAAAA0001', vendorId: 'v_n', amountPaise: 500, utr: 'UTR00001', membersPaise: 500 }],
      ...over,
    });
    const verdicts = (ledger: DbLedger, transfers = [transfer('trf_1')]) => checkOrders([history, cash], world, ledger, provider(transfers)).verdicts;

    test('a cash order paid by one settlement line and a direct order by one transfer pass', () => {
      expect(checkRails(verdicts(offlineDb()), offlineDb(), settlement()).violations).toEqual([]);
    });

    test('an order paid by transfer and also by a settlement line is paid twice', () => {
      const both = offlineDb({ settlementMembers: [...offlineDb().settlementMembers, { orderId: 'ord_1', reference: 'STAAAAAAAA0002', status: 'paid', vendorId: 'v_a', amountPaise: 8_100 }] });
      expect(checkRails(verdicts(both), both, settlement()).violations.join('\n')).toMatch(/ord_1 \(direct_99\): paid twice — by transfer and by settlement line STAAAAAAAA0002/);
    });

    test('an offline line still owed after the last round is a violation unless its vendor was carried forward', () => {
      const open = offlineDb({ settlementMembers: [], paidSettlementLines: [], outsideRefunds: [], clawbacks: new Map(), openLedger: new Set(['ord_2']) });
      expect(checkRails(verdicts(open), open, settlement({ paid: [] })).violations.join('\n')).toMatch(/owed offline .* not carried forward/);
      expect(checkRails(verdicts(open), open, settlement({ paid: [], carriedForward: ['v_n'] })).violations).toEqual([]);
    });

    test('a paid line finance did not record, or one worth more than its members, is a violation', () => {
      const unrecorded = checkRails(verdicts(offlineDb()), offlineDb(), settlement({ paid: [] }));
      expect(unrecorded.violations.join('\n')).toMatch(/STAAAAAAAA0001 is paid, but finance never recorded it/);
      const short = offlineDb({ paidSettlementLines: [{ reference: 'STAAAAAAAA0001', vendorId: 'v_n', amountPaise: 500, utr: 'UTR00001', membersPaise: 400 }] });
      expect(checkRails(verdicts(short), short, settlement()).violations.join('\n')).toMatch(/pays 500, its offline lines add up to 400/);
    });
  });
});
