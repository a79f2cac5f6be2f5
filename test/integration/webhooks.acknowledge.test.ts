/** Issue 10 item 1: every signed, well-formed Razorpay event is answered 2xx (Razorpay disables an
 * endpoint that keeps failing, which would also stop payment.captured), its id recorded in
 * processed_events; a changed byte is 401, a body that is not JSON 400, and one our schema refuses
 * is quarantined (2xx, webhooks.quarantine.test.ts); none of them writes anything else.
 * A disputed payment becomes a recon exception. Real API, PostgreSQL and sandbox entities. */
import { randomUUID } from 'node:crypto';
import { hmacSha256Hex } from '../../src/gateway/signatures';
import type { RzpPayment } from '../../src/gateway/types';
import { logger } from '../../src/logger';
import { saveExceptions } from '../../src/recon/repository';
import { http, postWebhook, startHarnessWithPair, uniqueRef, type MoneyInHarness } from './moneyinHarness';
import { envelope, everyTable, exceptionsFor, rzpId } from './webhooksHarness';

const EMPLOYER = 'emp_ack';
const VENDOR = 'ven_ack';

/** Every event name in ../shared/razorpay-reference.md (§4.3, §6.3 and the Route list). */
const DOCUMENTED = [
  'payment.authorized', 'payment.captured', 'payment.failed', 'order.paid',
  'refund.created', 'refund.processed', 'refund.failed', 'refund.speed_changed',
  'settlement.processed', 'transfer.processed', 'transfer.failed',
  'product.route.activated', 'product.route.needs_clarification', 'product.route.under_review',
];
/** Named in issue 10 beside them. */
const ALSO = [
  'payment.dispute.created', 'payment.dispute.won', 'payment.dispute.lost', 'payment.dispute.closed',
  'payment.dispute.under_review', 'payment.dispute.action_required', 'transfer.reversed',
];
/** Well-formed names we have never heard of (Razorpay adds events). */
const UNKNOWN = ['payment.downtime.started', 'virtual_account.credited', 'zz_future.something_happened'];

