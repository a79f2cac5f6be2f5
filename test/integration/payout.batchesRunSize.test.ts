/** A batch run that does not grow with its members (issue 36 item 5), against the real Temporal dev
 * server, PostgreSQL and the Razorpay sandbox. Joins are rows in payout_batch_orders; the order's run
 * only makes sure its batch's run exists, which adds nothing to that run's history, and the close sums
 * the rows. Before, every joiner signalled the batch run: a pair with more than 10,000 orders a window
 * passed Temporal Cloud's signal limit, and one past ~51,000 the history limit of any server. */
import type { temporal } from '@temporalio/proto';
import { payoutWorkflowId, type PayoutWorkflowResult } from '../../src/contracts/payout';
import { closeBatchNowSignal, payoutBatchWorkflowId } from '../../src/contracts/payoutBatch';
import type { Db } from '../../src/db/pool';
import { joinPayoutBatch } from '../../src/payouts/batches';
import { startPayoutWorkflow } from '../../src/payouts/temporalStarter';
import type { SandboxControl } from '../../src/sandbox/control';
import { eventually, recordHistory, seedPaidOrder, type SeededOrder } from './payoutSeed';
import { startBatchPayoutStack, type PayoutStack } from './payoutStack';

const NET = 8_100;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const typeOf = (e: HistoryEvent) => String(e.eventType);

