/** Issue 19 item 5: a capture is confirmed before platform money moves. An online order is marked
 * paid on a webhook's payload; before the first transfer of its payout Razorpay must show the payment
 * as recorded, and nothing is sent otherwise. Issue 37: the payouts due share one listing of the
 * payments (GET /payments?from, a page per 100) instead of a payments.fetch each; a capture the
 * listing does not confirm is fetched alone, once. Real API (signed
 * webhooks), Temporal worker, PostgreSQL and the sandbox; the sandbox's ledger and call counts say
 * what reached Razorpay. */
import { randomUUID } from 'node:crypto';
import type { Db } from '../../src/db/pool';
import { createGateway } from '../../src/gateway';
import { temporalPayoutStarter } from '../../src/payouts/temporalStarter';
import { http, postWebhook, seedPair, topUp, uniqueRef, type MoneyInHarness } from './moneyinHarness';
import { attemptOutcomes, eventually, payoutRow, recordHistory, seedPaidOrder } from './payoutSeed';
import { payoutWorkflowId } from '../../src/contracts/payout';
import { readBalanceWall } from '../../src/payouts/balanceWall';
import { opsApi, startPayoutStack, type PayoutStack } from './payoutStack';
import { envelope, rzpId } from './webhooksHarness';

const EMPLOYER = 'emp_capture';
const VENDOR = 'ven_capture';
const BALANCE = 10_000_000;
/** 10 000 paise, 9 000 of them subsidy: the customer pays 1 000 online; 19% commission leaves 8 100. */
const ORDER = { totalPaise: 10_000, subsidyPaise: 9_000, customerSharePaise: 1_000 };
const NET = 8_100;

