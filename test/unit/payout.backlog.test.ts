/** The provider backlog's pure parts: the ETA at the configured write rate, the labelled series, and
 * the report ops read (bound, budget, the balance wall's amount in rupees). */
import { backlogEtaSeconds, backlogReport, backlogSeries, type PayoutBacklog } from '../../src/payouts/backlog';

const backlog = (over: { write?: Partial<PayoutBacklog['write']>; read?: Partial<PayoutBacklog['read']> } = {}): PayoutBacklog => ({
  write: { due: 0, claimed: 0, inFlight: 0, ...over.write },
  read: { unknown: 0, awaitingSettlement: 0, ...over.read },
});
const budget = { RAZORPAY_WRITE_RPS: 8, RAZORPAY_READ_RPS: 10, PAYOUT_BACKLOG_ETA_ALERT_SECONDS: 3_600 };

describe('the backlog ETA', () => {
  test('when 700,000 transfers are due at 8/s, then the ETA is their sending time, rounded up to the second', () => {
    expect(backlogEtaSeconds(backlog({ write: { due: 700_000 } }), 8)).toBe(87_500);
    expect(backlogEtaSeconds(backlog({ write: { due: 10 } }), 3)).toBe(4);
  });

  test('when payouts are claimed but not yet sent, then they count: they wait for the same write budget', () => {
    expect(backlogEtaSeconds(backlog({ write: { due: 40, claimed: 40 } }), 8)).toBe(10);
  });

  test('when requests are in flight or wait on reads (resolver, settlement polls), then they add nothing to the write ETA', () => {
    expect(backlogEtaSeconds(backlog({ write: { inFlight: 500 }, read: { unknown: 300, awaitingSettlement: 9_000 } }), 8)).toBe(0);
  });

  test('when the rate is a fraction of a call a second, then the ETA stretches accordingly; a rate of 0 is refused', () => {
    expect(backlogEtaSeconds(backlog({ write: { due: 3 } }), 0.5)).toBe(6);
    expect(() => backlogEtaSeconds(backlog({ write: { due: 3 } }), 0)).toThrow(RangeError);
  });
});

describe('the backlog series', () => {
  test('when the backlog is empty, then every class and state is still a series at 0 (an alert sees it clear)', () => {
    expect(backlogSeries(backlog())).toEqual([
      { class: 'write', state: 'due', count: 0 },
      { class: 'write', state: 'claimed', count: 0 },
      { class: 'write', state: 'in_flight', count: 0 },
      { class: 'read', state: 'unknown', count: 0 },
      { class: 'read', state: 'awaiting_settlement', count: 0 },
    ]);
  });
});

describe('the backlog report', () => {
  test('when the ETA passes the configured bound, then the report says so, with the budget it was computed at', () => {
    const over = backlogReport(backlog({ write: { due: 28_801 } }), null, budget);
    expect(over).toMatchObject({ etaSeconds: 3_601, etaAlertSeconds: 3_600, overEtaBound: true, budgetRps: { write: 8, read: 10 }, balanceWall: null });
    expect(backlogReport(backlog({ write: { due: 28_800 } }), null, budget).overEtaBound).toBe(false);
  });

  test('when the balance wall is up, then the amount it needs is in paise and in rupees with Indian digit grouping', () => {
    const wall = { since: '2026-12-02T08:00:00.000Z', code: 'BAD_REQUEST_TRANSFER_INSUFFICIENT_BALANCE', nextProbeAt: null, probePayoutId: null, neededPaise: 1_234_567_890, waitingPayouts: 42 };
    expect(backlogReport(backlog(), wall, budget).balanceWall).toEqual({
      since: wall.since, code: wall.code, nextProbeAt: null, probePayoutId: null, waitingPayouts: 42,
      needed: { paise: 1_234_567_890, rupees: '₹1,23,45,678.90' },
    });
  });
});
