/** Settlement evidence: transfers stay pending at the sandbox until the test moves them on, so the
 * webhook (or the poll) decides. A transfer.failed after acceptance means not paid: the payout is
 * retried with a fresh key and paid exactly once. */
import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../src/api/server';
import { loadConfig, type Config } from '../../src/config/config';
import { payoutWorkflowId, type PayoutWorkflowResult } from '../../src/contracts/payout';
import type { Db } from '../../src/db/pool';
import { createGateway } from '../../src/gateway';
import { temporalPayoutStarter } from '../../src/payouts/temporalStarter';
import { startSandbox, type RunningSandbox } from '../../src/sandbox';
import { isolatedPool } from '../support/db';
import { startTestWorker, type TestTemporal } from '../support/temporal';
import { attemptOutcomes, eventually, payoutRow, recordHistory, seedPaidOrder } from './payoutSeed';

describe('payouts: settlement evidence after acceptance', () => {
  let db: Db;
  let sandbox: RunningSandbox;
  let temporal: TestTemporal;
  let api: FastifyInstance;
  let config: Config;

  beforeAll(async () => {
    ({ db } = await isolatedPool());
    const defaults = loadConfig();
    sandbox = await startSandbox({ keyId: defaults.RAZORPAY_KEY_ID, keySecret: defaults.RAZORPAY_KEY_SECRET, webhookSecret: defaults.RAZORPAY_WEBHOOK_SECRET, transferProcessingDelayMs: 600_000, webhookRetryBaseMs: 200 });
    const taskQueue = `payout-settlement-${Date.now()}`;
    config = loadConfig({ ...process.env, RAZORPAY_BASE_URL: sandbox.baseUrl, TEMPORAL_TASK_QUEUE: taskQueue, PAYOUT_SETTLEMENT_POLL_MS: '60000', PAYOUT_RETRY_BACKOFF_MS: '200' });
    const gateway = createGateway(config);
    temporal = await startTestWorker({ db, config, gateway }, taskQueue);
    api = await buildApi({ config, db, gateway, temporal: temporal.client, payoutStarter: temporalPayoutStarter(temporal.client, taskQueue) });
    const apiUrl = await api.listen({ port: 0, host: '127.0.0.1' });
    await sandbox.control.setWebhookTarget(`${apiUrl}/webhooks/razorpay`);
  });

  afterAll(async () => {
    await api?.close();
    await temporal?.close();
    await sandbox?.close();
    await db?.end();
  });

  test('when an accepted transfer fails at the provider (transfer.failed), then the payout is retried with a fresh key and exactly one transfer is processed', async () => {
    const control = sandbox.control;
    const account = await control.createLinkedAccount();
    const order = await seedPaidOrder(db, { linkedAccountId: account });
    await temporalPayoutStarter(temporal.client, temporal.taskQueue).startPayout(order.orderId);
    const accepted = await eventually(() => payoutRow(db, order.orderId), (r) => r?.status === 'accepted');
    // Accepted is not settled: nothing settles it while the provider holds the transfer pending.
    await new Promise((r) => setTimeout(r, 500));
    expect((await payoutRow(db, order.orderId))?.status).toBe('accepted');

    await control.processPendingTransfers({ fail: [accepted!.provider_transfer_id!] });
    const retried = await eventually(() => payoutRow(db, order.orderId), (r) => r?.status === 'accepted' && r.attempts === 2);
    expect(retried!.idempotency_key).not.toBe(order.payoutId);
    await control.processPendingTransfers();
    const result = (await temporal.client.workflow.getHandle(payoutWorkflowId(order.orderId)).result()) as PayoutWorkflowResult;
    expect(result).toMatchObject({ kind: 'finished', status: 'settled', attempts: 2 });

    const transfers = await control.transfers({ recipient: account });
    expect(transfers.map((t) => t.status).sort()).toEqual(['failed', 'processed']);
    const processed = transfers.filter((t) => t.status === 'processed');
    expect(processed).toHaveLength(1);
    expect(processed[0]).toMatchObject({ amount: 8_100, notes: { transaction_id: order.payoutId, order_id: order.orderId } });
    expect(await payoutRow(db, order.orderId)).toMatchObject({ status: 'settled', provider_transfer_id: processed[0]!.id });
    expect(await attemptOutcomes(db, order.payoutId!)).toEqual(['accepted', 'failed_after_accept', 'accepted', 'settled']);
    await recordHistory(temporal.client, payoutWorkflowId(order.orderId), 'payout-failed-after-accept');
  });
});
