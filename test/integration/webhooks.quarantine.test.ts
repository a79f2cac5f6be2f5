/** Issue 21 item 13: a correctly signed webhook our schema refuses is authentic. Answering it 4xx
 * would have Razorpay retry it for 24 h and then disable the endpoint (and every payment.captured
 * with it), so it is answered 2xx and quarantined: its exact body, event id, signature and the parse
 * issues kept, counted, listed for ops. What it would have done is recovered elsewhere: a quarantined
 * payment.captured's order is still paid by the missed-webhook sweep. Unsigned and non-JSON requests
 * keep their 4xx. Real API, PostgreSQL, sandbox and Temporal (for the sweep). */
import { randomBytes, randomUUID } from 'node:crypto';
import { hmacSha256Hex } from '../../src/gateway/signatures';
import { missedWebhookSweepWorkflowId } from '../../src/contracts/missedWebhookSweep';
import { missedWebhookSweepWorkflow } from '../../src/workflows/missedWebhookSweep';
import { startTestWorker, type TestTemporal } from '../support/temporal';
import { http, ops, postWebhook, startHarnessWithPair, type MoneyInHarness } from './moneyinHarness';
import { envelope, everyTable, paidAtCheckout } from './webhooksHarness';

const PAIR = { employerId: 'emp_quarantine', vendorId: 'ven_quarantine' };

