/** The outbox drainer paces payout starts to the provider budget (issue 22 item 1): with a write
 * budget of 1/s and 4 s ahead, at most 4 payouts wait in Temporal for the money-moving call; the
 * rest of a burst waits as outbox rows and is started as transfers leave. Two drainers share the
 * one cap (count and claim under one advisory lock). The payout sweep leaves a queued start to the
 * drainer. The starter here plays a run that claims its payout and waits for the write budget.
 * Real PostgreSQL. */
import { SWEEP_CANDIDATES_SQL } from '../../src/activities/payoutSweep';
import type { Db } from '../../src/db/pool';
import { PACED_WAITING_SQL, startOutboxDrainer, type OutboxDrainer } from '../../src/outbox/drainer';
import type { PayoutStarter } from '../../src/payouts/starter';
import { isolatedPool } from '../support/db';
import { seedPaidOrder } from './payoutSeed';

describe('outbox: starts paced to the provider budget', () => {
  let db: Db;
  const drainers: OutboxDrainer[] = [];
  const started: string[] = [];
  // A started run claims its payout at once and waits for the rate-limited send.
  const claimingStarter: PayoutStarter = {
    async startPayout(orderId) {
      started.push(orderId);
      await db.query(`UPDATE payouts SET status = 'processing', attempts = 1, claimed_at = now() WHERE order_id = $1`, [orderId]);
    },
  };
  const pacedDrainer = () => {
    const d = startOutboxDrainer({ db, payoutStarter: claimingStarter, pollMs: 60_000, listen: false, pacing: { writeRps: 1, aheadSeconds: 4 } });
    drainers.push(d);
    return d;
  };
  const waiting = async () => Number((await db.query(PACED_WAITING_SQL)).rows[0].waiting);
  const queued = async () => Number((await db.query('SELECT count(*) FROM payouts_outbox').then((r) => r.rows[0].count)));

  beforeAll(async () => {
    ({ db } = await isolatedPool());
  });

  afterAll(async () => {
    for (const d of drainers) await d.stop();
    await db?.end();
  });

  test('when 10 payout starts arrive at once, then 4 runs start and 6 wait as outbox rows; as transfers leave, as many more start; two drainers never pass the cap', async () => {
    const orders: string[] = [];
    for (let i = 0; i < 10; i++) orders.push((await seedPaidOrder(db, { linkedAccountId: 'acc_Pacing00000001' })).orderId);
    await db.query(`INSERT INTO payouts_outbox (kind, order_id) SELECT 'start_payout', unnest($1::text[])`, [orders]);
    const [a, b] = [pacedDrainer(), pacedDrainer()];
    // Both poll on start; a pass each, at once.
    await Promise.all([a.drainNow(), b.drainNow()]);
    expect(started).toHaveLength(4);
    expect(new Set(started).size).toBe(4);
    expect(await queued()).toBe(6);
    expect(await waiting()).toBe(4);
    expect(await a.drainNow()).toBe(0); // the cap holds while nothing has been sent

    // Three of the waiting runs send their transfer: room for three more, in order of arrival.
    await db.query(`UPDATE payouts SET request_sent_at = now() WHERE order_id = ANY($1::text[])`, [started.slice(0, 3)]);
    await Promise.all([a.drainNow(), b.drainNow()]);
    expect(started).toHaveLength(7);
    expect(started.slice(4)).toEqual(orders.filter((o) => !started.slice(0, 4).includes(o)).slice(0, 3));
    expect(await queued()).toBe(3);
  });

  test('when a start is still queued in the outbox, then the payout sweep leaves it to the drainer; a start that failed is the sweep\'s again', async () => {
    const { orderId: queuedOrder } = await seedPaidOrder(db, { linkedAccountId: 'acc_Pacing00000002' });
    const { orderId: failedOrder } = await seedPaidOrder(db, { linkedAccountId: 'acc_Pacing00000003' });
    await db.query(`INSERT INTO payouts_outbox (kind, order_id, next_attempt_at) VALUES ('start_payout', $1, now() + interval '1 hour'), ('start_payout', $2, now() + interval '1 hour')`, [queuedOrder, failedOrder]);
    await db.query(`UPDATE payouts_outbox SET attempts = 2 WHERE order_id = $1`, [failedOrder]);
    const { rows } = await db.query<{ order_id: string }>(SWEEP_CANDIDATES_SQL, [null, null, 10_000, 0]);
    const swept = rows.map((r) => r.order_id);
    expect(swept).not.toContain(queuedOrder);
    expect(swept).toContain(failedOrder);
  });
});