describe('payouts: a capture is confirmed with Razorpay before the transfer', () => {
  let stack: PayoutStack;
  let db: Db;
  let h: MoneyInHarness;
  let linkedAccountId: string;

  beforeAll(async () => {
    stack = await startPayoutStack({
      name: 'payout-capture',
      env: {
        GATEWAY_TIMEOUT_MS: '1500',
        PAYOUT_TRANSFER_TIMEOUT_MS: '4000',
        PAYOUT_RETRY_BACKOFF_MS: '300',
        PAYOUT_RETRY_BACKOFF_MAX_MS: '600',
        PAYOUT_SETTLEMENT_POLL_MS: '1000',
        PAYOUT_STALE_CLAIM_MS: '5000',
        PAYOUT_HUMAN_RECHECK_MS: '60000',
      },
    });
    db = stack.db;
    // The money-in helpers over this stack's API, sandbox and keys.
    h = {
      db, config: stack.config, gateway: createGateway(stack.config), sandbox: stack.sandbox, app: stack.api, baseUrl: stack.apiUrl,
      payoutStarts: [], keys: stack.keys, close: () => stack.close(),
    };
    ({ linkedAccountId } = (await seedPair(h, { employerId: EMPLOYER, vendorId: VENDOR, commissionBps: 1_900 })) as { linkedAccountId: string });
    await topUp(h, 'employer', EMPLOYER, 1_000_000);
    await stack.sandbox.control.setPlatformBalance(BALANCE);
  });

  afterAll(async () => {
    await stack?.close();
  });

  afterEach(async () => {
    await stack.sandbox.control.clearFaults();
    await stack.sandbox.control.setWebhookDelivery(true);
    await stack.sandbox.control.setPlatformBalance(BALANCE);
  });

  const control = () => stack.sandbox.control;
  const calls = async (endpoint: string) => (await control().callCounts())[endpoint] ?? 0;
  const transfersFor = async (orderId: string) => (await control().transfers({ recipient: linkedAccountId })).filter((t) => (t.notes as Record<string, string>).order_id === orderId);
  const attempts = async (payoutId: string) => (await db.query<{ outcome: string; provider_code: string | null; raw: { why?: string[] } | null }>(
    'SELECT outcome, provider_code, raw FROM payout_attempts WHERE payout_id = $1 ORDER BY id', [payoutId])).rows;

  async function placeOnlineOrder(): Promise<{ orderId: string; gatewayOrderId: string }> {
    const placed = await http(h, 'POST', '/v1/orders', {
      clientReference: uniqueRef('capture'), employerId: EMPLOYER, vendorId: VENDOR, employeeId: 'e-capture', ...ORDER, paymentMethod: 'online',
    });
    expect(placed.status).toBe(201);
    return placed.body.order;
  }

  const statusIs = (orderId: string, ...statuses: string[]) => eventually(() => payoutRow(db, orderId), (p) => !!p && statuses.includes(p.status));

  test('when a payment.captured signed with our webhook secret names a payment Razorpay never saw, then the order is paid but its payout waits in review with CAPTURE_NOT_CONFIRMED, shown in the ops queue, and no transfer reaches the sandbox', async () => {
    const { orderId, gatewayOrderId } = await placeOnlineOrder();
    const fetchesBefore = await calls('payments.fetch');
    const listingsBefore = await calls('payments.list');
    const createsBefore = await calls('transfers.create');
    // Forged: whoever holds the webhook secret can sign it; the payment id is made up.
    const forged = {
      id: rzpId('pay'), entity: 'payment', amount: ORDER.customerSharePaise, currency: 'INR', status: 'captured', order_id: gatewayOrderId,
      method: 'card', captured: true, amount_refunded: 0, refund_status: null, fee: 20, tax: 0, notes: [], error_code: null, error_description: null,
      created_at: Math.floor(Date.now() / 1000),
    };
    expect((await postWebhook(h, envelope(h, 'payment.captured', { payment: forged }), { eventId: `evt_${randomUUID()}` })).status).toBe(200);
    expect((await db.query('SELECT status, paid_payment_id FROM orders WHERE id = $1', [orderId])).rows).toEqual([{ status: 'paid', paid_payment_id: forged.id }]);

    const payout = await statusIs(orderId, 'review', 'accepted', 'settled');
    expect(payout).toMatchObject({ status: 'review', last_code: 'CAPTURE_NOT_CONFIRMED', provider_transfer_id: null });
    expect(await transfersFor(orderId)).toEqual([]);
    expect(await calls('transfers.create')).toBe(createsBefore);
    // The listing was asked first; it does not show the payment, so the payment alone was asked, once.
    expect(await calls('payments.list')).toBeGreaterThan(listingsBefore);
    expect(await calls('payments.fetch')).toBe(fetchesBefore + 1);
    const [attempt] = await attempts(payout!.id);
    expect(attempt).toMatchObject({ outcome: 'not_sent', provider_code: 'CAPTURE_NOT_CONFIRMED' });
    expect(attempt!.raw!.why!.join(' ')).toMatch(new RegExp(`Razorpay does not know payment ${forged.id}`));

    const queue = await opsApi(stack)('GET', '/ops/payouts?reason=CAPTURE_NOT_CONFIRMED');
    expect(queue.status).toBe(200);
    expect(queue.body.items).toEqual([expect.objectContaining({
      orderId, status: 'review', amount: { paise: NET, rupees: expect.any(String) },
      reason: { code: 'CAPTURE_NOT_CONFIRMED', words: expect.stringMatching(/Razorpay does not confirm the capture/), nextStep: expect.stringMatching(/retry/), decidedBy: 'app' },
    })]);
  });

  test('when a real online order is paid and its first transfer is refused for the platform balance, then the send after the balance wall sends without asking again: the capture confirmed from the listing, no payments.fetch, one transfer, settled', async () => {
    const { orderId, gatewayOrderId } = await placeOnlineOrder();
    await control().setPlatformBalance(0); // the capture below adds less than the vendor net
    const fetchesBefore = await calls('payments.fetch');
    const createsBefore = await calls('transfers.create');
    const payment = await control().payOrder(gatewayOrderId);

    // The refusal puts the balance wall up: the payout waits `pending` with its attempt given back.
    const refused = await eventually(() => payoutRow(db, orderId), (p) => p?.last_code === 'BAD_REQUEST_TRANSFER_INSUFFICIENT_BALANCE' && p.status === 'pending');
    expect(refused).toMatchObject({ status: 'pending' });
    await control().setPlatformBalance(BALANCE);
    // Ops' resume asks at once (the probe), and the accepted probe takes the wall down.
    expect((await opsApi(stack)('POST', '/ops/transfers/resume', { reason: 'balance topped up' })).status).toBe(200);
    const settled = await statusIs(orderId, 'settled');
    expect(await readBalanceWall(db)).toBeNull();

    expect(await calls('payments.fetch')).toBe(fetchesBefore);
    expect(await calls('transfers.create')).toBeGreaterThanOrEqual(createsBefore + 2);
    const transfers = await transfersFor(orderId);
    expect(transfers.map((t) => [t.amount, t.status, (t.notes as Record<string, string>).transaction_id])).toEqual([[NET, 'processed', settled!.id]]);
    expect((await attemptOutcomes(db, settled!.id)).slice(-2)).toEqual(['accepted', 'settled']);
    expect(await attemptOutcomes(db, settled!.id)).toContain('rejected');
    const { rows } = await db.query('SELECT capture_confirmed_at IS NOT NULL AS confirmed, capture_confirmed_by FROM payments WHERE id = $1', [payment.id]);
    expect(rows).toEqual([{ confirmed: true, capture_confirmed_by: 'listing' }]);
  });

  test('when Razorpay is unreachable for the listing and then for the capture check, then nothing is sent, the claim is released to failed without spending an attempt, and after the backoff the payment is asked again and the transfer goes once', async () => {
    const { orderId, gatewayOrderId } = await placeOnlineOrder();
    // The listing pass fails, so the capture it covered is asked for alone; that fails too.
    await control().injectFault({ endpoint: 'payments.list', fault: { kind: 'server_error_before' }, probability: 1 });
    await control().injectFault({ endpoint: 'payments.fetch', fault: { kind: 'server_error_before' }, calls: [1] });
    const fetchesBefore = await calls('payments.fetch');
    await control().payOrder(gatewayOrderId);

    const settled = await statusIs(orderId, 'settled', 'review', 'parked');
    expect(settled).toMatchObject({ status: 'settled', attempts: 2 });
    expect(await calls('payments.fetch')).toBe(fetchesBefore + 2);
    expect((await attempts(settled!.id)).map((a) => [a.outcome, a.provider_code])).toEqual([['not_sent', 'CAPTURE_CHECK_FAILED'], ['accepted', null], ['settled', null]]);
    const { rows } = await db.query('SELECT attempt_limit FROM payouts WHERE id = $1', [settled!.id]);
    expect(rows).toEqual([{ attempt_limit: stack.config.PAYOUT_ATTEMPT_CAP + 1 }]); // the failed check's attempt given back
    expect((await transfersFor(orderId)).map((t) => t.amount)).toEqual([NET]);
  });

  test('when twelve online orders are paid within a second, then one listing pass or a few confirm every capture: no payments.fetch, each vendor paid once, the passes recorded', async () => {
    await control().setPlatformBalance(BALANCE);
    const fetchesBefore = await calls('payments.fetch');
    const listingsBefore = await calls('payments.list');
    const passesBefore = Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM provider_listing_passes')).rows[0]!.n);
    const orders = await Promise.all(Array.from({ length: 12 }, () => placeOnlineOrder()));
    const payments = await Promise.all(orders.map((o) => control().payOrder(o.gatewayOrderId)));
    for (const o of orders) await statusIs(o.orderId, 'settled');

    expect(await calls('payments.fetch')).toBe(fetchesBefore);
    const listings = (await calls('payments.list')) - listingsBefore;
    expect(listings).toBeGreaterThanOrEqual(1);
    expect(listings).toBeLessThanOrEqual(4);
    const passes = (await db.query<{ pages: number; confirmed: number; error: string | null }>(
      'SELECT pages, confirmed, error FROM provider_listing_passes ORDER BY id OFFSET $1', [passesBefore])).rows;
    expect(passes.reduce((n, p) => n + p.pages, 0)).toBe(listings);
    expect(passes.reduce((n, p) => n + p.confirmed, 0)).toBe(12);
    expect(passes.every((p) => p.error === null)).toBe(true);
    const confirmedBy = (await db.query('SELECT DISTINCT capture_confirmed_by FROM payments WHERE id = ANY($1)', [payments.map((p) => p.id)])).rows;
    expect(confirmedBy).toEqual([{ capture_confirmed_by: 'listing' }]);
    for (const o of orders) expect((await transfersFor(o.orderId)).map((t) => t.amount)).toEqual([NET]);
    // The passes ran inside these payouts' own runs, on the reads budget's task queue; one is kept for the replay test.
    const listers: string[] = [];
    const waiters: string[] = [];
    for (const o of orders) {
      const history = await stack.temporal.client.workflow.getHandle(payoutWorkflowId(o.orderId)).fetchHistory();
      // A run that found a pass in flight (or too recent) waited on a durable timer, not in the worker.
      if (history.events?.some((e) => e.timerStartedEventAttributes)) waiters.push(o.orderId);
      const pass = history.events?.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'listPaymentsForCaptures');
      if (pass) {
        expect(pass.activityTaskScheduledEventAttributes!.taskQueue!.name).toBe(`${stack.temporal.taskQueue}-razorpay-reads`);
        listers.push(o.orderId);
      }
    }
    expect(listers.length).toBe(passes.length);
    await recordHistory(stack.temporal.client, payoutWorkflowId(listers[0]!), 'payout-capture-listing');
    if (waiters[0]) await recordHistory(stack.temporal.client, payoutWorkflowId(waiters[0]), 'payout-capture-listing-waited');
  });

  test('when more than a page of payments was made at Razorpay since the capture, then its pass reads them a page per call, each an activity on the reads budget, and confirms it', async () => {
    await control().setWebhookDelivery(false);
    const { orderId, gatewayOrderId } = await placeOnlineOrder();
    const payment = await control().payOrder(gatewayOrderId);
    // 150 payments of other merchants' checkouts made after ours, before its webhook reaches us.
    for (let i = 0; i < 150; i += 25) {
      await Promise.all(Array.from({ length: 25 }, async () => control().payOrder((await h.gateway.createOrder({ amountPaise: 500, receipt: uniqueRef('other'), notes: {} })).id)));
    }
    const listingsBefore = await calls('payments.list');
    const fetchesBefore = await calls('payments.fetch');
    await control().setWebhookDelivery(true);
    await statusIs(orderId, 'settled');
    expect(await calls('payments.fetch')).toBe(fetchesBefore);
    const [pass] = (await db.query<{ pages: number; items: number; confirmed: number }>(
      `SELECT pages, items, confirmed FROM provider_listing_passes WHERE listed_from_s <= $1 ORDER BY id DESC LIMIT 1`, [payment.created_at])).rows;
    expect(pass).toMatchObject({ pages: 2, confirmed: 1 });
    expect(pass!.items).toBeGreaterThanOrEqual(151);
    expect((await calls('payments.list')) - listingsBefore).toBe(2);
    const history = await stack.temporal.client.workflow.getHandle(payoutWorkflowId(orderId)).fetchHistory();
    const pages = (history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'listPaymentsForCaptures');
    expect(pages.map((e) => e.activityTaskScheduledEventAttributes!.taskQueue!.name)).toEqual([`${stack.temporal.taskQueue}-razorpay-reads`, `${stack.temporal.taskQueue}-razorpay-reads`]);
    await recordHistory(stack.temporal.client, payoutWorkflowId(orderId), 'payout-capture-listing-two-pages');
  });

  test('when the listing of payments fails, then each capture its pass covered is fetched alone, once, and paid once', async () => {
    await control().injectFault({ endpoint: 'payments.list', fault: { kind: 'server_error_before' }, probability: 1 });
    const fetchesBefore = await calls('payments.fetch');
    const orders = await Promise.all(Array.from({ length: 3 }, () => placeOnlineOrder()));
    await Promise.all(orders.map((o) => control().payOrder(o.gatewayOrderId)));
    for (const o of orders) await statusIs(o.orderId, 'settled');
    expect(await calls('payments.fetch')).toBe(fetchesBefore + 3);
    for (const o of orders) expect((await transfersFor(o.orderId)).map((t) => t.amount)).toEqual([NET]);
    await recordHistory(stack.temporal.client, payoutWorkflowId(orders[0]!.orderId), 'payout-capture-listing-failed');
  });

  test('when Razorpay captured a different amount than the one recorded for the order, then the payout waits in review with CAPTURE_NOT_CONFIRMED and nothing is sent', async () => {
    // Razorpay holds a captured payment of 1 500 paise on this gateway order; money in recorded 1 000
    // (what a tampered payload said). Delivery is off so the sandbox's own webhooks do not race the seed.
    await control().setWebhookDelivery(false);
    const gatewayOrder = await h.gateway.createOrder({ amountPaise: 1_500, receipt: uniqueRef('capture-amount'), notes: {} });
    const payment = await control().payOrder(gatewayOrder.id);
    const seeded = await seedPaidOrder(db, {
      linkedAccountId, ...ORDER, commissionBps: 1_900,
      payment: { id: payment.id, gatewayOrderId: gatewayOrder.id, amountPaise: ORDER.customerSharePaise, confirmed: false },
    });
    const createsBefore = await calls('transfers.create');
    await temporalPayoutStarter(stack.temporal.client, stack.temporal.taskQueue).startPayout(seeded.orderId);

    const payout = await statusIs(seeded.orderId, 'review', 'accepted', 'settled');
    expect(payout).toMatchObject({ status: 'review', last_code: 'CAPTURE_NOT_CONFIRMED' });
    expect((await attempts(payout!.id))[0]!.raw!.why).toEqual(['Razorpay captured 1500 paise, we recorded 1000']);
    expect(await calls('transfers.create')).toBe(createsBefore);
    expect(await control().transfers({ recipient: linkedAccountId }).then((ts) => ts.filter((t) => (t.notes as Record<string, string>).order_id === seeded.orderId))).toEqual([]);
  });
});
