/** Issue 36 item 6: a signed payment.captured whose amount is not the order's customer share must not
 * put the book ahead of the truth. The order is held (`capture_mismatch`, not `paid`), the vendor
 * statement and the open offline ledger do not count it, the payout waits in `review`
 * (AMOUNT_MISMATCH) in the ops queue and finance has an `amount-mismatch`; the payment row and the
 * webhook stay recorded. Ops' decision on the payout ends the hold: the order is `paid` from then,
 * audited. Real API (signed webhooks), Temporal worker, PostgreSQL and the sandbox. */
import { randomUUID } from 'node:crypto';
import type { Db } from '../../src/db/pool';
import { addDays, istDateOf } from '../../src/domain/calendar';
import type { Statement } from '../../src/statements/contract';
import { http, postWebhook, uniqueRef, type MoneyInHarness } from './moneyinHarness';
import { call } from './offlineOrders';
import { eventually, payoutRow } from './payoutSeed';
import { opsApi, PAIR_ORDER, PAIR_ORDER_NET_PAISE, startPayoutStackWithPair, type PayoutStack } from './payoutStack';
import { envelope, exceptionsFor } from './webhooksHarness';

const EMPLOYER = 'emp_mismatch';
const VENDOR = 'ven_mismatch';
const CAPTURED_PAISE = 1_500; // the customer share is 1 000

