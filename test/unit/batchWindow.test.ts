import { batchIdOf, cutoffOfDay, joinsBatch, nextWindow, windowAt } from '../../src/domain/batchWindow';

const at = (iso: string) => new Date(iso);

describe('payout schedules: batch windows in IST', () => {
  test('when an order is paid inside an IST hour, then its hourly window is that hour [start, cutoff)', () => {
    // 12:59:59.999 IST = 07:29:59.999Z
    const w = windowAt('hourly', at('2026-12-02T07:29:59.999Z'));
    expect([w.start.toISOString(), w.cutoff.toISOString()]).toEqual(['2026-12-02T06:30:00.000Z', '2026-12-02T07:30:00.000Z']);
  });

  test('when an order is paid exactly at a cutoff, then it belongs to the window that cutoff opens, never to both', () => {
    const before = windowAt('hourly', at('2026-12-02T07:29:59.999Z'));
    const atCutoff = windowAt('hourly', at('2026-12-02T07:30:00.000Z'));
    expect(atCutoff.start.toISOString()).toBe(before.cutoff.toISOString());
    expect(batchIdOf({ employerId: 'e', vendorId: 'v' }, atCutoff)).not.toBe(batchIdOf({ employerId: 'e', vendorId: 'v' }, before));
    const daily = windowAt('daily', at('2026-12-02T12:30:00.000Z'), '18:00'); // 18:00 IST
    expect([daily.start.toISOString(), daily.cutoff.toISOString()]).toEqual(['2026-12-02T12:30:00.000Z', '2026-12-03T12:30:00.000Z']);
    const dailyBefore = windowAt('daily', at('2026-12-02T12:29:59.999Z'), '18:00');
    expect(dailyBefore.cutoff.toISOString()).toBe('2026-12-02T12:30:00.000Z');
  });

  test('when a daily cutoff is early in the IST morning, then the window crosses the UTC date line correctly', () => {
    // 02:00 IST on 3 Dec is 20:30Z on 2 Dec.
    const w = windowAt('daily', at('2026-12-02T20:00:00.000Z'), '02:00');
    expect([w.start.toISOString(), w.cutoff.toISOString()]).toEqual(['2026-12-01T20:30:00.000Z', '2026-12-02T20:30:00.000Z']);
  });

  test('when the window after one is asked for, then it starts at its cutoff and is as long', () => {
    const w = windowAt('daily', at('2026-12-02T00:00:00.000Z'), '09:30');
    const n = nextWindow(w, '09:30');
    expect(n.start.toISOString()).toBe(w.cutoff.toISOString());
    expect(n.cutoff.getTime() - n.start.getTime()).toBe(24 * 3_600_000);
  });

  test('when batch ids are derived, then every joiner of a window names the same id, at most 36 characters, and other pairs or schedules differ', () => {
    const w = windowAt('hourly', at('2026-12-02T07:00:00.000Z'));
    const id = batchIdOf({ employerId: 'emp_a', vendorId: 'ven_b' }, w);
    expect(id).toMatch(/^batch_[0-9a-f]{30}$/);
    expect(id.length).toBeLessThanOrEqual(36);
    expect(batchIdOf({ employerId: 'emp_a', vendorId: 'ven_b' }, windowAt('hourly', at('2026-12-02T07:10:00.000Z')))).toBe(id);
    expect(batchIdOf({ employerId: 'emp_a', vendorId: 'ven_c' }, w)).not.toBe(id);
    expect(batchIdOf({ employerId: 'emp_a', vendorId: 'ven_b' }, { ...w, schedule: 'daily' })).not.toBe(id);
  });

  test('when a cutoff time is not a time of day, then it is refused', () => {
    expect(cutoffOfDay('18:00:00')).toBe(18 * 3_600_000);
    expect(() => cutoffOfDay('24:00')).toThrow(RangeError);
    expect(() => cutoffOfDay('6pm')).toThrow(RangeError);
  });

  test('when a scheduled pair\'s payout is open and unsent, then it joins its batch, unless the provider may already know it (a restored database) or it is not open, sent, or per order', () => {
    const open = { schedule: 'hourly' as const, status: 'pending', keySent: false, providerMayKnow: false };
    expect(joinsBatch(open)).toBe(true);
    expect(joinsBatch({ ...open, status: 'failed', schedule: 'daily' })).toBe(true);
    expect(joinsBatch({ ...open, providerMayKnow: true })).toBe(false);
    expect(joinsBatch({ ...open, keySent: true })).toBe(false);
    expect(joinsBatch({ ...open, status: 'accepted' })).toBe(false);
    expect(joinsBatch({ ...open, schedule: 'per_order' })).toBe(false);
    expect(joinsBatch({ ...open, schedule: null })).toBe(false);
  });
});
