/** A webhook secret rotation loses no delivery: Razorpay signs retries of older events with the
 * secret they were first sent with, so the previous secret stays accepted beside the current one. */
import { hmacSha256Hex } from '../../src/gateway/signatures';
import { http, postWebhook, seedPair, snapshot, startMoneyInHarness, topUp, uniqueRef, type MoneyInHarness } from './moneyinHarness';

const ROTATED = 'whk-rotated-2026-12-01';
const UNKNOWN = 'whk-someone-elses-secret';

describe('money in: webhook secret rotation', () => {
  let h: MoneyInHarness;

  beforeAll(async () => {
    // The app's current secret is the new one; the sandbox still signs with the old one.
    h = await startMoneyInHarness({ config: { RAZORPAY_WEBHOOK_SECRET: ROTATED, RAZORPAY_WEBHOOK_PREVIOUS_SECRETS: ['sandbox_webhook_secret'] } });
    await seedPair(h, { employerId: 'emp_rot', vendorId: 'ven_rot', commissionBps: 1_900 });
  });

  afterAll(async () => {
    await h?.close();
  });

  test('when an event is signed with the previous secret during a rotation, then it is accepted and takes effect', async () => {
    await topUp(h, 'employer', 'emp_rot', 100_000); // credited only if the old-secret webhook was accepted
    const { rows } = await h.db.query(`SELECT balance_paise FROM wallets WHERE owner_id = 'emp_rot'`);
    expect(rows[0].balance_paise).toBe(100_000);
    const placed = await http(h, 'POST', '/v1/orders', { clientReference: uniqueRef('rot'), employerId: 'emp_rot', vendorId: 'ven_rot', employeeId: 'e1', totalPaise: 10_000, subsidyPaise: 9_900, customerSharePaise: 100, paymentMethod: 'online' });
    await h.sandbox.control.payOrder(placed.body.order.gatewayOrderId);
    await h.sandbox.control.drainWebhooks();
    expect((await h.db.query('SELECT status FROM orders WHERE id = $1', [placed.body.order.orderId])).rows[0].status).toBe('paid');
  });

  test('when an event is signed with the current secret, then it is accepted; with any other secret, 401 and nothing is written', async () => {
    // A real event body as the sandbox sent it (order.paid for an order already paid: no effect twice).
    const body = (await h.sandbox.control.webhookEvents()).filter((e) => e.event === 'order.paid').at(-1)!.body;
    const current = await postWebhook(h, body, { eventId: 'evt_rotation_current', signature: hmacSha256Hex(body, ROTATED) });
    expect(current.status).toBe(200);
    const before = await snapshot(h.db);
    const other = await postWebhook(h, body, { eventId: 'evt_rotation_other', signature: hmacSha256Hex(body, UNKNOWN) });
    expect([other.status, other.body.error.code]).toEqual([401, 'invalid_signature']);
    expect(await snapshot(h.db)).toEqual(before);
  });
});
