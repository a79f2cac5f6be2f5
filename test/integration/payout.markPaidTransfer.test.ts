/** Issue 19 item 6: "mark paid externally" takes the provider transfer. A payout in review whose
 * request may have landed (IDEMPOTENCY_KEY_EXPIRED, RESOLVER_LISTING_FAILING) is marked paid with the
 * `trf_…` id ops found; the API fetches it from the provider first and stores it as the payout's
 * transfer only if it carries the payout's note, amount and account and is not failed or reversed,
 * so recon matches it instead of raising `transfer-not-in-app`. Real API, Temporal worker,
 * PostgreSQL and the sandbox through the SDK; every refusal is checked to change nothing. */
import { randomUUID } from 'node:crypto';
import { reconWorkflowId } from '../../src/contracts/recon';
import { payoutWorkflowId, type PayoutWorkflowResult } from '../../src/contracts/payout';
import type { Db } from '../../src/db/pool';
import { addDays, istDateOf } from '../../src/domain/calendar';
import { createGateway } from '../../src/gateway';
import type { Gateway, RzpTransfer } from '../../src/gateway/types';
import type { SandboxControl } from '../../src/sandbox/control';
import { temporalPayoutStarter } from '../../src/payouts/temporalStarter';
import { reconWorkflow } from '../../src/workflows/recon';
import { eventually, payoutRow, seedPaidOrder, type SeededOrder } from './payoutSeed';
import { opsApi, startPayoutStack, type PayoutStack } from './payoutStack';

