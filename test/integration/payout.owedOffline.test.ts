/** Issue 20 item 1, one rule for owed offline: the open offline ledger lists a payout only once no
 * transfer can pay it (`offline`, `rerouted`), paused or not. Paying a direct-transfer payout by hand
 * is the `pay_offline` decision, allowed from pending, failed, parked and review under the row lock;
 * from review after a request went out it asks Razorpay first and refuses while a live transfer
 * carries the payout's note; a claim never takes an offline row; and a CHECK keeps "offline" and "has
 * a provider transfer" apart. Real API, Temporal worker, PostgreSQL and the sandbox through the SDK. */
import { randomUUID } from 'node:crypto';
import { payoutLines } from '../../src/cli/payouts/ops';
import { payoutStateQuery, payoutWorkflowId, type PayoutWorkflowResult } from '../../src/contracts/payout';
import type { Db } from '../../src/db/pool';
import { createGateway } from '../../src/gateway';
import type { RzpTransfer } from '../../src/gateway/types';
import { setTransfersPaused } from '../../src/payouts/killSwitch';
import { claimPayout } from '../../src/payouts/repository';
import { temporalPayoutStarter } from '../../src/payouts/temporalStarter';
import type { SandboxControl } from '../../src/sandbox/control';
import { readRunDetails } from '../../src/temporal/runDetails';
import { eventually, payoutRow, seedPaidOrder, type SeededOrder } from './payoutSeed';
import { opsApi, startPayoutStack, type PayoutStack } from './payoutStack';

