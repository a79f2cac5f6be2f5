/** Issue 12 item 1: the outbox drainer. A start is never lost or doubled (two drainers over the
 * same rows), a failing start is retried with a growing backoff, and a NOTIFY wakes the drainer
 * without waiting for its poll. Real PostgreSQL; the starter is the test's. */
import { inTransaction, type Db } from '../../src/db/pool';
import { startOutboxDrainer, type OutboxDrainer } from '../../src/outbox/drainer';
import { enqueuePayoutStart, releaseOutboxRow } from '../../src/outbox/outbox';
import type { PayoutStarter } from '../../src/payouts/starter';
import { isolatedPool } from '../support/db';
import { eventually } from './moneyinHarness';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('outbox drainer', () => {
  let db: Db;
  const drainers: OutboxDrainer[] = [];

  beforeAll(async () => {
    ({ db } = await isolatedPool());
  });

  afterEach(async () => {
    await Promise.all(drainers.splice(0).map((d) => d.stop()));
    await db.query('DELETE FROM payouts_outbox');
  });

  afterAll(async () => {
    await db?.end();
  });

  const remaining = async () => (await db.query('SELECT count(*)::int AS n FROM payouts_outbox')).rows[0].n as number;

  test('when two drainers run over 50 due rows at once, every order is started exactly once and every row is gone', async () => {
    const orderIds = Array.from({ length: 50 }, (_, i) => `ord_twodrainers${String(i).padStart(2, '0')}`);
    await inTransaction(db, async (tx) => { for (const id of orderIds) await enqueuePayoutStart(tx, id, 0); });
    const starts = new Map<string, string[]>();
    const starter = (name: string): PayoutStarter => ({
      async startPayout(orderId) {
        starts.set(orderId, [...(starts.get(orderId) ?? []), name]);
        await sleep(5 + Math.floor(Math.random() * 20)); // Temporal answering, slowly enough to overlap
      },
    });
    drainers.push(startOutboxDrainer({ db, payoutStarter: starter('a'), batchSize: 5, pollMs: 50 }));
    drainers.push(startOutboxDrainer({ db, payoutStarter: starter('b'), batchSize: 5, pollMs: 50 }));
    expect(await eventually(remaining, (n) => n === 0, 15_000)).toBe(0);
    await sleep(300); // further polls find nothing

    expect([...starts.keys()].sort()).toEqual(orderIds);
    expect([...starts.values()].filter((by) => by.length !== 1)).toEqual([]);
    const by = [...starts.values()].flat();
    // Both took part (not a proof of anything, but the test means nothing if one did all the work).
    expect(by.filter((n) => n === 'a').length + by.filter((n) => n === 'b').length).toBe(50);
    expect(by).toContain('a');
    expect(by).toContain('b');
  });

  test('when the start fails twice, the row is kept with its attempts and error and retried after 1 s then 2 s, then deleted', async () => {
    await inTransaction(db, (tx) => enqueuePayoutStart(tx, 'ord_flakystart0001', 0));
    const calls: number[] = [];
    const flaky: PayoutStarter = {
      async startPayout() {
        calls.push(Date.now());
        if (calls.length <= 2) throw new Error(`temporal unavailable (${calls.length})`);
      },
    };
    drainers.push(startOutboxDrainer({ db, payoutStarter: flaky, pollMs: 50 }));
    const afterFirst = await eventually(
      async () => (await db.query('SELECT attempts, last_error, next_attempt_at > now() AS later FROM payouts_outbox')).rows,
      (rows) => rows[0]?.attempts === 1, 5_000);
    expect(afterFirst).toEqual([{ attempts: 1, last_error: 'temporal unavailable (1)', later: true }]);
    expect(await eventually(remaining, (n) => n === 0, 10_000)).toBe(0);
    expect(calls).toHaveLength(3);
    const [first, second, third] = calls as [number, number, number];
    expect(second - first).toBeGreaterThanOrEqual(950);
    expect(second - first).toBeLessThan(2_000);
    expect(third - second).toBeGreaterThanOrEqual(1_950);
    expect(third - second).toBeLessThan(3_500);
  });

  test('when a writer hands a row over (its own try failed or was skipped), NOTIFY wakes the drainer long before its poll', async () => {
    const started: Array<{ orderId: string; at: number }> = [];
    drainers.push(startOutboxDrainer({ db, payoutStarter: { async startPayout(orderId) { started.push({ orderId, at: Date.now() }); } }, pollMs: 60_000 }));
    await sleep(300); // its first pass and the LISTEN are done
    const id = await inTransaction(db, (tx) => enqueuePayoutStart(tx, 'ord_handedover0001')); // leased to the writer
    await sleep(200);
    expect(started).toEqual([]); // the writer's lease holds it
    const handedAt = Date.now();
    await releaseOutboxRow(db, id, { attempted: false });
    const seen = await eventually(async () => started, (s) => s.length > 0, 3_000);
    expect(seen.map((s) => s.orderId)).toEqual(['ord_handedover0001']);
    expect(seen[0]!.at - handedAt).toBeLessThan(1_000);
    expect(await eventually(remaining, (n) => n === 0, 2_000)).toBe(0);
  });
});