describe('webhooks: acknowledged but not acted on', () => {
  let h: MoneyInHarness;
  let payment: RzpPayment;
  let order: Record<string, unknown>;

  beforeAll(async () => {
    h = await startHarnessWithPair({ employerId: EMPLOYER, vendorId: VENDOR });
    await h.sandbox.control.setWebhookDelivery(false); // the test posts every event itself
    const placed = await http(h, 'POST', '/v1/orders', {
      clientReference: uniqueRef('ack'), employerId: EMPLOYER, vendorId: VENDOR, employeeId: 'e-ack',
      totalPaise: 10_000, subsidyPaise: 9_000, customerSharePaise: 1_000, paymentMethod: 'online',
    });
    expect(placed.status).toBe(201);
    payment = await h.sandbox.control.payOrder(placed.body.order.gatewayOrderId);
    order = { ...(await h.gateway.fetchOrder(placed.body.order.gatewayOrderId)) };
  });

  afterAll(async () => {
    await h?.close();
  });

  /** A well-formed payload for each event, built from real sandbox entities where Razorpay has one. */
  async function payloadFor(event: string): Promise<Record<string, unknown>> {
    if (event === 'order.paid') return { payment, order };
    if (event.startsWith('payment.dispute.')) {
      return { payment, dispute: disputeEntity(event.slice('payment.dispute.'.length).replace('created', 'open').replace('action_required', 'under_review')) };
    }
    if (event.startsWith('payment.')) return { payment: { ...payment, status: event === 'payment.failed' ? 'failed' : event === 'payment.authorized' ? 'authorized' : 'captured' } };
    if (event.startsWith('refund.')) {
      // Not a refund of ours: it matches nothing, which is the point (answered, recorded, nothing else).
      const refund = { id: rzpId('rfnd'), entity: 'refund', amount: 1_000, currency: 'INR', payment_id: payment.id, notes: [], receipt: null, acquirer_data: { arn: null },
        created_at: payment.created_at, batch_id: null, status: event === 'refund.failed' ? 'failed' : event === 'refund.created' ? 'pending' : 'processed', speed_processed: 'normal', speed_requested: 'normal' };
      return { refund, payment };
    }
    if (event === 'settlement.processed') {
      return { settlement: { id: rzpId('setl'), entity: 'settlement', amount: 1_524, status: 'processed', fees: 0, tax: 0, utr: 'AXISCN1153863727', created_at: payment.created_at } };
    }
    if (event.startsWith('transfer.')) {
      const transfer = await h.gateway.fetchTransfer(await directTransfer());
      return { transfer: { ...transfer, status: event === 'transfer.reversed' ? 'reversed' : transfer.status } };
    }
    if (event.startsWith('product.route.')) {
      return { merchant_product: { id: rzpId('acc_prd'), merchant_id: 'HrQC2j99ssnSiI', activation_status: event.slice('product.route.'.length), requirements: [] } };
    }
    return { thing: { id: `thing_${randomUUID().slice(0, 8)}`, entity: 'thing' } };
  }

  let transferId: string | null = null;
  async function directTransfer(): Promise<string> {
    if (transferId) return transferId;
    const account = await h.sandbox.control.createLinkedAccount();
    const key = randomUUID();
    const outcome = await h.gateway.createDirectTransfer({ account, amountPaise: 8_100, idempotencyKey: key, notes: { transaction_id: key, order_id: 'ord_NotOursXXXXXXX' } });
    if (outcome.type !== 'accepted') throw new Error(`transfer not accepted: ${JSON.stringify(outcome)}`);
    transferId = outcome.entity.id;
    return transferId;
  }

  const disputeId = rzpId('disp');
  function disputeEntity(status: string, amountDeducted = 0) {
    return {
      id: disputeId, entity: 'dispute', payment_id: payment.id, amount: 1_000, currency: 'INR', amount_deducted: amountDeducted,
      reason_code: 'chargeback', respond_by: payment.created_at + 7 * 86_400, status, phase: 'chargeback', created_at: payment.created_at,
    };
  }

  test('when every documented event name, the dispute events and unknown well-formed names arrive signed and well formed, then each is answered 2xx and its id recorded', async () => {
    const info = jest.spyOn(logger, 'info');
    const warn = jest.spyOn(logger, 'warn');
    try {
      for (const event of [...DOCUMENTED, ...ALSO, ...UNKNOWN]) {
        const eventId = `evt_${randomUUID()}`;
        const answer = await postWebhook(h, envelope(h, event, await payloadFor(event)), { eventId });
        expect({ event, status: answer.status }).toEqual({ event, status: 200 });
        expect(answer.body).toMatchObject({ status: 'ok', eventId, event, duplicate: false });
        const recorded = await h.db.query('SELECT event_type FROM processed_events WHERE event_id = $1', [eventId]);
        expect({ event, recorded: recorded.rows }).toEqual({ event, recorded: [{ event_type: event }] });
      }
      // Logged with its name: at info for a documented event we ignore, at warn for a name we do not know.
      expect(info).toHaveBeenCalledWith(expect.objectContaining({ event: 'product.route.activated' }), 'webhook acknowledged: an event we do not act on');
      expect(info).toHaveBeenCalledWith(expect.objectContaining({ event: 'refund.speed_changed' }), 'webhook acknowledged: an event we do not act on');
      expect(warn).toHaveBeenCalledWith(expect.objectContaining({ event: 'zz_future.something_happened' }), 'webhook acknowledged: an event name we do not know');
    } finally {
      info.mockRestore();
      warn.mockRestore();
    }
  });

  test('when an acknowledged event is delivered twice, then the second is a duplicate and nothing changes', async () => {
    const body = envelope(h, 'product.route.under_review', await payloadFor('product.route.under_review'));
    const eventId = `evt_${randomUUID()}`;
    expect((await postWebhook(h, body, { eventId })).body).toMatchObject({ duplicate: false, actedOn: false });
    const before = await everyTable(h.db);
    expect((await postWebhook(h, body, { eventId })).body).toMatchObject({ duplicate: true, actedOn: false });
    expect(await everyTable(h.db)).toEqual(before);
  });

  test('when one byte of a correctly signed body is changed, then every event is refused with 401 and nothing is written', async () => {
    const before = await everyTable(h.db);
    for (const event of [...DOCUMENTED, ...ALSO, ...UNKNOWN]) {
      const body = envelope(h, event, await payloadFor(event));
      const signed = hmacSha256Hex(body, h.config.RAZORPAY_WEBHOOK_SECRET);
      const at = body.indexOf('"created_at":') + '"created_at":'.length;
      const tampered = body.slice(0, at) + (body[at] === '1' ? '2' : '1') + body.slice(at + 1);
      expect(tampered).not.toBe(body);
      const answer = await postWebhook(h, tampered, { eventId: `evt_${randomUUID()}`, signature: signed });
      expect({ event, status: answer.status, code: answer.body?.error?.code }).toEqual({ event, status: 401, code: 'invalid_signature' });
    }
    expect(await everyTable(h.db)).toEqual(before);
  });

  test('when a signed body is not JSON, then it is 400; one that is not an event (no payload, an ill-formed event name) is quarantined, answered 2xx (issue 21 item 13); neither writes anything else', async () => {
    const before = await everyTable(h.db);
    expect((await postWebhook(h, '{"entity":"event",', { eventId: `evt_${randomUUID()}` })).status).toBe(400);
    const bodies = [
      JSON.stringify({ entity: 'event', account_id: 'acc_x', event: 'payment.captured', contains: [], created_at: 1 }),
      envelope(h, 'Payment Captured!', { thing: { id: 'x' } }),
      envelope(h, 'nodots', { thing: { id: 'x' } }),
    ];
    for (const body of bodies) expect((await postWebhook(h, body, { eventId: `evt_${randomUUID()}` })).body).toMatchObject({ status: 'ok', actedOn: false, setAside: 'schema_refused' });
    expect(await everyTable(h.db)).toEqual(before);
  });

  test('when a payment is disputed, then finance sees a payment-disputed exception with the payment and amount that a recon run does not clear, and winning the dispute resolves it (audited)', async () => {
    const id = rzpId('disp');
    const dispute = (status: string) => ({ ...disputeEntity(status), id });
    const post = (event: string, status: string) => postWebhook(h, envelope(h, event, { payment, dispute: dispute(status) }), { eventId: `evt_${randomUUID()}` });
    expect((await post('payment.dispute.created', 'open')).status).toBe(200);
    const ourOrder = (await h.db.query('SELECT order_id FROM payments WHERE id = $1', [payment.id])).rows[0].order_id;
    expect(ourOrder).toEqual(expect.stringMatching(/^ord_/));
    expect((await exceptionsFor(h.db, { reason: 'payment-disputed' })).filter((e) => e.key === `payment-disputed|${id}`)).toEqual([
      expect.objectContaining({ class: 'unmatched', severity: 'high', status: 'open', entity_id: payment.id, order_id: ourOrder, expected_paise: 1_000, actual_paise: 0,
        raised_by: 'event', details: expect.objectContaining({ disputeId: id, status: 'open', lastEvent: 'payment.dispute.created' }) }),
    ]);

    // A recon run over that day finds nothing of the sort: it must not clear what an event raised.
    const day = new Date(payment.created_at * 1000 + 5.5 * 3_600_000).toISOString().slice(0, 10);
    await saveExceptions(h.db, 'run-after-dispute', { from: day, to: day }, []);
    const ours = async () => (await exceptionsFor(h.db, { reason: 'payment-disputed' })).find((e) => e.key === `payment-disputed|${id}`);
    expect(await ours()).toMatchObject({ status: 'open' });

    expect((await post('payment.dispute.under_review', 'under_review')).status).toBe(200);
    expect(await ours()).toMatchObject({ status: 'open', details: expect.objectContaining({ status: 'under_review' }) });
    expect((await post('payment.dispute.won', 'won')).status).toBe(200);
    expect(await ours()).toMatchObject({ status: 'resolved', resolved_by: 'razorpay:payment.dispute.won' });
    const actions = await h.db.query(`SELECT a.actor, a.action FROM recon_exception_actions a JOIN recon_exceptions e ON e.id = a.exception_id WHERE e.key = $1`, [`payment-disputed|${id}`]);
    expect(actions.rows).toEqual([{ actor: 'razorpay:payment.dispute.won', action: 'resolve' }]);
    // A late event about an earlier stage changes nothing.
    expect((await post('payment.dispute.action_required', 'under_review')).status).toBe(200);
    expect(await ours()).toMatchObject({ status: 'resolved', details: expect.objectContaining({ status: 'won' }) });
  });

  test('when a dispute is lost, then its exception stays open with the deducted amount and says what to do; an earlier-stage event arriving late does not undo it', async () => {
    const id = rzpId('disp');
    const post = (event: string, status: string, deducted = 0) =>
      postWebhook(h, envelope(h, event, { payment, dispute: { ...disputeEntity(status, deducted), id } }), { eventId: `evt_${randomUUID()}` });
    expect((await post('payment.dispute.lost', 'lost', 1_000)).status).toBe(200);
    expect((await post('payment.dispute.created', 'open')).status).toBe(200);
    const found = (await exceptionsFor(h.db, { reason: 'payment-disputed' })).find((e) => e.key === `payment-disputed|${id}`);
    expect(found).toMatchObject({ status: 'open', actual_paise: 1_000, details: expect.objectContaining({ status: 'lost', amountDeductedPaise: 1_000 }) });
    expect(found!.next_action).toMatch(/Dispute lost/);
  });

  test('when a dispute event carries no dispute entity, then it is quarantined (2xx, issue 21 item 13) and nothing else is written', async () => {
    const before = await everyTable(h.db);
    const answer = await postWebhook(h, envelope(h, 'payment.dispute.created', { payment }), { eventId: `evt_${randomUUID()}` });
    expect([answer.status, answer.body.setAside]).toEqual([200, 'schema_refused']);
    expect(await everyTable(h.db)).toEqual(before);
  });
});
