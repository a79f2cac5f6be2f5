/** Issue 37: the once-more look's window applies a paid order whose payout has sent nothing yet, so
 * that order is not asked alone later. bench:day found 650 of 10,000 orders asked alone (GET
 * /orders/:id/payments): their batched payouts' starts waited in the paced outbox when their window
 * came. A refund from the Dashboard the window finds holds such a payout before any send, as the
 * refund's webhook would; a row a restore may have made older than the provider still waits. Real
 * API, worker, Temporal, PostgreSQL and the sandbox, whose call counts are the evidence. */
import { randomBytes } from 'node:crypto';
import { missedWebhookSweepWorkflowId } from '../../src/contracts/missedWebhookSweep';
import type { Db } from '../../src/db/pool';
import { setTransfersPaused } from '../../src/payouts/killSwitch';
import { missedWebhookSweepWorkflow } from '../../src/workflows/missedWebhookSweep';
import { http, uniqueRef, type MoneyInHarness } from './moneyinHarness';
import { eventually, payoutRow } from './payoutSeed';
import { PAIR_ORDER, startPayoutStackWithPair, type PayoutStack } from './payoutStack';

const PAIR = { employerId: 'emp_window_pending', vendorId: 'ven_window_pending' };
const RECHECK_MS = 2_000;

describe('money in: the once-more look\'s window and payouts that have sent nothing yet', () => {
  let stack: PayoutStack, db: Db, h: MoneyInHarness, linkedAccountId: string;

  beforeAll(async () => {
    ({ stack, h, linkedAccountId } = await startPayoutStackWithPair({
      name: 'window-pending', ...PAIR,
      sandbox: { transferProcessingDelayMs: 200 },
      env: { LATE_CAPTURE_RECHECK_MS: String(RECHECK_MS), PAYOUT_HUMAN_RECHECK_MS: '60000', BANK_HOLIDAYS: '' },
    }));
    db = stack.db;
    // Every payout here stays pending, never claimed: the window meets it before its send.
    await setTransfersPaused(db, { paused: true, actor: 'test', reason: 'the payouts send nothing during these tests' });
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

  async function paidOrder(tag: string) {
    const placed = await http(h, 'POST', '/v1/orders', { clientReference: uniqueRef(tag), ...PAIR, employeeId: `e-${tag}`, ...PAIR_ORDER, paymentMethod: 'online' });
    expect(placed.status).toBe(201);
    const payment = await control().payOrder(placed.body.order.gatewayOrderId);
    const orderId = placed.body.order.orderId as string;
    await eventually(() => payoutRow(db, orderId), (p) => p?.status === 'pending');
    return { orderId, payment };
  }

  const windowsOver = async (s: number) => (await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM provider_listing_passes WHERE kind = 'payments_recheck' AND finished_at IS NOT NULL AND error IS NULL
        AND listed_from_s <= $1 AND listed_to_s >= $1`, [s])).rows[0]!.n;
  const checked = async (orderId: string) => (await db.query<{ checked: boolean }>(
    'SELECT payment_checked_at >= paid_at AS checked FROM orders WHERE id = $1', [orderId])).rows[0]!.checked === true;

  test('when a paid order\'s window comes while its payout is still pending and has sent nothing, then the window looks at it once more, and it is never asked alone', async () => {
    const asked = await askedAlone();
    const { orderId, payment } = await paidOrder('pending');
    await sleep(RECHECK_MS + 1_100);
    await sweep();
    expect(await windowsOver(payment.created_at)).toBe(1);
    expect(await checked(orderId)).toBe(true);
    await sweep();
    expect(await askedAlone()).toBe(asked);
  });

  test('when the customer was refunded from the Dashboard, its webhooks lost, before the payout sent anything, then the window finds the refund and holds the payout in review: the vendor is not paid', async () => {
    const { orderId, payment } = await paidOrder('refunded');
    await control().injectWebhookFault('lose', { events: ['refund.created', 'refund.processed'], count: 2 });
    const refund = await h.gateway.createRefund({ paymentId: payment.id, amountPaise: PAIR_ORDER.customerSharePaise, receipt: `dashboard-${randomBytes(3).toString('hex')}` });
    if (refund.type !== 'accepted') throw new Error(`the sandbox refused the refund: ${JSON.stringify(refund)}`);
    await control().drainWebhooks();
    expect(await payoutRow(db, orderId)).toMatchObject({ status: 'pending' });

    await sleep(RECHECK_MS + 1_100);
    await sweep();
    expect(await payoutRow(db, orderId)).toMatchObject({ status: 'review', last_code: 'CUSTOMER_REFUNDED' });
    expect((await db.query('SELECT id FROM outside_refunds WHERE order_id = $1', [orderId])).rows).toEqual([{ id: refund.entity.id }]);
    expect((await control().transfers({ recipient: linkedAccountId })).filter((t) => (t.notes as Record<string, string>).order_id === orderId)).toEqual([]);
  });

  test('when a pending payout may be older than the provider\'s ledger (a restored database), then the window leaves it to the per-order look after its payout has asked the provider', async () => {
    const { orderId, payment } = await paidOrder('restored');
    await db.query('UPDATE payouts SET provider_may_know_since = now() WHERE order_id = $1', [orderId]); // as the payout sweep marks it
    await sleep(RECHECK_MS + 1_100);
    await sweep();
    expect(await windowsOver(payment.created_at)).toBe(1);
    expect(await checked(orderId)).toBe(false);
  });
});