describe('money in: a capture for the wrong amount holds its order until ops decide', () => {
  let stack: PayoutStack;
  let h: MoneyInHarness;
  let db: Db;
  let linkedAccountId: string;

  beforeAll(async () => {
    ({ stack, h, linkedAccountId } = await startPayoutStackWithPair({
      name: 'capture-mismatch', employerId: EMPLOYER, vendorId: VENDOR,
      env: { PAYOUT_HUMAN_RECHECK_MS: '60000', PAYOUT_RETRY_BACKOFF_MS: '300', PAYOUT_RETRY_BACKOFF_MAX_MS: '600' },
    }));
    db = stack.db;
  });

  afterAll(async () => {
    await stack?.close();
  });

  const today = () => istDateOf(new Date());
  const statement = async (): Promise<Statement> => {
    const answer = await call(stack, stack.keys.finance, 'GET', `/v1/vendors/${VENDOR}/statement?from=${addDays(today(), -1)}&to=${addDays(today(), 1)}`);
    expect(answer.status).toBe(200);
    return answer.body as Statement;
  };
  const orderRow = async (orderId: string) =>
    (await db.query('SELECT status, paid_at, paid_via, paid_payment_id FROM orders WHERE id = $1', [orderId])).rows[0];
  const openLedger = async (orderId: string) => (await db.query('SELECT id FROM offline_ledger_open WHERE order_id = $1', [orderId])).rowCount;
  const ops = () => opsApi(stack);

  /** An online order whose payment the sandbox authorised for the customer share, then a
   * payment.captured signed with our webhook secret that says Razorpay captured 1 500 paise. */
  async function capturedForTheWrongAmount(): Promise<{ orderId: string; paymentId: string; body: string }> {
    const placed = await http(h, 'POST', '/v1/orders', {
      clientReference: uniqueRef('mismatch'), employerId: EMPLOYER, vendorId: VENDOR, employeeId: 'e-mismatch', ...PAIR_ORDER, paymentMethod: 'online',
    });
    expect(placed.status).toBe(201);
    const { orderId, gatewayOrderId } = placed.body.order as { orderId: string; gatewayOrderId: string };
    const payment = await stack.sandbox.control.authorizeOrder(gatewayOrderId);
    await stack.sandbox.control.drainWebhooks();
    const captured = { ...payment, status: 'captured', captured: true, amount: CAPTURED_PAISE, fee: 30, tax: 0 };
    const body = envelope(h, 'payment.captured', { payment: captured });
    expect((await postWebhook(h, body, { eventId: `evt_${randomUUID()}` })).status).toBe(200);
    return { orderId, paymentId: payment.id, body };
  }

  test('when a signed payment.captured is for more than the customer share, then the order is held, not paid; the statement and the open ledger do not count it; the payout waits in review in the ops queue; the payment and the webhook are kept; a redelivery changes nothing', async () => {
    const { orderId, paymentId, body } = await capturedForTheWrongAmount();

    expect(await orderRow(orderId)).toEqual({ status: 'capture_mismatch', paid_at: null, paid_via: 'webhook', paid_payment_id: paymentId });
    // The payment row keeps its first-seen amount (the authorisation's); the capture is in its raw snapshot.
    expect((await db.query(`SELECT status, order_id, (raw->>'amount')::int AS captured_paise FROM payments WHERE id = $1`, [paymentId])).rows)
      .toEqual([{ status: 'captured', order_id: orderId, captured_paise: CAPTURED_PAISE }]);
    expect((await db.query(`SELECT count(*)::int AS n FROM processed_events WHERE event_type = 'payment.captured'`)).rows[0].n).toBeGreaterThanOrEqual(1);
    const payout = await eventually(() => payoutRow(db, orderId), (p) => !!p);
    expect(payout).toMatchObject({ status: 'review', last_code: 'AMOUNT_MISMATCH', provider_transfer_id: null });
    expect(await exceptionsFor(db, { reason: 'amount-mismatch', orderId })).toEqual([expect.objectContaining({
      status: 'open', entity_id: paymentId, expected_paise: 1_000, actual_paise: CAPTURED_PAISE,
    })]);
    const queue = await ops()('GET', '/ops/payouts?reason=AMOUNT_MISMATCH');
    expect(queue.body.items).toEqual([expect.objectContaining({ orderId, status: 'review' })]);
    expect((await ops()('GET', `/ops/payouts/${orderId}`)).body.order).toMatchObject({ orderId, status: 'capture_mismatch', paidAt: null });
    // Who held it and why, in the order's audit trail.
    expect((await db.query('SELECT from_status, to_status, actor FROM order_status_changes WHERE order_id = $1', [orderId])).rows)
      .toEqual([{ from_status: 'pending', to_status: 'capture_mismatch', actor: 'system:money-in' }]);

    const s = await statement();
    expect(s.lines.filter((l) => l.orderId === orderId)).toEqual([]);
    expect(s.totals.transfer.awaitingPaise).toBe(0);
    expect(await openLedger(orderId)).toBe(0);

    const before = await orderRow(orderId);
    expect((await postWebhook(h, body, { eventId: `evt_${randomUUID()}` })).status).toBe(200);
    expect(await orderRow(orderId)).toEqual(before);
    expect(await payoutRow(db, orderId)).toMatchObject({ status: 'review', last_code: 'AMOUNT_MISMATCH' });
  });

  test('when a second payment is captured on a held order, then it is refunded as a duplicate charge and the order stays held on the first', async () => {
    const { orderId, paymentId } = await capturedForTheWrongAmount();
    const { gatewayOrderId } = (await db.query('SELECT gateway_order_id AS "gatewayOrderId" FROM orders WHERE id = $1', [orderId])).rows[0];
    const second = await stack.sandbox.control.payOrder(gatewayOrderId);
    await stack.sandbox.control.drainWebhooks();

    const refunds = await eventually(async () => (await db.query('SELECT reason, amount_paise FROM refunds WHERE payment_id = $1', [second.id])).rows, (r) => r.length === 1);
    expect(refunds).toEqual([{ reason: 'duplicate_capture', amount_paise: PAIR_ORDER.customerSharePaise }]);
    expect(await orderRow(orderId)).toEqual({ status: 'capture_mismatch', paid_at: null, paid_via: 'webhook', paid_payment_id: paymentId });
  });

  test('when ops mark the held payout paid externally, then the order is paid from the decision on, audited, and the statement shows it paid outside the app', async () => {
    const { orderId } = await capturedForTheWrongAmount();
    await eventually(() => payoutRow(db, orderId), (p) => p?.status === 'review');
    expect(await orderRow(orderId)).toMatchObject({ status: 'capture_mismatch', paid_at: null });

    const decided = await ops()('POST', `/ops/payouts/${orderId}/mark-paid-externally`, { reason: 'customer paid 5 rupees extra; vendor paid by NEFT', reference: 'NEFT-MISMATCH-1' });
    expect(decided.status).toBe(200);
    expect(decided.body.payout).toMatchObject({ status: 'settled' });
    const order = await orderRow(orderId);
    expect(order).toMatchObject({ status: 'paid', paid_via: 'webhook' });
    expect(order.paid_at).toBeInstanceOf(Date);
    expect((await db.query('SELECT from_status, to_status, actor FROM order_status_changes WHERE order_id = $1 ORDER BY id', [orderId])).rows).toEqual([
      { from_status: 'pending', to_status: 'capture_mismatch', actor: 'system:money-in' },
      { from_status: 'capture_mismatch', to_status: 'paid', actor: expect.stringMatching(/asha/) },
    ]);

    const line = (await statement()).lines.find((l) => l.orderId === orderId);
    expect(line?.paidBy).toMatchObject({ rail: 'transfer', status: 'settled', externalReference: 'NEFT-MISMATCH-1', amountPaise: PAIR_ORDER_NET_PAISE });
  });

  test('when ops retry the held payout, then the order is paid and the payout is claimed again: its capture check finds Razorpay does not confirm the capture and holds it, nothing is sent', async () => {
    const { orderId } = await capturedForTheWrongAmount();
    await eventually(() => payoutRow(db, orderId), (p) => p?.status === 'review');
    expect(await orderRow(orderId)).toMatchObject({ status: 'capture_mismatch', paid_at: null });

    const decided = await ops()('POST', `/ops/payouts/${orderId}/retry`, { reason: 'the customer was charged the fee; accepted' });
    expect(decided.status).toBe(200);
    expect(await orderRow(orderId)).toMatchObject({ status: 'paid' });
    const payout = await eventually(() => payoutRow(db, orderId), (p) => p?.last_code === 'CAPTURE_NOT_CONFIRMED', 30_000);
    expect(payout).toMatchObject({ status: 'review', provider_transfer_id: null });
    const transfers = (await stack.sandbox.control.transfers({ recipient: linkedAccountId })).filter((t) => (t.notes as Record<string, string>).order_id === orderId);
    expect(transfers).toEqual([]);
  });

  test('when ops cancel the held payout, then the order is paid and its statement line says the payout was cancelled: not owed', async () => {
    const { orderId } = await capturedForTheWrongAmount();
    await eventually(() => payoutRow(db, orderId), (p) => p?.status === 'review');
    expect(await orderRow(orderId)).toMatchObject({ status: 'capture_mismatch', paid_at: null });

    const decided = await ops()('POST', `/ops/payouts/${orderId}/cancel`, { reason: 'customer refunded from the dashboard' });
    expect(decided.status).toBe(200);
    expect(await orderRow(orderId)).toMatchObject({ status: 'paid' });
    const line = (await statement()).lines.find((l) => l.orderId === orderId);
    expect(line?.paidBy).toMatchObject({ rail: 'not_owed', payoutStatus: 'cancelled' });
  });
});
