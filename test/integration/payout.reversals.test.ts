/** Issue 19 item 3: a direct transfer reversed after it settled (here from the Razorpay Dashboard, the
 * sandbox's control route that does what the Dashboard does, from outside our app). The
 * transfer.reversed webhook is a hint: the transfer and its reversals are fetched, the reversal is
 * recorded with the provider's evidence, and the payout is owed again — parked TRANSFER_REVERSED in
 * the ops queue, nothing sent by itself. Ops retry starts the completed run again and sends exactly
 * one new transfer under a fresh key; pay offline lists the order in the open offline ledger; a
 * partial reversal refuses both. Recon matches the reversal row and raises one our rows do not know.
 * Real API (signed webhooks from the sandbox), Temporal worker, PostgreSQL and the sandbox. */
import { payoutWorkflowId, type PayoutWorkflowResult } from '../../src/contracts/payout';
import { reconWorkflowId } from '../../src/contracts/recon';
import type { Db } from '../../src/db/pool';
import { rebuildLedger } from '../../src/ledger/backfill';
import { addDays, istDateOf } from '../../src/domain/calendar';
import { reconWorkflow } from '../../src/workflows/recon';
import { payoutSweepWorkflow } from '../../src/workflows/payoutSweep';
import { http, postWebhook, uniqueRef, type MoneyInHarness } from './moneyinHarness';
import { attemptOutcomes, eventually, payoutRow } from './payoutSeed';
import { opsApi, PAIR_ORDER, PAIR_ORDER_NET_PAISE, startPayoutStackWithPair, type PayoutStack } from './payoutStack';

const EMPLOYER = 'emp_reversals';
const VENDOR = 'ven_reversals';
const ORDER = PAIR_ORDER;
const NET = PAIR_ORDER_NET_PAISE;

