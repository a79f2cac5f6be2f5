/** The missed-webhook sweep's late-capture batch shares itself: ended orders (a late capture is
 * possible for days, each rechecked every LATE_CAPTURE_RECHECK_MS) and the once-more look at every
 * paid online order each get at least half of a batch when both have that many. The 1,000-order
 * campaign found the once-more look starved to a few slots a run by 100-odd cancelled and expired
 * orders, so 400 paid orders waited past the quiesce deadline. Real PostgreSQL. */
import type { Db } from '../../src/db/pool';
import { endedOrdersAwaitingLateCapture } from '../../src/moneyin/missedPayments';
import { isolatedPool } from '../support/db';
import { seedPaidOrder } from './payoutSeed';

describe('the late-capture batch', () => {
  let db: Db;
  const cancelled: string[] = [];
  const paid: string[] = [];

  beforeAll(async () => {
    ({ db } = await isolatedPool());
    for (let i = 0; i < 12; i += 1) {
      const o = await seedPaidOrder(db, { linkedAccountId: null, totalPaise: 10_000, subsidyPaise: 9_000, withPayout: false });
      await db.query(`UPDATE orders SET status = 'cancelled', paid_at = NULL WHERE id = $1`, [o.orderId]);
      cancelled.push(o.orderId);
    }
    for (let i = 0; i < 12; i += 1) {
      const o = await seedPaidOrder(db, { linkedAccountId: null, totalPaise: 10_000, subsidyPaise: 9_000, withPayout: false });
      await db.query(`UPDATE orders SET paid_at = now() - interval '1 minute' WHERE id = $1`, [o.orderId]);
      paid.push(o.orderId);
    }
  });

  afterAll(async () => {
    await db?.end();
  });

  it('gives the ended orders and the once-more look half a batch each, and the rest to whoever has more', async () => {
    const first = (await endedOrdersAwaitingLateCapture(db, 10, 1_000)).map((o) => o.id);
    expect(first).toHaveLength(10);
    expect(first.filter((id) => cancelled.includes(id))).toHaveLength(5);
    expect(first.filter((id) => paid.includes(id))).toHaveLength(5);
    // Stamped checked: the next batch takes the others (7 cancelled and 7 paid left).
    const second = (await endedOrdersAwaitingLateCapture(db, 10, 1_000)).map((o) => o.id);
    expect(second.filter((id) => first.includes(id))).toEqual([]);
    expect(second.filter((id) => cancelled.includes(id))).toHaveLength(5);
  });
});