describe('webhooks: a signed event our schema refuses is quarantined, answered 2xx', () => {
  let h: MoneyInHarness;
  let temporal: TestTemporal;

  // Delivery stays off (paidAtCheckout): the test posts each event itself; the worker runs the sweep.
  beforeAll(async () => {
    h = await startHarnessWithPair(PAIR);
    temporal = await startTestWorker({ gateway: h.gateway, config: h.config, db: h.db });
  });

  afterAll(async () => {
    await temporal?.close();
    await h?.close();
  });

  /** An order paid at the checkout, and its undelivered payment.captured. */
  const paidAndCaptured = async () => {
    const { orderId, events } = await paidAtCheckout(h, PAIR);
    return { orderId, captured: events.find((e) => e.event === 'payment.captured')! };
  };

  const changed = (body: string, change: (event: Record<string, any>) => void): string => { // eslint-disable-line @typescript-eslint/no-explicit-any
    const event = JSON.parse(body);
    change(event);
    return JSON.stringify(event);
  };
  const setAsideCount = async () => {
    const text = await (await fetch(`${h.baseUrl}/metrics`)).text();
    return Number(/^payouts_webhook_set_aside_total\{reason="schema_refused"\} (\d+)/m.exec(text)?.[1] ?? NaN);
  };
  const listed = async (query = 'reason=schema_refused&limit=200') => (await http(h, 'GET', `/ops/webhooks/quarantine?${query}`, undefined, ops(h))).body;

  test('when a signed envelope is refused (created_at a string, a payload missing, an ill-formed event name, a dispute without its dispute), then 2xx, kept with its body, id, signature and issues, counted, listed for ops, and nothing else is written', async () => {
    const { captured } = await paidAndCaptured();
    const bodies: Array<[string, string, string | null]> = [
      ['created_at a string', changed(captured.body, (e) => { e.created_at = String(e.created_at); }), 'payment.captured'],
      ['no payload', changed(captured.body, (e) => { delete e.payload; }), 'payment.captured'],
      ['an ill-formed event name', changed(captured.body, (e) => { e.event = 'Payment Captured'; }), 'Payment Captured'],
      ['a dispute event without its dispute', envelope(h, 'payment.dispute.created', { payment: JSON.parse(captured.body).payload.payment.entity }), 'payment.dispute.created'],
      ['an amount that is a string', changed(captured.body, (e) => { e.payload.payment.entity.amount = '1000'; }), 'payment.captured'],
    ];
    const before = await everyTable(h.db);
    const countBefore = await setAsideCount();
    for (const [name, body, event] of bodies) {
      const eventId = `evt_${randomUUID()}`;
      const answer = await postWebhook(h, body, { eventId });
      expect([name, answer.status, answer.body]).toEqual([name, 200, { status: 'ok', eventId, event, duplicate: false, actedOn: false, setAside: 'schema_refused' }]);
      const { rows } = await h.db.query('SELECT event_type, reason, raw_body, signature, problem FROM quarantined_webhooks WHERE event_id = $1', [eventId]);
      expect([name, rows.length, rows[0].event_type, rows[0].reason, rows[0].signature]).toEqual([name, 1, event, 'schema_refused', hmacSha256Hex(body, h.config.RAZORPAY_WEBHOOK_SECRET)]);
      expect([name, rows[0].raw_body.toString('utf8')]).toEqual([name, body]);
      expect([name, rows[0].problem.issues.length > 0]).toEqual([name, true]);
      const view = (await listed()).events.find((e: { eventId: string }) => e.eventId === eventId);
      expect([name, view]).toEqual([name, expect.objectContaining({ event, reason: 'schema_refused', body, problem: { issues: expect.any(Array) } })]);
    }
    expect(await everyTable(h.db)).toEqual(before);
    expect(await setAsideCount()).toBe(countBefore + bodies.length);
    expect((await listed()).recovery).toMatch(/missed-webhook sweep/);
  });

  test('when a quarantined payment.captured was the only word of a capture, then the missed-webhook sweep still makes its order paid, once', async () => {
    const { orderId, captured } = await paidAndCaptured();
    const refused = changed(captured.body, (e) => { e.payload.payment.entity.amount = '1000'; });
    const answer = await postWebhook(h, refused, { eventId: captured.id });
    expect([answer.status, answer.body.setAside]).toEqual([200, 'schema_refused']);
    expect((await h.db.query('SELECT status FROM orders WHERE id = $1', [orderId])).rows[0].status).toBe('pending');

    const sweep = () => temporal.client.workflow.execute(missedWebhookSweepWorkflow, {
      workflowId: missedWebhookSweepWorkflowId(randomBytes(4).toString('hex')), taskQueue: temporal.taskQueue, args: [{ olderThanMs: 1 }],
    });
    expect((await sweep()).failed).toBe(0);
    expect((await h.db.query('SELECT status, paid_via FROM orders WHERE id = $1', [orderId])).rows[0]).toEqual({ status: 'paid', paid_via: 'sweep' });
    expect((await h.db.query('SELECT amount_paise, status FROM payouts WHERE order_id = $1', [orderId])).rows).toEqual([{ amount_paise: 8_100, status: 'pending' }]);
    // The event's own id was not spent on the refused body: the real delivery still applies (nothing left to do).
    expect((await postWebhook(h, captured.body, { eventId: captured.id })).body).toMatchObject({ duplicate: false, actedOn: true });
    expect((await h.db.query('SELECT count(*)::int AS n FROM payouts WHERE order_id = $1', [orderId])).rows[0].n).toBe(1);
  });

  test('when a request is unsigned, wrongly signed, not JSON, without its event id or over 64 kB, then it keeps its 4xx and nothing is kept', async () => {
    const { captured } = await paidAndCaptured();
    const before = await everyTable(h.db);
    const kept = async () => (await h.db.query('SELECT count(*)::int AS n FROM quarantined_webhooks')).rows[0].n as number;
    const keptBefore = await kept();
    const refused = changed(captured.body, (e) => { delete e.payload; });
    const cases: Array<[string, () => ReturnType<typeof postWebhook>, number, string]> = [
      ['unsigned', () => postWebhook(h, refused, { eventId: `evt_${randomUUID()}`, signature: null }), 401, 'invalid_signature'],
      ['signed with another secret', () => postWebhook(h, refused, { eventId: `evt_${randomUUID()}`, signature: hmacSha256Hex(refused, 'not-the-webhook-secret') }), 401, 'invalid_signature'],
      ['signed, not JSON', () => postWebhook(h, refused.slice(0, -2), { eventId: `evt_${randomUUID()}` }), 400, 'malformed_json'],
      ['signed, no event id', () => postWebhook(h, refused, { eventId: '' }), 400, 'missing_event_id'],
      // Razorpay's largest events are ~15 kB; the route reads at most 64 kB (WEBHOOK_BODY_LIMIT_BYTES).
      ['signed, over 64 kB', () => postWebhook(h, changed(refused, (e) => { e.padding = 'x'.repeat(64 * 1024); }), { eventId: `evt_${randomUUID()}` }), 413, 'body_too_large'],
    ];
    for (const [name, send, status, code] of cases) {
      const answer = await send();
      expect([name, answer.status, answer.body.error.code]).toEqual([name, status, code]);
    }
    expect(await kept()).toBe(keptBefore);
    expect(await everyTable(h.db)).toEqual(before);
  });

  test('when ops page through the quarantine, then newest first, filtered by reason, with beforeId; a bad filter is a 400 envelope', async () => {
    const first = await listed('limit=1');
    expect(first.events).toHaveLength(1);
    expect(first.nextBeforeId).toBe(first.events[0].id);
    const second = await listed(`limit=1&beforeId=${first.nextBeforeId}`);
    expect(second.events[0].id).toBeLessThan(first.events[0].id);
    expect((await listed('reason=too_old')).events).toEqual([]);
    const bad = await http(h, 'GET', '/ops/webhooks/quarantine?reason=everything', undefined, ops(h));
    expect([bad.status, bad.body.error.code]).toEqual([400, 'invalid_request']);
  });
});