describe('payouts: a settled direct transfer reversed later', () => {
  let stack: PayoutStack;
  let db: Db;
  let h: MoneyInHarness;
  let linkedAccountId: string;

  beforeAll(async () => {
    ({ stack, h, linkedAccountId } = await startPayoutStackWithPair({
      name: 'reversals', employerId: EMPLOYER, vendorId: VENDOR,
      env: { PAYOUT_RETRY_BACKOFF_MS: '300', PAYOUT_RETRY_BACKOFF_MAX_MS: '600', PAYOUT_SETTLEMENT_POLL_MS: '1000', PAYOUT_HUMAN_RECHECK_MS: '60000', BANK_HOLIDAYS: '' },
    }));
    db = stack.db;
  });

  afterAll(async () => {
    await stack?.close();
  });

  const control = () => stack.sandbox.control;
  const ops = () => opsApi(stack);
  const transfersFor = async (orderId: string) => (await control().transfers({ recipient: linkedAccountId })).filter((t) => (t.notes as Record<string, string>).order_id === orderId);
  const statusIs = async (orderId: string, ...statuses: string[]) => (await eventually(() => payoutRow(db, orderId), (p) => !!p && statuses.includes(p.status)))!;
  const reversalsOf = async (orderId: string) => (await db.query(
    `SELECT id, transfer_id, split_order_id, amount_paise::int AS amount_paise, transfer_amount_paise::int AS transfer_amount_paise, made_by, owed_paise::int AS owed_paise, evidence
       FROM transfer_reversals WHERE order_id = $1 ORDER BY recorded_at, id`, [orderId])).rows;
  const createCalls = async () => (await control().callCounts())['transfers.create'] ?? 0;

  /** An order paid online whose ₹81 direct transfer has settled; its transfer id. */
  async function settledPayout(): Promise<{ orderId: string; transferId: string }> {
    const placed = await http(h, 'POST', '/v1/orders', {
      clientReference: uniqueRef('reversal'), employerId: EMPLOYER, vendorId: VENDOR, employeeId: 'e-reversal', ...ORDER, paymentMethod: 'online',
    });
    expect(placed.status).toBe(201);
    await control().payOrder(placed.body.order.gatewayOrderId);
    const orderId = placed.body.order.orderId as string;
    const settled = await statusIs(orderId, 'settled');
    await (stack.temporal.client.workflow.getHandle(payoutWorkflowId(orderId)).result() as Promise<PayoutWorkflowResult>);
    return { orderId, transferId: settled.provider_transfer_id! };
  }

  async function reverseFromDashboard(transferId: string, amountPaise?: number) {
    const reversal = await control().reverseTransferFromDashboard(transferId, amountPaise === undefined ? {} : { amountPaise });
    await control().drainWebhooks();
    return reversal;
  }

  test('when a settled direct transfer is reversed from the dashboard, then the payout is parked TRANSFER_REVERSED with the provider\'s evidence, in the ops queue, nothing is sent by itself, and ops retry sends exactly one new transfer', async () => {
    const { orderId, transferId } = await settledPayout();
    expect(await control().linkedAccountBalance(linkedAccountId)).toBe(NET);
    const keyBefore = (await payoutRow(db, orderId))!.idempotency_key;

    const reversal = await reverseFromDashboard(transferId);
    expect(reversal).toMatchObject({ entity: 'reversal', transfer_id: transferId, amount: NET, customer_refund_id: null });
    const events = (await control().webhookEvents()).filter((e) => e.event === 'transfer.reversed' && e.body.includes(transferId));
    expect(events).toHaveLength(1);
    expect(JSON.parse(events[0]!.body)).toMatchObject({ event: 'transfer.reversed', contains: ['transfer'], payload: { transfer: { entity: { id: transferId, status: 'reversed', amount_reversed: NET } } } });

    const parked = await statusIs(orderId, 'parked');
    expect(parked).toMatchObject({ status: 'parked', last_code: 'TRANSFER_REVERSED', provider_transfer_id: transferId });
    // A fresh key: a retry under the old one would be answered with the reversed transfer.
    expect(parked.idempotency_key).not.toBe(keyBefore);
    expect(await reversalsOf(orderId)).toEqual([expect.objectContaining({
      id: reversal.id, transfer_id: transferId, split_order_id: null, amount_paise: NET, transfer_amount_paise: NET, made_by: 'outside', owed_paise: NET,
      evidence: expect.objectContaining({ source: 'webhook transfer.reversed', reversal: expect.objectContaining({ id: reversal.id }), transfer: expect.objectContaining({ status: 'reversed' }) }),
    })]);
    expect(await attemptOutcomes(db, parked.id)).toEqual(['accepted', 'settled', 'reversed']);

    const queue = await ops()('GET', '/ops/payouts?reason=TRANSFER_REVERSED');
    expect(queue.body.items).toEqual([expect.objectContaining({
      orderId, status: 'parked', reason: expect.objectContaining({ code: 'TRANSFER_REVERSED', words: expect.stringMatching(/reversed/), nextStep: expect.stringMatching(/retry .*or pay offline/) }),
    })]);

    // Nothing is sent by itself: not by the webhook, not by the payout sweep.
    const callsBefore = await createCalls();
    await stack.temporal.client.workflow.execute(payoutSweepWorkflow, { workflowId: `reversal-sweep-${Date.now()}`, taskQueue: stack.temporal.taskQueue, args: [{ batchSize: 100 }] });
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await createCalls()).toBe(callsBefore);
    expect(await transfersFor(orderId)).toEqual([expect.objectContaining({ id: transferId, status: 'reversed' })]);
    expect(await control().linkedAccountBalance(linkedAccountId)).toBe(0);

    // Ops retry: the run had completed; it starts again and sends one new transfer under the new key.
    const retried = await ops()('POST', `/ops/payouts/${orderId}/retry`, { reason: 'the vendor confirmed the reversal was a mistake' });
    expect(retried.status).toBe(200);
    const settledAgain = await statusIs(orderId, 'settled');
    expect(settledAgain.provider_transfer_id).not.toBe(transferId);
    expect(await createCalls()).toBe(callsBefore + 1);
    const transfers = await transfersFor(orderId);
    expect(transfers.map((t) => [t.id, t.status, t.amount]).sort()).toEqual([[transferId, 'reversed', NET], [settledAgain.provider_transfer_id, 'processed', NET]].sort());
    expect(await control().idempotencyKeyOf(settledAgain.provider_transfer_id!)).toBe(parked.idempotency_key);
    expect(await control().linkedAccountBalance(linkedAccountId)).toBe(NET);
    expect(await (stack.temporal.client.workflow.getHandle(payoutWorkflowId(orderId)).result() as Promise<PayoutWorkflowResult>)).toMatchObject({ kind: 'finished', status: 'settled' });
    const audit = await db.query('SELECT action, actor FROM review_actions WHERE payout_id = $1', [parked.id]);
    expect(audit.rows).toEqual([{ action: 'retry', actor: 'key:test-ops (asha)' }]);

    // A repeated transfer.reversed (Razorpay delivers at least once) records nothing new and moves nothing.
    expect((await postWebhook(h, events[0]!.body, { eventId: `evt_again${Date.now()}` })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 500));
    expect(await payoutRow(db, orderId)).toMatchObject({ status: 'settled', provider_transfer_id: settledAgain.provider_transfer_id });
    expect(await reversalsOf(orderId)).toHaveLength(1);
  });

  test('when ops retry a reversed payout and the retry is rejected (the vendor\'s account suspended meanwhile), then the payout parks on the rejection, the reversed transfer still the one that paid the net; once the account is back a retry pays it once', async () => {
    const { orderId, transferId } = await settledPayout();
    await reverseFromDashboard(transferId);
    await statusIs(orderId, 'parked');
    await control().setLinkedAccountStatus(linkedAccountId, 'suspended');
    try {
      expect((await ops()('POST', `/ops/payouts/${orderId}/retry`, { reason: 'the vendor asked us to send it again' })).status).toBe(200);
      const rejected = await eventually(() => payoutRow(db, orderId), (p) => p?.last_code === 'BAD_REQUEST_TRANSFER_NOT_ALLOWED_TO_SUSPENDED_LINKED_ACCOUNT');
      expect(rejected).toMatchObject({ status: 'parked' });
    } finally {
      await control().setLinkedAccountStatus(linkedAccountId, 'activated');
    }
    const discharges = async () => (await db.query(
      `SELECT d.kind, d.provider_ref, d.state FROM ledger_discharges d JOIN payouts p ON p.id = d.payout_id WHERE p.order_id = $1 ORDER BY d.id`, [orderId])).rows;
    expect(await discharges()).toEqual([{ kind: 'order_transfer', provider_ref: transferId, state: 'paid' }]);
    expect((await ops()('POST', `/ops/payouts/${orderId}/retry`, { reason: 'the account is active again' })).status).toBe(200);
    const settled = await statusIs(orderId, 'settled');
    expect((await transfersFor(orderId)).filter((t) => t.status === 'processed').map((t) => t.id)).toEqual([settled.provider_transfer_id]);
    expect(await discharges()).toEqual([
      { kind: 'order_transfer', provider_ref: transferId, state: 'paid' },
      { kind: 'order_transfer', provider_ref: settled.provider_transfer_id, state: 'paid' },
    ]);
    // What the rails wrote is what their rows say.
    expect((await rebuildLedger(db)).disagreements).toEqual([]);
  });

  test('when the ledger\'s discharge ids cross a digit boundary (the reversed transfer\'s 999, the retry\'s 1000), then the retry\'s transfer is still the discharge its settlement marks paid', async () => {
    // Found by the fault campaign (seed 20261201): the payout's latest discharge was picked by the
    // id read as text, where "999" sorts after "1000", so the retry's in-flight discharge was never
    // named after its transfer nor marked paid, and recon raised ledger-drift.
    await db.query(`SELECT setval('ledger_discharges_id_seq', 998)`);
    const { orderId, transferId } = await settledPayout();
    await reverseFromDashboard(transferId);
    await statusIs(orderId, 'parked');
    expect((await ops()('POST', `/ops/payouts/${orderId}/retry`, { reason: 'the vendor asked us to send it again' })).status).toBe(200);
    const settled = await statusIs(orderId, 'settled');
    const discharges = (await db.query(
      `SELECT d.id::int AS id, d.instrument, d.state FROM ledger_discharges d JOIN payouts p ON p.id = d.payout_id WHERE p.order_id = $1 ORDER BY d.id`, [orderId])).rows;
    expect(discharges).toEqual([
      { id: 999, instrument: transferId, state: 'paid' },
      { id: 1000, instrument: settled.provider_transfer_id, state: 'paid' },
    ]);
    expect((await rebuildLedger(db)).disagreements).toEqual([]);
  });

  test('when ops pay a reversed payout offline instead, then it is offline, holds no transfer, its line is in the open offline ledger, and nothing is sent', async () => {
    const { orderId, transferId } = await settledPayout();
    await reverseFromDashboard(transferId);
    await statusIs(orderId, 'parked');
    const callsBefore = await createCalls();

    const decided = await ops()('POST', `/ops/payouts/${orderId}/pay-offline`, { reason: 'the vendor asked for NEFT after the reversal' });
    expect(decided.status).toBe(200);
    expect(decided.body.payout).toMatchObject({ status: 'offline', providerTransferId: null });
    const open = await db.query('SELECT amount_paise::int AS amount_paise, route FROM offline_ledger_open WHERE order_id = $1', [orderId]);
    expect(open.rows).toEqual([{ amount_paise: NET, route: 'direct_transfer' }]);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await createCalls()).toBe(callsBefore);
    expect(await payoutRow(db, orderId)).toMatchObject({ status: 'offline' });
  });

  test('when a settled transfer is reversed in part, then the payout is parked with the reversed amount in its evidence, and retry and pay offline are refused (either would pay the whole net again)', async () => {
    const { orderId, transferId } = await settledPayout();
    const reversal = await reverseFromDashboard(transferId, 3_000);
    const parked = await statusIs(orderId, 'parked');
    expect(parked).toMatchObject({ last_code: 'TRANSFER_PARTIALLY_REVERSED', provider_transfer_id: transferId });
    expect(await reversalsOf(orderId)).toEqual([expect.objectContaining({ id: reversal.id, amount_paise: 3_000, transfer_amount_paise: NET, owed_paise: 3_000 })]);
    const attempt = (await db.query(`SELECT raw FROM payout_attempts WHERE payout_id = $1 AND outcome = 'reversed'`, [parked.id])).rows[0];
    expect(attempt.raw).toMatchObject({ reversedPaise: 3_000, keptByVendorPaise: NET - 3_000 });

    for (const path of ['retry', 'pay-offline']) {
      const refused = await ops()('POST', `/ops/payouts/${orderId}/${path}`, { reason: 'try it' });
      expect([path, refused.status, refused.body.error?.code]).toEqual([path, 409, 'transfer_partially_reversed']);
    }
    expect(await payoutRow(db, orderId)).toMatchObject({ status: 'parked', last_code: 'TRANSFER_PARTIALLY_REVERSED' });

    // The rest is reversed later: now wholly reversed, the payout may be retried or paid offline.
    await reverseFromDashboard(transferId);
    await eventually(() => payoutRow(db, orderId), (p) => p?.last_code === 'TRANSFER_REVERSED');
    expect(await reversalsOf(orderId)).toHaveLength(2);
    const offline = await ops()('POST', `/ops/payouts/${orderId}/pay-offline`, { reason: 'paid by NEFT' });
    expect(offline.status).toBe(200);
  });

  describe('recon', () => {
    /** The sandbox settles on `day` (a credit adjustment keeps the settlement positive). */
    async function settleOn(day: string): Promise<void> {
      await control().injectAdjustment({ amountPaise: 1_000_000, description: 'keeps the settlement positive', date: day });
      expect(await control().runSettlements({ date: day, holidays: [] })).toHaveLength(1);
    }
    async function reconcile(from: string, to: string): Promise<void> {
      const window = { from, to, asOf: addDays(to, 1) };
      // The test servers share one namespace: another file may reconcile the same window at once.
      await stack.temporal.client.workflow.execute(reconWorkflow, { workflowId: `${reconWorkflowId(window)}-${stack.temporal.taskQueue}`, taskQueue: stack.temporal.taskQueue, args: [window] });
    }
    const rowsOf = async (...ids: string[]) => (await db.query('SELECT entity_id, type FROM recon_rows WHERE entity_id = ANY($1) ORDER BY type', [ids])).rows;
    const exceptionsOf = async (...ids: string[]) => (await db.query('SELECT reason, class, severity, entity_id, actual_paise::int AS actual_paise FROM recon_exceptions WHERE entity_id = ANY($1)', [ids])).rows;

    test('when the settlement report carries a reversal our rows know, then its row and the reversed transfer\'s row are matched; one they do not know (its webhook lost) is reversal-not-in-app', async () => {
      const today = istDateOf(new Date(await control().now()));
      const known = await settledPayout();
      const lost = await settledPayout();
      await settleOn(addDays(today, 7));

      const knownReversal = await reverseFromDashboard(known.transferId);
      await statusIs(known.orderId, 'parked');
      // Razorpay's webhook for the other never reaches us: our rows know nothing of that reversal.
      await control().setWebhookDelivery(false);
      const lostReversal = await control().reverseTransferFromDashboard(lost.transferId);
      await settleOn(addDays(today, 8));
      await reconcile(addDays(today, 7), addDays(today, 8));

      expect(await rowsOf(known.transferId, knownReversal.id)).toEqual([{ entity_id: knownReversal.id, type: 'reversal' }, { entity_id: known.transferId, type: 'transfer' }]);
      expect(await exceptionsOf(known.transferId, knownReversal.id)).toEqual([]);
      expect(await exceptionsOf(lostReversal.id)).toEqual([{ reason: 'reversal-not-in-app', class: 'unmatched', severity: 'high', entity_id: lostReversal.id, actual_paise: NET }]);
      expect(await payoutRow(db, lost.orderId)).toMatchObject({ status: 'settled' });
    });
  });
});