describe('payouts: owed offline means no transfer can pay it', () => {
  let stack: PayoutStack;
  let db: Db;
  let control: SandboxControl;

  beforeAll(async () => {
    stack = await startPayoutStack({
      name: 'owed-offline',
      // Transfers stay pending (live) until a test processes them.
      sandbox: { transferProcessingDelayMs: 600_000 },
      env: {
        GATEWAY_TIMEOUT_MS: '1500',
        PAYOUT_TRANSFER_TIMEOUT_MS: '3000',
        PAYOUT_STALE_CLAIM_MS: '4000',
        PAYOUT_RESOLVER_RETRY_MS: '300',
        // Longer than any test: a run that ends did so because something woke it, not its recheck.
        PAYOUT_HUMAN_RECHECK_MS: '600000',
      },
    });
    ({ db } = stack);
    control = stack.sandbox.control;
    await control.setPlatformBalance(10_000_000);
  });

  afterAll(async () => {
    await stack?.close();
  });

  afterEach(async () => {
    await control.clearFaults();
    // The switch alone: the API's resume starts the sweep-on-resume, whose workflow id other test
    // files' stacks on the same Temporal server share.
    await setTransfersPaused(db, { paused: false, actor: 'test', reason: 'reset between tests' });
  });

  const ops = (method: string, path: string, body?: unknown) => opsApi(stack)(method, path, body);
  const handle = (orderId: string) => stack.temporal.client.workflow.getHandle(payoutWorkflowId(orderId));
  const result = (orderId: string) => handle(orderId).result() as Promise<PayoutWorkflowResult>;
  const starter = () => temporalPayoutStarter(stack.temporal.client, stack.temporal.taskQueue);
  const openLedger = async (orderId: string) => (await db.query('SELECT amount_paise, route FROM offline_ledger_open WHERE order_id = $1', [orderId])).rows;
  /** Everything a refused decision must leave as it was. */
  const snapshot = async (orderId: string) => ({
    payout: (await db.query('SELECT status, attempts, provider_transfer_id, last_code, updated_at FROM payouts WHERE order_id = $1', [orderId])).rows[0],
    decisions: (await db.query('SELECT count(*)::int AS n FROM review_actions r JOIN payouts p ON p.id = r.payout_id WHERE p.order_id = $1', [orderId])).rows[0].n,
    openLedger: await openLedger(orderId),
  });

  /** A payout whose request went out a moment ago under a key first sent 25 hours ago: the resolver
   * finds nothing and, the key being past the provider's retention, puts it in review. */
  async function inReviewKeyExpired(): Promise<SeededOrder & { account: string }> {
    const account = await control.createLinkedAccount();
    const order = await seedPaidOrder(db, { linkedAccountId: account });
    await db.query(
      `UPDATE payouts SET status = 'processing', attempts = 1, claimed_at = now() - interval '10 seconds',
              request_sent_at = now() - interval '10 seconds', key_first_sent_at = now() - interval '25 hours' WHERE id = $1`, [order.payoutId]);
    await starter().startPayout(order.orderId);
    await eventually(() => payoutRow(db, order.orderId), (p) => p?.status === 'review', 20_000);
    expect((await payoutRow(db, order.orderId))!.last_code).toBe('IDEMPOTENCY_KEY_EXPIRED');
    return { ...order, account };
  }

  /** The transfer the lost request made, landing at the provider with the payout's note. */
  async function lateTransfer(o: SeededOrder & { account: string }): Promise<RzpTransfer> {
    const made = await createGateway(stack.config).createDirectTransfer({
      account: o.account, amountPaise: o.vendorNetPaise, idempotencyKey: randomUUID(), notes: { transaction_id: o.payoutId!, order_id: o.orderId },
    });
    if (made.type !== 'accepted') throw new Error(`transfer not accepted: ${JSON.stringify(made)}`);
    return made.entity;
  }

  test('when transfers are paused and a paid order\'s payout waits pending, then it is not owed offline until ops pay it offline, and after resume no transfer is sent and it stays offline', async () => {
    expect((await ops('POST', '/ops/transfers/pause', { reason: 'bank incident' })).status).toBe(200);
    const account = await control.createLinkedAccount();
    const order = await seedPaidOrder(db, { linkedAccountId: account });
    await starter().startPayout(order.orderId);
    await eventually(() => readRunDetails(handle(order.orderId)), (d) => /paused/.test(d.currentDetails ?? ''), 10_000);
    expect((await payoutRow(db, order.orderId))!.status).toBe('pending');
    // A claim may still take it once transfers resume: not owed by hand.
    expect(await openLedger(order.orderId)).toEqual([]);

    const decided = await ops('POST', `/ops/payouts/${order.orderId}/pay-offline`, { reason: 'finance pays it by NEFT during the incident' });
    expect([decided.status, decided.body.payout?.status]).toEqual([200, 'offline']);
    expect(await openLedger(order.orderId)).toEqual([{ amount_paise: 8_100, route: 'direct_transfer' }]);

    expect((await ops('POST', '/ops/transfers/resume', { reason: 'incident over' })).status).toBe(200);
    // The run that waited out the switch ends on the offline row, long before its hourly recheck.
    const ended = await Promise.race([result(order.orderId), new Promise<'still running'>((r) => setTimeout(() => r('still running'), 20_000))]);
    expect(ended).toMatchObject({ kind: 'no_transfer', orderId: order.orderId });
    expect((await handle(order.orderId).query(payoutStateQuery)).payout?.status).toBe('offline');
    expect(await control.transfers({ recipient: account })).toEqual([]);
    expect(await payoutRow(db, order.orderId)).toMatchObject({ status: 'offline', attempts: 0, provider_transfer_id: null });
    expect(await openLedger(order.orderId)).toHaveLength(1);
    const lost = await db.query('SELECT count(*)::int AS n FROM payout_lost_claims WHERE order_id = $1', [order.orderId]);
    expect(lost.rows[0].n).toBe(0);
  });

  test('when a claim comes for an offline payout, then it takes nothing and the row stays offline', async () => {
    const account = await control.createLinkedAccount();
    const order = await seedPaidOrder(db, { linkedAccountId: account });
    const decided = await ops('POST', `/ops/payouts/${order.orderId}/pay-offline`, { reason: 'vendor asked for NEFT' });
    expect([decided.status, decided.body.payout?.status]).toEqual([200, 'offline']);
    const claim = await claimPayout(db, order.orderId, { attemptCap: stack.config.PAYOUT_ATTEMPT_CAP, runId: 'test-late-claim', balanceProbeMs: 60_000 });
    expect(claim).toMatchObject({ kind: 'no_transfer', payout: { status: 'offline' } });
    expect(await payoutRow(db, order.orderId)).toMatchObject({ status: 'offline', attempts: 0 });
    await result(order.orderId);
    expect(await control.transfers({ recipient: account })).toEqual([]);
  });

  test('when a payout is pending, then the console\'s payout page offers to pay it offline, and the CLI\'s show names the command', async () => {
    // Paused, so that no sweep's run claims it meanwhile.
    await ops('POST', '/ops/transfers/pause', { reason: 'bank incident' });
    const order = await seedPaidOrder(db, { linkedAccountId: await control.createLinkedAccount() });
    const signedIn = await fetch(`${stack.apiUrl}/console/sign-in`, {
      method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ key: stack.keys.ops.authorization.replace(/^Bearer /, ''), person: 'Asha' }).toString(),
    });
    const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
    const page = await (await fetch(`${stack.apiUrl}/console/payouts/${order.orderId}`, { headers: { cookie, accept: 'text/html' } })).text();
    expect(page).toContain('To have finance pay it by hand instead');
    expect(page).toContain(`href="/console/payouts/${order.orderId}/decide/pay-offline"`);
    const detail = await ops('GET', `/ops/payouts/${order.orderId}`);
    expect(payoutLines(detail.body, null, { tty: false }).filter((l) => l.includes('pay-offline'))).toEqual([`  by hand     payouts pay-offline ${order.orderId} --reason "…"  (no transfer is sent for it after)`]);
  });

  test('when a review payout\'s lost request left a live transfer at the provider, then pay offline is refused naming it and nothing changes; mark paid with it is the decision', async () => {
    const order = await inReviewKeyExpired();
    const transfer = await lateTransfer(order);
    expect(transfer.status).toBe('pending');
    const before = await snapshot(order.orderId);
    expect(before.openLedger).toEqual([]);

    const refused = await ops('POST', `/ops/payouts/${order.orderId}/pay-offline`, { reason: 'finance pays it by NEFT' });
    expect([refused.status, refused.body.error?.code, refused.body.error?.details?.transferId]).toEqual([409, 'live_transfer_exists', transfer.id]);
    expect(refused.body.error.message).toContain(`mark paid externally with transferId ${transfer.id}`);
    expect(await snapshot(order.orderId)).toEqual(before);
    // The bulk decision asks the provider too.
    const bulk = await ops('POST', '/ops/payouts/decisions', { action: 'pay_offline', orderIds: [order.orderId], reason: 'finance pays it by NEFT' });
    expect(bulk.body.results).toEqual([{ orderId: order.orderId, result: 'live_transfer_exists', status: 'review' }]);
    expect(await snapshot(order.orderId)).toEqual(before);

    const marked = await ops('POST', `/ops/payouts/${order.orderId}/mark-paid-externally`, { reason: 'the transfer landed after all', transferId: transfer.id });
    expect([marked.status, marked.body.payout?.status]).toEqual([200, 'accepted']);
    expect(await openLedger(order.orderId)).toEqual([]);
  });

  test('when a review payout\'s request left nothing live at the provider (nothing, or a failed transfer), then pay offline moves it to offline, the run ends and no transfer is sent', async () => {
    const order = await inReviewKeyExpired();
    const failed = await lateTransfer(order);
    await control.processPendingTransfers({ fail: [failed.id] });
    const decided = await ops('POST', `/ops/payouts/${order.orderId}/pay-offline`, { reason: 'checked: nothing paid, finance pays by NEFT' });
    expect([decided.status, decided.body.payout?.status]).toEqual([200, 'offline']);
    expect(await result(order.orderId)).toMatchObject({ kind: 'finished', status: 'offline' });
    expect(await openLedger(order.orderId)).toEqual([{ amount_paise: 8_100, route: 'direct_transfer' }]);
    expect((await control.transfers({ recipient: order.account })).map((t) => t.status)).toEqual(['failed']);
  });

  test('when the provider cannot be asked for a review payout\'s transfers, then pay offline answers 502 and nothing changes', async () => {
    const order = await inReviewKeyExpired();
    const before = await snapshot(order.orderId);
    await control.injectFault({ endpoint: 'transfers.list', fault: { kind: 'server_error_before' }, probability: 1, seed: 1 });
    const refused = await ops('POST', `/ops/payouts/${order.orderId}/pay-offline`, { reason: 'finance pays it by NEFT' });
    expect([refused.status, refused.body.error?.code]).toEqual([502, 'gateway_unavailable']);
    expect(await snapshot(order.orderId)).toEqual(before);
  });

  test('when a failed payout holds the transfer that failed after acceptance, then pay offline clears it (the attempt keeps it) and the row is offline with no transfer', async () => {
    const account = await control.createLinkedAccount();
    const order = await seedPaidOrder(db, { linkedAccountId: account });
    await db.query(`UPDATE payouts SET status = 'failed', attempts = 1, provider_transfer_id = 'trf_FailedAfterOk1' WHERE id = $1`, [order.payoutId]);
    await db.query(`INSERT INTO payout_attempts (payout_id, attempt_no, idempotency_key, outcome, provider_transfer_id) VALUES ($1, 1, $2, 'failed_after_accept', 'trf_FailedAfterOk1')`, [order.payoutId, order.payoutId]);
    const decided = await ops('POST', `/ops/payouts/${order.orderId}/pay-offline`, { reason: 'finance pays it by NEFT' });
    expect([decided.status, decided.body.payout?.status, decided.body.payout?.providerTransferId]).toEqual([200, 'offline', null]);
    const kept = await db.query('SELECT provider_transfer_id FROM payout_attempts WHERE payout_id = $1', [order.payoutId]);
    expect(kept.rows).toEqual([{ provider_transfer_id: 'trf_FailedAfterOk1' }]);
  });

  test('when a direct UPDATE would make a payout both offline and paid by a transfer, then the database refuses it', async () => {
    const account = await control.createLinkedAccount();
    const offline = await seedPaidOrder(db, { linkedAccountId: account });
    await db.query(`UPDATE payouts SET status = 'offline' WHERE id = $1`, [offline.payoutId]);
    await expect(db.query(`UPDATE payouts SET provider_transfer_id = 'trf_PaidByTransfer1' WHERE id = $1`, [offline.payoutId]))
      .rejects.toMatchObject({ code: '23514', constraint: 'payouts_offline_without_transfer' });
    const settled = await seedPaidOrder(db, { linkedAccountId: account });
    await db.query(`UPDATE payouts SET status = 'settled', attempts = 1, provider_transfer_id = 'trf_PaidByTransfer2' WHERE id = $1`, [settled.payoutId]);
    await expect(db.query(`UPDATE payouts SET status = 'offline' WHERE id = $1`, [settled.payoutId]))
      .rejects.toMatchObject({ code: '23514', constraint: 'payouts_offline_without_transfer' });
    expect(await payoutRow(db, settled.orderId)).toMatchObject({ status: 'settled', provider_transfer_id: 'trf_PaidByTransfer2' });
  });
});
