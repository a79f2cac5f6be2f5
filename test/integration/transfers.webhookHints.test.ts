/** Issue 10 item 3: transfer webhooks are hints, not facts. A correctly signed transfer.failed (the
 * webhook secret may have leaked, or Razorpay retries a stale event for 24 h) for a transfer the
 * provider processed never releases the payout, never mints a new key and never puts a paid split in
 * the offline ledger: the app fetches the transfer and acts on what the fetch says. Real Temporal,
 * PostgreSQL and the sandbox; transfers stay pending at the sandbox until the test moves them on. */
import fs from 'node:fs';
import path from 'node:path';
import { payoutWorkflowId, type PayoutWorkflowResult } from '../../src/contracts/payout';
import { temporalPayoutStarter } from '../../src/payouts/temporalStarter';
import { attemptOutcomes, payoutRow, seedPaidOrder } from './payoutSeed';
import { openOfflineLedger, placeSplitOrder, postSignedWebhook, seedVendor, splitRow, startSplitStack, transferEvent, until, type SplitStack } from './splits.support';

describe('transfer webhooks are hints: the provider is asked', () => {
  let s: SplitStack;

  beforeAll(async () => {
    s = await startSplitStack({
      name: 'transfer-hints', env: { PAYOUT_SETTLEMENT_POLL_MS: '60000', PAYOUT_RETRY_BACKOFF_MS: '200' }, sandbox: { transferProcessingDelayMs: 600_000 },
    });
  });
  afterAll(async () => {
    await s?.close();
  });
  afterEach(async () => {
    await s.control.setWebhookDelivery(true);
  });

  async function acceptedPayout() {
    const account = await s.control.createLinkedAccount();
    const order = await seedPaidOrder(s.db, { linkedAccountId: account });
    await temporalPayoutStarter(s.temporal.client, s.temporal.taskQueue).startPayout(order.orderId);
    const accepted = await until(() => payoutRow(s.db, order.orderId), (r) => r?.status === 'accepted');
    const [transfer] = await s.control.transfers({ recipient: account });
    return { account, order, transferId: accepted!.provider_transfer_id!, transfer: transfer! };
  }

  /** The sandbox's snapshot of the transfer dressed up as failed, the way a forged or stale event would carry it. */
  const failedSnapshot = (transfer: object) => ({
    ...transfer, status: 'failed',
    error: { code: 'BAD_REQUEST_TRANSFER_INSUFFICIENT_BALANCE', description: 'Account does not have sufficient balance to carry out transfer operation', reason: 'insufficient_account_balance', field: 'amount', step: 'transfer_processing', source: null, metadata: null },
  });

  test('when a signed transfer.failed arrives for a transfer the provider processed, then the payout is settled, never released, and keeps its key', async () => {
    const { account, order, transfer } = await acceptedPayout();
    // The provider processes it, but its transfer.processed never reaches us.
    await s.control.setWebhookDelivery(false);
    await s.control.processPendingTransfers();
    const forged = transferEvent(s, 'transfer.failed', failedSnapshot(transfer));
    expect((await postSignedWebhook(s, forged, 'evt_ForgedFailed0001')).status).toBe(200);

    // The fetch says processed: settled (a release would have shown up as `failed` with a new key).
    expect(await until(() => payoutRow(s.db, order.orderId), (r) => r?.status !== 'accepted')).toMatchObject({ status: 'settled', idempotency_key: order.payoutId });
    const result = (await s.temporal.client.workflow.getHandle(payoutWorkflowId(order.orderId)).result()) as PayoutWorkflowResult;
    expect(result).toMatchObject({ kind: 'finished', status: 'settled', attempts: 1 });
    expect(await payoutRow(s.db, order.orderId)).toMatchObject({ status: 'settled', attempts: 1, idempotency_key: order.payoutId, provider_transfer_id: transfer.id });
    expect(await attemptOutcomes(s.db, order.payoutId!)).toEqual(['accepted', 'settled']);

    // Replayed (same event id: a duplicate) and re-sent under a new id: still nothing is released.
    expect((await postSignedWebhook(s, forged, 'evt_ForgedFailed0001')).status).toBe(200);
    expect((await postSignedWebhook(s, forged, 'evt_ForgedFailed0002')).status).toBe(200);
    await new Promise((r) => setTimeout(r, 500));
    expect(await payoutRow(s.db, order.orderId)).toMatchObject({ status: 'settled', attempts: 1, idempotency_key: order.payoutId });
    expect(await attemptOutcomes(s.db, order.payoutId!)).toEqual(['accepted', 'settled']);
    // The provider's own ledger: one transfer, processed.
    const atProvider = await s.control.transfers({ recipient: account });
    expect(atProvider.map((t) => [t.id, t.status])).toEqual([[transfer.id, 'processed']]);
    expect(await s.control.linkedAccountBalance(account)).toBe(order.vendorNetPaise);
  });

  test('when a stale transfer.failed arrives while the provider still holds the transfer pending, then nothing changes until the provider decides', async () => {
    const { account, order, transfer } = await acceptedPayout();
    expect((await postSignedWebhook(s, transferEvent(s, 'transfer.failed', failedSnapshot(transfer)))).status).toBe(200);
    await new Promise((r) => setTimeout(r, 700));
    expect(await payoutRow(s.db, order.orderId)).toMatchObject({ status: 'accepted', attempts: 1, idempotency_key: order.payoutId });
    expect(await attemptOutcomes(s.db, order.payoutId!)).toEqual(['accepted']);

    // The real transfer.processed then settles it (fetched, processed).
    await s.control.processPendingTransfers();
    const result = (await s.temporal.client.workflow.getHandle(payoutWorkflowId(order.orderId)).result()) as PayoutWorkflowResult;
    expect(result).toMatchObject({ kind: 'finished', status: 'settled', attempts: 1 });
    expect((await s.control.transfers({ recipient: account })).map((t) => t.status)).toEqual(['processed']);
  });

  test('when a signed transfer.processed arrives for a transfer the provider failed, then the payout is not settled on its word', async () => {
    const { account, order, transfer } = await acceptedPayout();
    await s.control.setWebhookDelivery(false);
    await s.control.processPendingTransfers({ fail: [transfer.id] });
    expect((await postSignedWebhook(s, transferEvent(s, 'transfer.processed', { ...transfer, status: 'processed' }))).status).toBe(200);
    // The fetch says failed: not paid, retried with a fresh key (exactly what the real transfer.failed does).
    const retried = await until(() => payoutRow(s.db, order.orderId), (r) => (r?.attempts ?? 0) >= 2);
    expect(retried!.idempotency_key).not.toBe(order.payoutId);
    expect(await attemptOutcomes(s.db, order.payoutId!)).toEqual(expect.arrayContaining(['accepted', 'failed_after_accept']));
    expect(await attemptOutcomes(s.db, order.payoutId!)).not.toContain('settled');
    await s.control.setWebhookDelivery(true);
    await until(() => payoutRow(s.db, order.orderId), (r) => r?.status === 'accepted');
    await s.control.processPendingTransfers();
    const result = (await s.temporal.client.workflow.getHandle(payoutWorkflowId(order.orderId)).result()) as PayoutWorkflowResult;
    // Settled by a later transfer. Under load, the queued transfer.failed of the first transfer used to
    // land while the second was being accepted and release it (a third transfer, the vendor paid
    // twice: payout.evidenceRace). What must hold is the provider's ledger: the failed transfer and
    // exactly one processed one.
    expect(result).toMatchObject({ kind: 'finished', status: 'settled' });
    expect(result.kind === 'finished' ? result.attempts : 0).toBeGreaterThanOrEqual(2);
    expect((await s.control.transfers({ recipient: account })).map((t) => t.status).sort()).toEqual(['failed', 'processed']);
  });

  test('when a signed transfer.failed arrives for a split the provider processed, then the split is processed and the vendor is not also owed offline', async () => {
    const vendor = await seedVendor(s, 'hint_split');
    const order = await placeSplitOrder(s, vendor);
    await s.control.payOrder(order.gatewayOrderId);
    await s.control.drainWebhooks();
    expect(await splitRow(s.db, order.orderId)).toMatchObject({ status: 'expected' });
    const [transfer] = (await s.control.transfers({ recipient: vendor.linkedAccountId })).filter((t) => t.source === order.gatewayOrderId);

    await s.control.setWebhookDelivery(false);
    await s.control.processPendingTransfers();
    expect((await postSignedWebhook(s, transferEvent(s, 'transfer.failed', failedSnapshot(transfer!)))).status).toBe(200);
    const row = await until(() => splitRow(s.db, order.orderId), (r) => r?.status !== 'expected');
    expect(row).toMatchObject({ status: 'processed', provider_status: 'processed', provider_transfer_id: transfer!.id });
    expect(await openOfflineLedger(s.db, order.orderId)).toEqual([]);
    expect(await s.control.linkedAccountBalance(vendor.linkedAccountId)).toBe(order.splitPaise);
  });

  test('when transfer.processed comes in the documented shape (no status, extra keys, null note values), then it is read and the fetch settles the payout', async () => {
    const { order, transfer } = await acceptedPayout();
    await s.control.setWebhookDelivery(false);
    await s.control.processPendingTransfers();
    const sample = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../fixtures/razorpay-examples/webhook.transfer.processed.json'), 'utf8'));
    const entity = { ...sample.payload.transfer.entity, id: transfer.id, source: transfer.source, recipient: transfer.recipient, notes: { ...(transfer.notes as object), branch: null } };
    expect(entity.status).toBeUndefined();
    // Sent now: the sample's own created_at is years outside the replay window (issue 21 item 7).
    expect((await postSignedWebhook(s, JSON.stringify({ ...sample, created_at: Math.floor(Date.now() / 1000), payload: { transfer: { entity } } }))).status).toBe(200);
    expect(await until(() => payoutRow(s.db, order.orderId), (r) => r?.status !== 'accepted')).toMatchObject({ status: 'settled', idempotency_key: order.payoutId });
    await s.temporal.client.workflow.getHandle(payoutWorkflowId(order.orderId)).result();
  });

  test('when a transfer webhook names a transfer the provider does not know, then it is acknowledged and nothing changes', async () => {
    const { order, transfer } = await acceptedPayout();
    const unknown = { ...failedSnapshot(transfer), id: 'trf_NotAtProvider0' };
    expect((await postSignedWebhook(s, transferEvent(s, 'transfer.failed', { ...unknown, notes: { transaction_id: order.payoutId, order_id: order.orderId } }))).status).toBe(200);
    await new Promise((r) => setTimeout(r, 500));
    expect(await payoutRow(s.db, order.orderId)).toMatchObject({ status: 'accepted', idempotency_key: order.payoutId });
    await s.control.processPendingTransfers();
    await s.temporal.client.workflow.getHandle(payoutWorkflowId(order.orderId)).result();
  });
});
