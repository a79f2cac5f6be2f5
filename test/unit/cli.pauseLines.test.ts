/** What `payouts pause` prints about the requests a pause could not stop (issue 19 item 10). */
import { inFlightLines } from '../../src/cli/payouts/ops';

const request = (n: number, outcome: string | null = null) => ({
  orderId: `ord_${n}`, payoutId: `p-${n}`, amountPaise: 8_100, linkedAccountId: 'acc_Vendor00000001',
  claimedAt: '2026-12-01T10:00:00.000Z', requestSentAt: '2026-12-01T10:00:01.000Z', outcome,
});

describe('payouts pause: the requests already past the gate', () => {
  test('when none was in flight, then one line says nothing more leaves', () => {
    expect(inFlightLines({ count: 0, payouts: [] }, { tty: false })).toEqual(['no request was past the gate at the moment of the pause: nothing more leaves']);
  });

  test('when requests were in flight, then their count and each one with its amount, account, times and answer; a cut list says so', () => {
    expect(inFlightLines({ count: 3, payouts: [request(1), request(2, 'unknown')] }, { tty: false })).toEqual([
      '3 requests were already past the gate at the moment of the pause and may still land:',
      'ORDER\tPAYOUT\tAMOUNT\tACCOUNT\tCLAIMED\tSENT\tANSWER',
      'ord_1\tp-1\t₹81.00\tacc_Vendor00000001\t2026-12-01T15:30:00+05:30\t2026-12-01T15:30:01+05:30\tnone yet',
      'ord_2\tp-2\t₹81.00\tacc_Vendor00000001\t2026-12-01T15:30:00+05:30\t2026-12-01T15:30:01+05:30\tunknown',
      '(the oldest 2 of 3 are listed)',
    ]);
    expect(inFlightLines({ count: 1, payouts: [request(1)] }, { tty: true })[0]).toBe('1 request was already past the gate at the moment of the pause and may still land:');
  });
});
