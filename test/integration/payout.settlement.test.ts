/** Settlement evidence: transfers stay pending at the sandbox until the test moves them on, so the
 * webhook (or the poll) decides. A transfer.failed after acceptance means not paid: the payout is
 * retried with a fresh key and paid exactly once. */
import { payoutWorkflowId, type PayoutWorkflowResult } from '../../src/contracts/payout';
import type { Db } from '../../src/db/pool';
import { temporalPayoutStarter } from '../../src/payouts/temporalStarter';
import type { RunningSandbox } from '../../src/sandbox';
import type { TestTemporal } from '../support/temporal';
import { attemptOutcomes, eventually, payoutRow, recordHistory, seedPaidOrder } from './payoutSeed';
import { startPayoutStack, type PayoutStack } from './payoutStack';

describe('payouts: settlement evidence after acceptance', () => {
  let stack: PayoutStack;
  let db: Db;
  let sandbox: RunningSandbox;
  let temporal: TestTemporal;

  beforeAll(async () => {
    // Transfers stay pending until the test moves them on; the poll is too slow to matter.
    stack = await startPayoutStack({
      name: 'payout-settlement', env: { PAYOUT_SETTLEMENT_POLL_MS: '60000', PAYOUT_RETRY_BACKOFF_MS: '200' }, sandbox: { transferProcessingDelayMs: 600_000 },
    });
    ({ db, sandbox, temporal } = stack);
  });

  afterAll(async () => {
    await stack?.close();
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
