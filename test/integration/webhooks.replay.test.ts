/** Issue 21 item 7: a signed body replays for ever unless its own created_at is checked. An event
 * older than the replay window (24 h, Razorpay's retry span, plus the clock skew) or ahead of our
 * clock by more than the skew is answered 2xx, kept in quarantined_webhooks with its reason, counted,
 * and applies nothing. And the event id is never the guard: a body already applied, replayed under a
 * fresh id, changes nothing but processed_events. Real API, PostgreSQL and sandbox. */
import { randomUUID } from 'node:crypto';
import { hmacSha256Hex } from '../../src/gateway/signatures';
import { http, postWebhook, snapshot, startHarnessWithPair, walletBalance, type MoneyInHarness } from './moneyinHarness';
import { everyTable, paidAtCheckout } from './webhooksHarness';

const EMPLOYER = 'emp_replay';
const VENDOR = 'ven_replay';
const DAY = 86_400;

describe('webhooks: the replay window, and replays under fresh event ids', () => {
  let h: MoneyInHarness;

  // Delivery stays off (paidAtCheckout): the test posts each event itself.
  beforeAll(async () => { h = await startHarnessWithPair({ employerId: EMPLOYER, vendorId: VENDOR }); });

  afterAll(async () => {
    await h?.close();
  });

  const paid = () => paidAtCheckout(h, { employerId: EMPLOYER, vendorId: VENDOR });
  const captureOf = (events: Array<{ event: string; body: string }>) => events.find((e) => e.event === 'payment.captured')!.body;
  /** The same event, created at another time, signed again: what a holder of a captured body cannot do, but Razorpay's own late retry or a skewed clock would look like. */
  const createdAt = (body: string, unixSeconds: number): string => JSON.stringify({ ...JSON.parse(body), created_at: unixSeconds });
  const nowSec = () => Math.floor(Date.now() / 1000);
  const orderStatus = async (orderId: string) => (await h.db.query('SELECT status FROM orders WHERE id = $1', [orderId])).rows[0].status as string;
  const kept = async (eventId: string) => (await h.db.query('SELECT event_id, event_type, reason, signature, raw_body, problem FROM quarantined_webhooks WHERE event_id = $1', [eventId])).rows;
  const setAsideCount = async (reason: string) => {
    const text = await (await fetch(`${h.baseUrl}/metrics`)).text();
    return Number(new RegExp(`^payouts_webhook_set_aside_total\\{reason="${reason}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? NaN);
  };

  test.each([
    ['older than 24 h and the skew', () => nowSec() - DAY - 301, 'too_old'],
    ['a week old', () => nowSec() - 7 * DAY, 'too_old'],
    ['more than the skew (5 min) ahead of our clock', () => nowSec() + 600, 'from_future'],
  ])('when a signed payment.captured is %s, then it is answered 2xx set aside, kept with its reason, counted, and the order stays pending', async (_name, when, reason) => {
    const { orderId, events } = await paid();
    const body = createdAt(captureOf(events), when());
    const countBefore = await setAsideCount(reason);
    const before = await everyTable(h.db);
    const eventId = `evt_${randomUUID()}`;

    const answer = await postWebhook(h, body, { eventId });
    expect([answer.status, answer.body]).toEqual([200, { status: 'ok', eventId, event: 'payment.captured', duplicate: false, actedOn: false, setAside: reason }]);
    expect(await everyTable(h.db)).toEqual(before);
    expect(await orderStatus(orderId)).toBe('pending');
    const [row] = await kept(eventId);
    expect(row).toMatchObject({ event_type: 'payment.captured', reason, signature: hmacSha256Hex(body, h.config.RAZORPAY_WEBHOOK_SECRET), problem: expect.objectContaining({ maxAgeSeconds: DAY, clockSkewSeconds: 300 }) });
    expect(row.raw_body.toString('utf8')).toBe(body);
    expect(await setAsideCount(reason)).toBe(countBefore + 1);

    // The same event again (Razorpay redelivers): one row, 2xx, still nothing applied.
    expect((await postWebhook(h, body, { eventId })).body).toMatchObject({ duplicate: true, setAside: reason });
    expect(await kept(eventId)).toHaveLength(1);
    expect(await orderStatus(orderId)).toBe('pending');
  });

  test('when a signed payment.captured is 23 h old or 4 min ahead (a last retry, a clock a little off), then it is applied', async () => {
    for (const when of [nowSec() - 23 * 3_600, nowSec() + 240]) {
      const { orderId, events } = await paid();
      const answer = await postWebhook(h, createdAt(captureOf(events), when), { eventId: `evt_${randomUUID()}` });
      expect([answer.status, answer.body.actedOn, answer.body.setAside]).toEqual([200, true, undefined]);
      expect(await orderStatus(orderId)).toBe('paid');
    }
  });

  test('when a body already applied is replayed under fresh event ids (payment.captured, order.paid, a top-up capture), then nothing changes but processed_events', async () => {
    const { orderId, events } = await paid();
    const topup = await http(h, 'POST', `/v1/wallets/employer/${EMPLOYER}/top-ups`, { amountPaise: 50_000 });
    await h.sandbox.control.payOrder(topup.body.topup.gatewayOrderId);
    const topupEvents = (await h.sandbox.control.webhookEvents()).filter((e) => e.body.includes(topup.body.topup.gatewayOrderId));
    const balanceBefore = await walletBalance(h, 'employer', EMPLOYER);
    const delivered = [...events, ...topupEvents].filter((e) => ['payment.captured', 'order.paid'].includes(e.event));
    expect(delivered.map((e) => e.event).sort()).toEqual(['order.paid', 'order.paid', 'payment.captured', 'payment.captured']);
    for (const e of delivered) expect((await postWebhook(h, e.body, { eventId: e.id })).status).toBe(200);
    expect(await orderStatus(orderId)).toBe('paid');
    expect(await walletBalance(h, 'employer', EMPLOYER)).toBe(balanceBefore + 50_000);

    const applied = await snapshot(h.db);
    for (const e of delivered) {
      const answer = await postWebhook(h, e.body, { eventId: `evt_${randomUUID()}` });
      expect([e.event, answer.status, answer.body.duplicate]).toEqual([e.event, 200, false]);
    }
    const withoutEvents = (s: Record<string, unknown[]>) => ({ ...s, processed_events: [] });
    expect(withoutEvents(await snapshot(h.db))).toEqual(withoutEvents(applied));
    expect(await walletBalance(h, 'employer', EMPLOYER)).toBe(balanceBefore + 50_000);
  });
});
