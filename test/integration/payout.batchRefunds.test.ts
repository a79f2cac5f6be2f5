/** Issue 36 item 2: a refund made outside the app (the Razorpay Dashboard) of a batched order acts as
 * it does on an order paid alone. While the order's batch is open, nothing has left for it: the order
 * leaves the batch and its payout is held in review (CUSTOMER_REFUNDED), so the batch's one transfer
 * pays only the others. Once the batch has closed, its fixed sum pays the order: the vendor owes its
 * share of the refund back (a negative offline-ledger line and a recon exception). Real API (signed
 * webhooks from the sandbox), worker, PostgreSQL and sandbox; money read from the SANDBOX's ledger. */
import { randomUUID } from 'node:crypto';
import type { Db } from '../../src/db/pool';
import type { Gateway } from '../../src/gateway/types';
import { setTransfersPaused } from '../../src/payouts/killSwitch';
import { http, uniqueRef, type MoneyInHarness } from './moneyinHarness';
import { expectLedgerTies } from './ledgerTie';
import { eventually, payoutRow } from './payoutSeed';
import { opsApi, PAIR_ORDER, PAIR_ORDER_NET_PAISE, startPayoutStackWithPair, type PayoutStack } from './payoutStack';

const EMPLOYER = 'emp_batch_refunds';
const VENDOR = 'ven_batch_refunds';
const NET = PAIR_ORDER_NET_PAISE;

