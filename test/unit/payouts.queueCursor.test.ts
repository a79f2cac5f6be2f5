/** The human queue's cursor (`GET /ops/payouts?after=…`): only what the listing hands out passes;
 * anything PostgreSQL would refuse is a 400 before any query (issue 21, item 12). */
import { queueFilterSchema } from '../../src/payouts/queue';

const ID = '0b7e6c8e-3f0a-4d5e-9c1b-2a3b4c5d6e7f';

describe('the human queue cursor', () => {
  test.each([
    ['a month 13, day 45, hour 99', `2026-13-45T99:99:99Z|${ID}`],
    ['a day the month does not have', `2026-02-30T10:00:00.000000Z|${ID}`],
    ['29 February in a year that is not leap', `2025-02-29T10:00:00Z|${ID}`],
    ['hour 24', `2026-08-01T24:00:00Z|${ID}`],
    ['minute 60', `2026-08-01T10:60:00Z|${ID}`],
    ['second 60', `2026-08-01T10:00:60Z|${ID}`],
    ['year 0', `0000-01-01T00:00:00Z|${ID}`],
    ['seven fraction digits', `2026-08-01T10:00:00.1234567Z|${ID}`],
    ['a colon-only time', `2026-08-01T::::Z|${ID}`],
    ['dots for a time', `2026-08-01T....Z|${ID}`],
    ['a uuid of dashes', `2026-08-01T10:00:00Z|${'-'.repeat(36)}`],
    ['a uuid with its dashes moved', `2026-08-01T10:00:00Z|${ID.replace(/-/g, '').replace(/^(.{10})/, '$1-')}-----`],
    ['no id', '2026-08-01T10:00:00Z|'],
    ['no separator', `2026-08-01T10:00:00Z${ID}`],
  ])('when the cursor has %s, then the filter is refused', (_what, after) => {
    const parsed = queueFilterSchema.safeParse({ after });
    expect(parsed.success).toBe(false);
  });

  test.each([
    ['microseconds, as the listing hands out', `2026-08-01T10:00:00.123456Z|${ID}`],
    ['no fraction', `2026-08-01T23:59:59Z|${ID}`],
    ['29 February of a leap year', `2028-02-29T00:00:00.5Z|${ID}`],
  ])('when the cursor has %s, then it is kept to the microsecond', (_what, after) => {
    const parsed = queueFilterSchema.parse({ after });
    expect(parsed.after).toEqual({ at: after.split('|')[0], id: ID });
  });
});
