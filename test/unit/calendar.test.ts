import { addDays, assertIsoDate, datesBetween, istDateOf, istDayBounds, isWorkingDay, settlementDueDate } from '../../src/domain/calendar';

describe('IST calendar and T+2 working days', () => {
  test('when an instant is just after IST midnight, then it belongs to the next IST day', () => {
    expect(istDateOf(new Date('2026-11-13T18:29:59Z'))).toBe('2026-11-13');
    expect(istDateOf(new Date('2026-11-13T18:30:00Z'))).toBe('2026-11-14');
    expect(istDayBounds('2026-11-14')).toEqual({ start: new Date('2026-11-13T18:30:00Z'), end: new Date('2026-11-14T18:30:00Z') });
  });

  test('when a day is a Sunday, a 2nd or 4th Saturday or a holiday, then it is not a working day', () => {
    expect(isWorkingDay('2026-11-08', new Set())).toBe(false); // Sunday
    expect(isWorkingDay('2026-11-14', new Set())).toBe(false); // 2nd Saturday
    expect(isWorkingDay('2026-11-28', new Set())).toBe(false); // 4th Saturday
    expect(isWorkingDay('2026-11-07', new Set())).toBe(true); // 1st Saturday
    expect(isWorkingDay('2026-11-21', new Set())).toBe(true); // 3rd Saturday
    expect(isWorkingDay('2026-11-10', new Set(['2026-11-10']))).toBe(false);
  });

  test('when captured on the Thursday before a 2nd Saturday, then it is due on the Monday', () => {
    // Thu 12 Nov → Fri 13 (1) → Sat 14 (2nd Sat) → Sun 15 → Mon 16 (2).
    expect(settlementDueDate('2026-11-12')).toBe('2026-11-16');
  });

  test('when a holiday falls in the window, then the due date moves past it', () => {
    expect(settlementDueDate('2026-11-09', new Set(['2026-11-10']))).toBe('2026-11-12');
  });

  test('when listing a range, then both ends are included', () => {
    expect(datesBetween('2026-11-29', '2026-12-01')).toEqual(['2026-11-29', '2026-11-30', '2026-12-01']);
    expect(addDays('2026-12-31', 1)).toBe('2027-01-01');
  });

  test('when a date does not exist (2026-02-30, 2026-13-01) or is only date-shaped, then it is refused; a leap day is accepted', () => {
    expect(() => assertIsoDate('2026-02-30')).toThrow(RangeError);
    expect(() => assertIsoDate('2026-04-31')).toThrow(RangeError);
    expect(() => assertIsoDate('2026-13-01')).toThrow(RangeError);
    expect(() => assertIsoDate('2026-2-3')).toThrow(RangeError);
    expect(() => assertIsoDate('2028-02-29')).not.toThrow();
    expect(() => assertIsoDate('2026-02-28')).not.toThrow();
  });
});