describe('payout batches: a refund made outside the app of a batched order', () => {
  let stack: PayoutStack;
  let db: Db;
  let gateway: Gateway;
  let h: MoneyInHarness;
  let linkedAccountId: string;

  beforeAll(async () => {
    ({ stack, h, linkedAccountId } = await startPayoutStackWithPair({
      name: 'batch-refunds', employerId: EMPLOYER, vendorId: VENDOR,
      env: { PAYOUT_RETRY_BACKOFF_MS: '300', PAYOUT_RETRY_BACKOFF_MAX_MS: '600', PAYOUT_SETTLEMENT_POLL_MS: '1000', PAYOUT_HUMAN_RECHECK_MS: '60000' },
    }));
    db = stack.db;
    gateway = h.gateway;
    await db.query(`UPDATE employer_vendor SET payout_schedule = 'hourly' WHERE employer_id = $1 AND vendor_id = $2`, [EMPLOYER, VENDOR]);
  });

  afterEach(async () => {
    await expectLedgerTies(db);
  });

  afterAll(async () => {
    await stack?.close();
  });

  const control = () => stack.sandbox.control;
  const ops = () => opsApi(stack);
  const batchOf = async (orderId: string) => (await db.query<{ batch_id: string }>('SELECT batch_id FROM payout_batch_orders WHERE order_id = $1', [orderId])).rows[0]?.batch_id ?? null;
  const batchPayout = async (batchId: string) => (await db.query('SELECT * FROM payouts WHERE batch_id = $1', [batchId])).rows[0];
  const outsideRefund = async (refundId: string) => (await db.query('SELECT action, payout_status, clawback_paise::int AS clawback_paise FROM outside_refunds WHERE id = $1', [refundId])).rows[0];
  const clawbacks = async (orderId: string) =>
    (await db.query('SELECT amount_paise::int AS amount_paise, route FROM offline_ledger WHERE clawback_order_id = $1', [orderId])).rows;
  const liveTransfers = async () => (await control().transfers({ recipient: linkedAccountId })).filter((t) => t.status !== 'failed' && t.status !== 'reversed');

  /** An online order of the hourly pair, paid at the sandbox's checkout, its payout handed to its batch. */
  async function batchedOrder(): Promise<{ orderId: string; paymentId: string; batchId: string }> {
    const placed = await http(h, 'POST', '/v1/orders', {
      clientReference: uniqueRef('batch-refund'), employerId: EMPLOYER, vendorId: VENDOR, employeeId: 'e-batch-refund', ...PAIR_ORDER, paymentMethod: 'online',
    });
    expect(placed.status).toBe(201);
    const payment = await control().payOrder(placed.body.order.gatewayOrderId);
    const orderId = placed.body.order.orderId as string;
    await eventually(() => payoutRow(db, orderId), (p) => p?.status === 'batched');
    return { orderId, paymentId: payment.id, batchId: (await batchOf(orderId))! };
  }

  /** As the Razorpay Dashboard would: a refund with no receipt of ours. */
  async function refundFromDashboard(paymentId: string, amountPaise: number): Promise<string> {
    const outcome = await gateway.createRefund({ paymentId, amountPaise, receipt: `dashboard-${randomUUID().slice(0, 12)}` });
    if (outcome.type !== 'accepted') throw new Error(`the sandbox refused the refund: ${JSON.stringify(outcome)}`);
    await control().drainWebhooks();
    return outcome.entity.id;
  }

  async function closeAndSettle(batchId: string) {
    expect((await ops()('POST', `/ops/batches/${batchId}/close`, { reason: 'the test closes the window now' })).status).toBe(202);
    return eventually(() => batchPayout(batchId), (p) => p?.status === 'settled');
  }

  test('when a batched order is refunded from the Dashboard while its batch is open, then it leaves the batch and its payout is held in review, and the batch pays only the others', async () => {
    const refunded = await batchedOrder();
    const kept = await batchedOrder();
    expect(kept.batchId).toBe(refunded.batchId);
    const createsBefore = (await control().callCounts())['transfers.create'] ?? 0;

    const refundId = await refundFromDashboard(refunded.paymentId, PAIR_ORDER.customerSharePaise);

    await eventually(() => outsideRefund(refundId), (r) => !!r);
    expect(await outsideRefund(refundId)).toMatchObject({ action: 'payout_held', payout_status: 'batched', clawback_paise: null });
    expect(await eventually(() => payoutRow(db, refunded.orderId), (p) => p?.status !== 'batched')).toMatchObject({ status: 'review', last_code: 'CUSTOMER_REFUNDED' });
    expect(await batchOf(refunded.orderId)).toBeNull();
    const queue = await ops()('GET', '/ops/payouts?reason=CUSTOMER_REFUNDED');
    expect(queue.body.items.map((i: { orderId: string }) => i.orderId)).toContain(refunded.orderId);

    const carrier = await closeAndSettle(kept.batchId);
    expect(Number(carrier.amount_paise)).toBe(NET);
    expect((await control().callCounts())['transfers.create']).toBe(createsBefore + 1);
    expect((await liveTransfers()).filter((t) => (t.notes as Record<string, string>).batch_id === kept.batchId).map((t) => t.amount)).toEqual([NET]);
    expect(await payoutRow(db, kept.orderId)).toMatchObject({ status: 'settled' });
    expect(await payoutRow(db, refunded.orderId)).toMatchObject({ status: 'review', provider_transfer_id: null });
    expect(await clawbacks(refunded.orderId)).toEqual([]);
  });

  test('when the refund cannot be read (Razorpay answers 429 to every fetch) while its batch is open, then the batch\'s close holds the order and pays only the others; once the refund is read it is recorded as the hold', async () => {
    const refunded = await batchedOrder();
    const kept = await batchedOrder();
    expect(kept.batchId).toBe(refunded.batchId);
    await control().injectFault({ endpoint: 'refunds.fetch', fault: { kind: 'rate_limited' }, probability: 1 });
    try {
      const refundId = await refundFromDashboard(refunded.paymentId, PAIR_ORDER.customerSharePaise);
      // The webhook was answered and its fetch refused: the hint waits, unread.
      await eventually(async () => (await control().callCounts())['refunds.fetch'] ?? 0, (n) => n > 0);
      expect(await outsideRefund(refundId)).toBeUndefined();
      expect(await payoutRow(db, refunded.orderId)).toMatchObject({ status: 'batched' });

      const carrier = await closeAndSettle(kept.batchId);
      expect(Number(carrier.amount_paise)).toBe(NET);
      expect((await liveTransfers()).filter((t) => (t.notes as Record<string, string>).batch_id === kept.batchId).map((t) => t.amount)).toEqual([NET]);
      expect(await payoutRow(db, refunded.orderId)).toMatchObject({ status: 'review', last_code: 'CUSTOMER_REFUNDED', provider_transfer_id: null });
      expect(await batchOf(refunded.orderId)).toBeNull();

      await control().clearFaults();
      expect(await eventually(() => outsideRefund(refundId), (r) => !!r, 60_000)).toMatchObject({ action: 'payout_held', payout_status: 'batched', clawback_paise: null });
      expect(await clawbacks(refunded.orderId)).toEqual([]);
      expect(await payoutRow(db, refunded.orderId)).toMatchObject({ status: 'review', last_code: 'CUSTOMER_REFUNDED' });
    } finally {
      await control().clearFaults();
    }
  });

  test('when a batched order is refunded from the Dashboard after its batch paid, then the vendor owes its share back in a negative offline-ledger line, with one recon exception', async () => {
    const refunded = await batchedOrder();
    const other = await batchedOrder();
    expect(other.batchId).toBe(refunded.batchId);
    await closeAndSettle(refunded.batchId);

    const refundId = await refundFromDashboard(refunded.paymentId, PAIR_ORDER.customerSharePaise);

    await eventually(() => outsideRefund(refundId), (r) => !!r);
    expect(await outsideRefund(refundId)).toMatchObject({ action: 'owed_back', payout_status: 'settled', clawback_paise: NET });
    expect(await clawbacks(refunded.orderId)).toEqual([{ amount_paise: -NET, route: 'refund_clawback' }]);
    expect((await db.query(`SELECT reason FROM recon_exceptions WHERE order_id = $1 AND reason = 'refund-outside-app'`, [refunded.orderId])).rowCount).toBe(1);
    expect(await payoutRow(db, refunded.orderId)).toMatchObject({ status: 'settled' });
  });

  test('when a batched order is refunded from the Dashboard after its batch closed but before it paid, then the batch\'s fixed sum still pays it and the vendor owes its share back', async () => {
    const refunded = await batchedOrder();
    await batchedOrder();
    await setTransfersPaused(db, { paused: true, actor: 'test', reason: 'the batch\'s transfer waits on the kill switch' });
    expect((await ops()('POST', `/ops/batches/${refunded.batchId}/close`, { reason: 'the test closes the window now' })).status).toBe(202);
    await eventually(() => batchPayout(refunded.batchId), (p) => !!p);

    const refundId = await refundFromDashboard(refunded.paymentId, PAIR_ORDER.customerSharePaise);

    await eventually(() => outsideRefund(refundId), (r) => !!r);
    expect(await outsideRefund(refundId)).toMatchObject({ action: 'owed_back', payout_status: 'batched', clawback_paise: NET });
    expect(await clawbacks(refunded.orderId)).toEqual([{ amount_paise: -NET, route: 'refund_clawback' }]);
    expect(await batchOf(refunded.orderId)).toBe(refunded.batchId);
    expect(await batchPayout(refunded.batchId)).toMatchObject({ status: 'pending', provider_transfer_id: null });
    await setTransfersPaused(db, { paused: false, actor: 'test', reason: 'reset' });
  });
});
