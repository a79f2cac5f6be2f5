import { formatIst, isoIst } from '../../src/domain/istTime';

describe('instants in IST', () => {
  test('a UTC instant reads as the IST wall clock with the zone named, to the second or the minute', () => {
    expect(formatIst('2026-12-07T04:35:57.123Z')).toBe('2026-12-07 10:05:57 IST');
    expect(formatIst(new Date('2026-12-07T04:35:57Z'), { seconds: false })).toBe('2026-12-07 10:05 IST');
  });

  test('after 18:30 UTC the IST day is the next one', () => {
    expect(formatIst('2026-12-31T18:30:00Z')).toBe('2027-01-01 00:00:00 IST');
    expect(isoIst('2026-12-31T18:29:59.999Z')).toBe('2026-12-31T23:59:59+05:30');
  });

  test('no instant is a dash for a person and null for a machine; text that is no instant is kept as it is', () => {
    expect([formatIst(null), formatIst(undefined), isoIst(null)]).toEqual(['—', '—', null]);
    expect([formatIst('soon'), isoIst('soon')]).toEqual(['soon', 'soon']);
  });

  test('the ISO form parses back to the same instant (milliseconds dropped)', () => {
    const iso = isoIst('2026-07-15T09:41:02.500Z')!;
    expect(iso).toBe('2026-07-15T15:11:02+05:30');
    expect(new Date(iso).toISOString()).toBe('2026-07-15T09:41:02.000Z');
  });
});
