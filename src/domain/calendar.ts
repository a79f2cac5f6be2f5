/** India Standard Time dates and the settlement calendar: a capture settles T+2 working days later,
 * where Sundays, the 2nd and 4th Saturdays and listed bank holidays are not working days (the
 * weekend rule is our modelling assumption; Razorpay documents only "bank holidays"). Dates are
 * ISO `YYYY-MM-DD` strings in IST; instants are stored in UTC. */


/** India has no daylight saving: IST is UTC+05:30 all year. */
export const IST_OFFSET_MS = (5 * 60 + 30) * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;
export const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

export type IsoDate = string;

/** Strict: the date must round-trip through Date, because V8 parses 2026-02-30 as March 2. */
export function assertIsoDate(date: string): void {
  if (!isIsoDate(date)) throw new RangeError(`not a YYYY-MM-DD date: ${date}`);
}

export function isIsoDate(date: string): boolean {
  if (!ISO_DATE.test(date)) return false;
  const ms = Date.parse(`${date}T00:00:00Z`);
  return !Number.isNaN(ms) && new Date(ms).toISOString().slice(0, 10) === date;
}

/** The IST calendar date of an instant. */
export function istDateOf(instant: Date): IsoDate {
  return new Date(instant.getTime() + IST_OFFSET_MS).toISOString().slice(0, 10);
}

/** [start, end) of an IST day as UTC instants. */
export function istDayBounds(date: IsoDate): { start: Date; end: Date } {
  assertIsoDate(date);
  const start = new Date(Date.parse(`${date}T00:00:00Z`) - IST_OFFSET_MS);
  return { start, end: new Date(start.getTime() + DAY_MS) };
}

export function addDays(date: IsoDate, days: number): IsoDate {
  assertIsoDate(date);
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

/** Every date from `from` to `to`, both included. */
export function datesBetween(from: IsoDate, to: IsoDate): IsoDate[] {
  const dates: IsoDate[] = [];
  for (let d = from; d <= to; d = addDays(d, 1)) dates.push(d);
  return dates;
}

export function isWorkingDay(date: IsoDate, holidays: ReadonlySet<IsoDate>): boolean {
  assertIsoDate(date);
  if (holidays.has(date)) return false;
  const day = new Date(`${date}T00:00:00Z`);
  const weekday = day.getUTCDay();
  if (weekday === 0) return false;
  if (weekday === 6) {
    const nth = Math.ceil(day.getUTCDate() / 7);
    if (nth === 2 || nth === 4) return false;
  }
  return true;
}

/** The date a capture made on `captureDate` (IST) is due to settle: T + `workingDays` working days. */
export function settlementDueDate(captureDate: IsoDate, holidays: ReadonlySet<IsoDate> = new Set(), workingDays = 2): IsoDate {
  let date = captureDate;
  let remaining = workingDays;
  while (remaining > 0) {
    date = addDays(date, 1);
    if (isWorkingDay(date, holidays)) remaining -= 1;
  }
  return date;
}