describe('payouts: mark paid externally with the provider transfer', () => {
  let stack: PayoutStack;
  let db: Db;
  let control: SandboxControl;
  let gateway: Gateway;

  beforeAll(async () => {
    stack = await startPayoutStack({
      name: 'mark-paid-transfer',
      // Transfers stay pending until a test processes them (control.processPendingTransfers).
      sandbox: { transferProcessingDelayMs: 600_000 },
      env: {
        GATEWAY_TIMEOUT_MS: '1500',
        PAYOUT_TRANSFER_TIMEOUT_MS: '3000',
        PAYOUT_STALE_CLAIM_MS: '4000',
        PAYOUT_SETTLEMENT_POLL_MS: '500',
        PAYOUT_HUMAN_RECHECK_MS: '60000',
        BANK_HOLIDAYS: '',
      },
    });
    ({ db } = stack);
    control = stack.sandbox.control;
    gateway = createGateway(stack.config);
    await control.setPlatformBalance(10_000_000);
  });

  afterAll(async () => {
    await stack?.close();
  });

  afterEach(async () => {
    await control.clearFaults();
  });

  const handle = (orderId: string) => stack.temporal.client.workflow.getHandle(payoutWorkflowId(orderId));
  const markPaid = (orderId: string, body: Record<string, unknown>) => opsApi(stack)('POST', `/ops/payouts/${orderId}/mark-paid-externally`, body);

  /** A payout whose request went out 25 hours ago and whose key is past the provider's retention: the
   * run finds nothing around the send and puts it in review, waiting for ops. */
  async function inReviewKeyExpired(): Promise<SeededOrder & { account: string }> {
    const account = await control.createLinkedAccount();
    const order = await seedPaidOrder(db, { linkedAccountId: account });
    await db.query(
      `UPDATE payouts SET status = 'processing', attempts = 1, claimed_at = now() - interval '25 hours',
              request_sent_at = now() - interval '25 hours', key_first_sent_at = now() - interval '25 hours' WHERE id = $1`, [order.payoutId]);
    await temporalPayoutStarter(stack.temporal.client, stack.temporal.taskQueue).startPayout(order.orderId);
    await eventually(() => payoutRow(db, order.orderId), (p) => p?.status === 'review', 20_000);
    return { ...order, account };
  }

  /** A transfer at the provider as our send would have made it (the payout's note), or with one thing changed. */
  async function providerTransfer(o: SeededOrder & { account: string }, change: { account?: string; amountPaise?: number; payoutId?: string } = {}): Promise<RzpTransfer> {
    const payoutId = change.payoutId ?? o.payoutId!;
    const made = await gateway.createDirectTransfer({
      account: change.account ?? o.account, amountPaise: change.amountPaise ?? o.vendorNetPaise, idempotencyKey: randomUUID(),
      notes: { transaction_id: payoutId, order_id: o.orderId },
    });
    if (made.type !== 'accepted') throw new Error(`transfer not accepted: ${JSON.stringify(made)}`);
    return made.entity;
  }

  /** Everything a refused decision must leave as it was. */
  const snapshot = async (orderId: string) => ({
    payout: (await db.query('SELECT status, provider_transfer_id, external_reference, settled_at, last_code, updated_at FROM payouts WHERE order_id = $1', [orderId])).rows[0],
    decisions: (await db.query('SELECT count(*)::int AS n FROM review_actions r JOIN payouts p ON p.id = r.payout_id WHERE p.order_id = $1', [orderId])).rows[0].n,
  });

  test('when a review payout is marked paid with the processed transfer that carries its note, then the transfer is stored as its own, it is settled at the provider\'s time, the decision names the transfer, and the run finishes settled', async () => {
    const order = await inReviewKeyExpired();
    const transfer = await providerTransfer(order);
    await control.processPendingTransfers();
    const processed = (await control.transfers({ recipient: order.account })).find((t) => t.id === transfer.id)!;
    expect(processed.status).toBe('processed');

    const decided = await markPaid(order.orderId, { reason: 'found the transfer in the Razorpay dashboard', transferId: transfer.id });
    expect(decided.status).toBe(200);
    expect(decided.body).toMatchObject({ alreadyInEffect: false, payout: { status: 'settled', providerTransferId: transfer.id, externalReference: null } });
    const row = (await db.query('SELECT status, provider_transfer_id, settled_at FROM payouts WHERE id = $1', [order.payoutId])).rows[0];
    expect(row).toEqual({ status: 'settled', provider_transfer_id: transfer.id, settled_at: new Date(processed.processed_at! * 1000) });
    const audit = await db.query('SELECT actor, action, reference FROM review_actions WHERE payout_id = $1', [order.payoutId]);
    expect(audit.rows).toEqual([{ actor: 'key:test-ops (asha)', action: 'mark_paid_externally', reference: transfer.id }]);
    expect(await (handle(order.orderId).result() as Promise<PayoutWorkflowResult>)).toMatchObject({ kind: 'finished', status: 'settled' });

    const again = await markPaid(order.orderId, { reason: 'clicked twice', transferId: transfer.id });
    expect([again.status, again.body.alreadyInEffect]).toEqual([200, true]);
    expect(await control.transfers({ recipient: order.account })).toHaveLength(1);
  });

  test('when the transfer is still pending at the provider, then the payout is accepted with it and settles as usual once the provider processes it', async () => {
    const order = await inReviewKeyExpired();
    const transfer = await providerTransfer(order);
    expect(transfer.status).toBe('pending');
    const decided = await markPaid(order.orderId, { reason: 'the transfer is in the dashboard, still pending', transferId: transfer.id });
    expect(decided.status).toBe(200);
    expect(decided.body.payout).toMatchObject({ status: 'accepted', providerTransferId: transfer.id });
    expect((await payoutRow(db, order.orderId))!.status).toBe('accepted');
    await control.processPendingTransfers();
    expect(await (handle(order.orderId).result() as Promise<PayoutWorkflowResult>)).toMatchObject({ kind: 'finished', status: 'settled' });
    expect(await payoutRow(db, order.orderId)).toMatchObject({ status: 'settled', provider_transfer_id: transfer.id });
  });

  test('when the transfer does not match the payout, is unknown, failed or reversed, or is already another payout\'s, then the decision is refused with a code naming it and nothing changes', async () => {
    const order = await inReviewKeyExpired();
    const other = await inReviewKeyExpired();
    const elsewhere = await control.createLinkedAccount();
    const wrongAmount = await providerTransfer(order, { amountPaise: order.vendorNetPaise - 100 });
    const wrongAccount = await providerTransfer(order, { account: elsewhere });
    const othersTransfer = await providerTransfer(other);
    const failed = await providerTransfer(order);
    const reversed = await providerTransfer(order);
    const heldByAnother = await providerTransfer(order);
    await control.processPendingTransfers({ fail: [failed.id] });
    const reversal = await gateway.reverseTransfer({ transferId: reversed.id });
    expect(reversal.type).toBe('accepted');
    // Some other payout row already holds this transfer id (e.g. recorded by its resolver).
    const holder = await seedPaidOrder(db, { linkedAccountId: order.account });
    await db.query(`UPDATE payouts SET status = 'accepted', attempts = 1, provider_transfer_id = $2 WHERE id = $1`, [holder.payoutId, heldByAnother.id]);

    const before = await snapshot(order.orderId);
    const reason = 'found a transfer in the dashboard';
    const refusals: Array<[string, number, string]> = [
      [wrongAmount.id, 422, 'transfer_amount_mismatch'],
      [wrongAccount.id, 422, 'transfer_recipient_mismatch'],
      [othersTransfer.id, 422, 'transfer_note_mismatch'],
      ['trf_DoesNotExist01', 422, 'transfer_not_found'],
      [failed.id, 422, 'transfer_not_paid'],
      [reversed.id, 422, 'transfer_not_paid'],
      [heldByAnother.id, 409, 'transfer_already_recorded'],
    ];
    for (const [transferId, status, code] of refusals) {
      const refused = await markPaid(order.orderId, { reason, transferId });
      expect([transferId, refused.status, refused.body.error?.code]).toEqual([transferId, status, code]);
      expect(await snapshot(order.orderId)).toEqual(before);
    }

    // The provider cannot be asked: 502, nothing changes, and no transaction was opened for it.
    await control.injectFault({ endpoint: 'transfers.fetch', fault: { kind: 'server_error_before' }, probability: 1, seed: 1 });
    const unavailable = await markPaid(order.orderId, { reason, transferId: othersTransfer.id });
    expect([unavailable.status, unavailable.body.error?.code]).toEqual([502, 'gateway_unavailable']);
    expect(await snapshot(order.orderId)).toEqual(before);
    await control.clearFaults();

    // Bad input: neither a reference nor a transfer id, or an id that is not Razorpay's shape.
    expect((await markPaid(order.orderId, { reason })).status).toBe(400);
    expect((await markPaid(order.orderId, { reason, transferId: 'pay_NotATransfer01' })).status).toBe(400);
    expect(await snapshot(order.orderId)).toEqual(before);
    expect((await payoutRow(db, order.orderId))!.status).toBe('review');
    expect((await payoutRow(db, other.orderId))!.status).toBe('review');
  });

  test('when a payout is marked paid with its real transfer, then recon matches the transfer\'s settlement row and raises no transfer-not-in-app for it', async () => {
    const order = await inReviewKeyExpired();
    const transfer = await providerTransfer(order);
    await control.processPendingTransfers();
    // A free-text reference beside the transfer id: before issue 19 only the reference was kept.
    const decided = await markPaid(order.orderId, { reason: 'found the transfer in the Razorpay dashboard', reference: 'dashboard check by Asha', transferId: transfer.id });
    expect(decided.status).toBe(200);

    // The day's settlement carries the transfer (a captured payment keeps it positive). Its webhooks
    // stay with the sandbox: this capture is no order of ours.
    await control.setWebhookDelivery(false);
    await control.capturedPaymentWithoutOrder(5_000_000);
    const day = addDays(istDateOf(new Date(await control.now())), 7);
    const [settlement] = await control.runSettlements({ date: day, holidays: [] });
    expect(settlement).toBeDefined();

    const window = { from: day, to: day, asOf: addDays(day, 1) };
    // The test servers share one namespace: another file may reconcile the same window at once.
    await stack.temporal.client.workflow.execute(reconWorkflow, { workflowId: `${reconWorkflowId(window)}-${stack.temporal.taskQueue}`, taskQueue: stack.temporal.taskQueue, args: [window] });
    const pulled = await db.query(`SELECT type FROM recon_rows WHERE entity_id = $1`, [transfer.id]);
    expect(pulled.rows).toEqual([{ type: 'transfer' }]);
    const raised = await db.query(`SELECT reason, details FROM recon_exceptions WHERE entity_id = $1`, [transfer.id]);
    expect(raised.rows).toEqual([]);
  });
});
