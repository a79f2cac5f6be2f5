/** Issue 37: the once-more look's window waits, a recheck at most, at the payment of an order whose
 * payout has not decided, so that order is looked at by the window and not asked alone. bench:day
 * found 650 of 10,000 orders asked alone (GET /orders/:id/payments): their payouts' starts waited in
 * the paced outbox while their window came and passed them by. Real API, worker, Temporal, PostgreSQL
 * and the sandbox, whose call counts are the evidence. */
import { randomBytes } from 'node:crypto';
import { missedWebhookSweepWorkflowId } from '../../src/contracts/missedWebhookSweep';
import type { Db } from '../../src/db/pool';
import { setTransfersPaused } from '../../src/payouts/killSwitch';
import { missedWebhookSweepWorkflow } from '../../src/workflows/missedWebhookSweep';
import { http, uniqueRef, type MoneyInHarness } from './moneyinHarness';
import { eventually, payoutRow } from './payoutSeed';
import { opsApi, PAIR_ORDER, startPayoutStackWithPair, type PayoutStack } from './payoutStack';

const PAIR = { employerId: 'emp_recheck_wait', vendorId: 'ven_recheck_wait' };
const RECHECK_MS = 3_000;

describe('money in: the once-more look waits for undecided payouts', () => {
  let stack: PayoutStack, db: Db, h: MoneyInHarness;

  beforeAll(async () => {
    ({ stack, h } = await startPayoutStackWithPair({
      name: 'recheck-wait', ...PAIR,
      sandbox: { transferProcessingDelayMs: 200 },
      env: { LATE_CAPTURE_RECHECK_MS: String(RECHECK_MS), PAYOUT_HUMAN_RECHECK_MS: '60000', BANK_HOLIDAYS: '' },
    }));
    db = stack.db;
  });

  afterAll(async () => {
    await stack?.close();
  });

  const control = () => stack.sandbox.control;
  const sweep = () => stack.temporal.client.workflow.execute(missedWebhookSweepWorkflow, {
    workflowId: missedWebhookSweepWorkflowId(randomBytes(4).toString('hex')), taskQueue: stack.temporal.taskQueue, args: [{ olderThanMs: 1 }],
  });
  const askedAlone = async () => (await control().callCounts())['orders.payments'] ?? 0;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  /** A paid online order while transfers are paused: its payout stays pending (undecided). */
  async function paidWhilePaused(tag: string): Promise<{ orderId: string; createdS: number }> {
    await setTransfersPaused(db, { paused: true, actor: 'test', reason: 'the payout stays undecided' });
    const placed = await http(h, 'POST', '/v1/orders', { clientReference: uniqueRef(tag), ...PAIR, employeeId: `e-${tag}`, ...PAIR_ORDER, paymentMethod: 'online' });
    expect(placed.status).toBe(201);
    const payment = await control().payOrder(placed.body.order.gatewayOrderId);
    const orderId = placed.body.order.orderId as string;
    await eventually(() => payoutRow(db, orderId), (p) => p?.status === 'pending');
    return { orderId, createdS: payment.created_at };
  }

  const windowsOver = async (s: number) => (await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM provider_listing_passes WHERE kind = 'payments_recheck' AND finished_at IS NOT NULL AND error IS NULL
        AND listed_from_s <= $1 AND listed_to_s >= $1`, [s])).rows[0]!.n;
  const checked = async (orderId: string) => (await db.query<{ checked: boolean }>(
    'SELECT payment_checked_at >= paid_at AS checked FROM orders WHERE id = $1', [orderId])).rows[0]!.checked === true;

  test('when a paid order\'s window is due while its payout is still pending, then the window stops short of its payment, and once the payout has sent, the next window looks at it: the order is never asked alone', async () => {
    const asked = await askedAlone();
    const order = await paidWhilePaused('wait');
    await sleep(RECHECK_MS + 1_100); // its window is due

    await sweep();
    expect(await windowsOver(order.createdS)).toBe(0);
    expect(await checked(order.orderId)).toBe(false);

    expect((await opsApi(stack)('POST', '/ops/transfers/resume', { reason: 'the payout decides' })).status).toBe(200);
    await eventually(() => payoutRow(db, order.orderId), (p) => p?.status === 'accepted' || p?.status === 'settled', 30_000);
    await sweep();
    expect(await windowsOver(order.createdS)).toBe(1);
    expect(await checked(order.orderId)).toBe(true);
    expect(await askedAlone()).toBe(asked);
  });

  test('when a payout stays undecided a recheck past its window, then the windows no longer wait for it: they list on, and once it has decided that order alone is asked by the per-order look', async () => {
    const order = await paidWhilePaused('bound');
    await sleep(2 * RECHECK_MS + 1_100); // its window was due a recheck ago
    const asked = await askedAlone();

    await sweep();
    expect(await windowsOver(order.createdS)).toBe(1);
    expect(await checked(order.orderId)).toBe(false); // undecided: the window did not apply it

    // Once its payout has decided, the per-order look asks it alone (as it did every such order before).
    expect((await opsApi(stack)('POST', '/ops/transfers/resume', { reason: 'the payout decides' })).status).toBe(200);
    await eventually(() => payoutRow(db, order.orderId), (p) => p?.status === 'accepted' || p?.status === 'settled', 30_000);
    await eventually(async () => { await sweep(); return checked(order.orderId); }, (c) => c, 20_000);
    expect(await askedAlone()).toBe(asked + 1);
  });
});