describe('payouts: a batch run\'s history does not grow with the orders that join it', () => {
  let stack: PayoutStack;
  let db: Db;
  let control: SandboxControl;
  const policy = { attemptCap: 5, retryBackoffMs: 200, retryBackoffMaxMs: 800 };

  beforeAll(async () => {
    stack = await startBatchPayoutStack('payout-batches-size');
    ({ db } = stack);
    control = stack.sandbox.control;
  });

  afterAll(async () => {
    await stack?.close();
  });

  const client = () => stack.temporal.client;
  const taskQueue = () => stack.config.TEMPORAL_TASK_QUEUE;
  const runResult = (key: string) => client().workflow.getHandle(payoutWorkflowId(key)).result() as Promise<PayoutWorkflowResult>;
  const history = async (key: string) => (await client().workflow.getHandle(payoutWorkflowId(key)).fetchHistory()).events ?? [];
  const joinSignals = (events: HistoryEvent[]) => events.filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'batchOrderJoined').length;

  /** A daily pair (a window far longer than the test) with `n` paid orders, 8,100 paise net each. */
  async function dailyPair(n: number): Promise<{ account: string; orders: SeededOrder[] }> {
    const account = await control.createLinkedAccount();
    const first = await seedPaidOrder(db, { linkedAccountId: account });
    await db.query(`UPDATE employer_vendor SET payout_schedule = 'daily' WHERE employer_id = $1 AND vendor_id = $2`, [first.employerId, first.vendorId]);
    const orders = [first];
    for (let i = 1; i < n; i += 1) orders.push(await seedPaidOrder(db, { linkedAccountId: account, pair: first }));
    return { account, orders };
  }

  /** The orders join as rows (the join an order's run commits), then each order's run finds its row
   * `batched` and makes sure its batch's run is there, as after its own join. */
  async function joinAll(orders: SeededOrder[]): Promise<string> {
    for (const o of orders) expect(await joinPayoutBatch(db, o.orderId, { kind: 'not_needed' }, policy)).toMatchObject({ kind: 'joined' });
    for (const o of orders) await startPayoutWorkflow(client(), taskQueue(), o.orderId);
    const results = await Promise.all(orders.map((o) => runResult(o.orderId)));
    const batchIds = new Set(results.map((r) => (r.kind === 'batched' ? r.batchId : `not batched: ${JSON.stringify(r)}`)));
    expect([...batchIds]).toHaveLength(1);
    return [...batchIds][0]!;
  }

  /** The batch run's history once it waits for its cutoff with nothing left to do: no workflow task
   * pending, and the same length a second later (a signal still on its way is counted). */
  async function idleHistory(batchId: string): Promise<HistoryEvent[]> {
    const busy = new Set(['EVENT_TYPE_WORKFLOW_TASK_SCHEDULED', 'EVENT_TYPE_WORKFLOW_TASK_STARTED']);
    let before = -1;
    const settled = await eventually(async () => {
      await new Promise((r) => setTimeout(r, 1_000));
      const events = await history(batchId);
      const last = events.at(-1);
      const idle = !!last && !busy.has(typeOf(last)) && events.length === before;
      before = events.length;
      return idle ? events : null;
    }, (e) => e !== null, 30_000);
    return settled!;
  }

  const closeNow = (batchId: string) => client().workflow.getHandle(payoutBatchWorkflowId(batchId)).signal(closeBatchNowSignal, { actor: 'test' });

  async function closeAndPay(batchId: string, account: string, members: number): Promise<HistoryEvent[]> {
    await closeNow(batchId);
    expect(await runResult(batchId)).toMatchObject({ kind: 'finished', status: 'settled', attempts: 1 });
    const live = (await control.transfers({ recipient: account })).filter((t) => !Array.isArray(t.notes) && t.notes.batch_id === batchId);
    expect(live.map((t) => ({ amount: t.amount, status: t.status }))).toEqual([{ amount: members * NET, status: 'processed' }]);
    const { rows } = await db.query<{ status: string; n: number }>(
      `SELECT p.status, count(*)::int AS n FROM payout_batch_orders m JOIN payouts p ON p.order_id = m.order_id WHERE m.batch_id = $1 GROUP BY 1`, [batchId]);
    expect(rows).toEqual([{ status: 'settled', n: members }]);
    return history(batchId);
  }

  test('when 5 orders join one daily batch and 50 join another, then both batch runs wait with the same history and are paid one transfer each; an order after the close starts the next window\'s run', async () => {
    const small = await dailyPair(5);
    const large = await dailyPair(50);
    const smallBatch = await joinAll(small.orders);
    const largeBatch = await joinAll(large.orders);

    // Waiting for the cutoff, the run's history is the same length whatever the member count, and
    // no joiner sent it anything.
    const [smallIdle, largeIdle] = [await idleHistory(smallBatch), await idleHistory(largeBatch)];
    expect({ small: smallIdle.length, large: largeIdle.length, signals: joinSignals(largeIdle) })
      .toEqual({ small: smallIdle.length, large: smallIdle.length, signals: 0 });

    // Ops close both early: each close reads its members from the database and pays ONE transfer.
    const smallDone = await closeAndPay(smallBatch, small.account, 5);
    const largeDone = await closeAndPay(largeBatch, large.account, 50);
    expect(joinSignals(largeDone)).toBe(0);
    expect(largeDone.length).toBeLessThan(100);
    expect(Math.abs(largeDone.length - smallDone.length)).toBeLessThanOrEqual(6); // settlement polls vary with timing only

    // An order of the first pair paid in the closed window goes to the next window's batch, whose run
    // its own run starts (the closed batch's run has completed).
    const late = await seedPaidOrder(db, { linkedAccountId: small.account, pair: small.orders[0] });
    await startPayoutWorkflow(client(), taskQueue(), late.orderId);
    const lateResult = await runResult(late.orderId);
    expect(lateResult).toMatchObject({ kind: 'batched' });
    const nextBatch = (lateResult as { batchId: string }).batchId;
    expect(nextBatch).not.toBe(smallBatch);
    expect((await client().workflow.getHandle(payoutBatchWorkflowId(nextBatch)).describe()).status.name).toBe('RUNNING');
    expect(joinSignals(await idleHistory(nextBatch))).toBe(0);
    await closeAndPay(nextBatch, small.account, 1);
    expect((await control.transfers({ recipient: small.account })).map((t) => t.amount).sort((a, b) => a - b)).toEqual([NET, 5 * NET]);

    // The terminal totals the /metrics scrape reads count each member once, as its own settled payout
    // (members are counted per statement, not per row: migrations/124).
    const totals = await db.query<{ count: string; paise: string }>(`SELECT count::text, paise::text FROM payout_metric_totals WHERE metric = 'terminal_status' AND label = 'settled'`);
    const settled = await db.query<{ count: string; paise: string }>(`SELECT count(*)::text AS count, sum(amount_paise)::text AS paise FROM payouts WHERE status = 'settled' AND order_id IS NOT NULL`);
    expect(totals.rows).toEqual([{ count: '56', paise: String(56 * NET) }]);
    expect(settled.rows).toEqual(totals.rows);

    await recordHistory(client(), payoutBatchWorkflowId(largeBatch), 'payout-batch-members-as-rows');
    await recordHistory(client(), payoutWorkflowId(late.orderId), 'payout-order-joins-batch-without-signal');
  });
});
