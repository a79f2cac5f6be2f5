/** Issue 10's payout-side hardening, against the real Temporal dev server, PostgreSQL and the
 * Razorpay sandbox: the kill switch at the last moment, no payout lost by age, the resolver that
 * cannot wait for ever, keys never trusted past their retention, the offline ledger listing exactly
 * what finance pays by hand, and signals that are only nudges. Every money assertion reads the
 * sandbox's own ledger. */
import { MockActivityEnvironment } from '@temporalio/testing';
import { createPayoutActivities } from '../../src/activities/payout';
import { opsDecisionSignal, payoutStateQuery, payoutWorkflowId, type PayoutWorkflowResult } from '../../src/contracts/payout';
import type { Db } from '../../src/db/pool';
import { createGateway } from '../../src/gateway';
import { readPayoutCounters } from '../../src/payouts/counters';
import { setTransfersPaused } from '../../src/payouts/killSwitch';
import { claimPayout } from '../../src/payouts/repository';
import { temporalPayoutStarter } from '../../src/payouts/temporalStarter';
import { readRunDetails } from '../../src/temporal/runDetails';
import type { SandboxControl } from '../../src/sandbox/control';
import { attemptOutcomes, eventually, payoutRow, recordHistory, seedPaidOrder } from './payoutSeed';
import { startPayoutStack, type PayoutStack } from './payoutStack';
import { recordPayoutInLedger } from '../../src/ledger/payoutDischarges';

describe('payouts: hardened money paths', () => {
  let stack: PayoutStack;
  let db: Db;
  let control: SandboxControl;

  beforeAll(async () => {
    stack = await startPayoutStack({
      name: 'payout-hardening',
      sandbox: { transferProcessingDelayMs: 200 },
      env: {
        GATEWAY_TIMEOUT_MS: '1500',
        PAYOUT_TRANSFER_TIMEOUT_MS: '3000',
        PAYOUT_STALE_CLAIM_MS: '4000',
        PAYOUT_RETRY_BACKOFF_MS: '200',
        PAYOUT_RETRY_BACKOFF_MAX_MS: '800',
        PAYOUT_SETTLEMENT_POLL_MS: '1000',
        PAYOUT_RESOLVER_RETRY_MS: '300',
        PAYOUT_RESOLVER_GIVE_UP_MS: '1500',
        PAYOUT_HUMAN_RECHECK_MS: '60000',
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
    await setTransfersPaused(db, { paused: false, actor: 'test', reason: 'reset' });
  });

  const starter = () => temporalPayoutStarter(stack.temporal.client, stack.temporal.taskQueue);
  const handle = (orderId: string) => stack.temporal.client.workflow.getHandle(payoutWorkflowId(orderId));
  const result = (orderId: string) => handle(orderId).result() as Promise<PayoutWorkflowResult>;
  const createCalls = async () => (await control.callCounts())['transfers.create'] ?? 0;
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${stack.apiUrl}${path}`, {
      method, body: body === undefined ? undefined : JSON.stringify(body),
      headers: { ...stack.keys.ops, 'x-actor': 'asha', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are checked field by field
    return { status: res.status, body: (await res.json()) as any };
  };
  const inOpenLedger = async (orderId: string) => (await db.query('SELECT count(*)::int AS n FROM offline_ledger_open WHERE order_id = $1', [orderId])).rows[0].n as number;

  test('when transfers are paused after a claim committed and before the request, then nothing is sent, the claim is released without spending an attempt, and resume pays it once', async () => {
    const account = await control.createLinkedAccount();
    const order = await seedPaidOrder(db, { linkedAccountId: account });
    const claim = await claimPayout(db, order.orderId, { attemptCap: stack.config.PAYOUT_ATTEMPT_CAP, runId: 'test-run', balanceProbeMs: 60_000 });
    expect(claim.kind).toBe('claimed');
    if (claim.kind !== 'claimed') return;
    await setTransfersPaused(db, { paused: true, actor: 'test', reason: 'bank incident' });
    const activities = createPayoutActivities({ db, gateway: createGateway(stack.config), config: stack.config });
    const before = await createCalls();
    const sent = await new MockActivityEnvironment().run(activities.sendDirectTransfer, {
      payoutId: claim.payout.id, orderId: order.orderId, linkedAccountId: account, amountPaise: claim.payout.amountPaise,
      idempotencyKey: claim.payout.idempotencyKey, attemptNo: claim.payout.attempts,
    });
    expect(sent).toEqual({ type: 'not_sent', reason: 'transfers_paused' });
    expect(await createCalls()).toBe(before);
    const row = await db.query('SELECT status, attempts, attempt_limit FROM payouts WHERE id = $1', [claim.payout.id]);
    expect(row.rows[0]).toEqual({ status: 'pending', attempts: 1, attempt_limit: stack.config.PAYOUT_ATTEMPT_CAP + 1 });
    expect(await attemptOutcomes(db, claim.payout.id)).toEqual(['not_sent']);

    const resumed = await api('POST', '/ops/transfers/resume', { reason: 'incident over' });
    expect(resumed.status).toBe(200);
    expect(resumed.body.sweep).toMatchObject({ workflowId: expect.stringContaining('payout-sweep') });
    await eventually(() => payoutRow(db, order.orderId), (p) => p?.status === 'settled', 20_000);
    expect(await control.transfers({ recipient: account })).toHaveLength(1);
  });

  test('when a pause lasts four days, then resuming pays every payout held back once, and the sweep runs within seconds of the resume', async () => {
    await api('POST', '/ops/transfers/pause', { reason: 'long bank outage' });
    const accounts = await Promise.all([1, 2, 3].map(() => control.createLinkedAccount()));
    const orders = await Promise.all(accounts.map((a) => seedPaidOrder(db, { linkedAccountId: a })));
    for (const o of orders) {
      await starter().startPayout(o.orderId);
      // The run waits out the switch (not a failed run); the row stays pending.
      await eventually(() => readRunDetails(handle(o.orderId)), (d) => /paused/.test(d.currentDetails ?? ''), 10_000);
    }
    // Four days pass: every row and order is four days old when transfers resume.
    const ids = orders.map((o) => o.orderId);
    await db.query(`UPDATE payouts SET created_at = created_at - interval '4 days', updated_at = updated_at - interval '4 days' WHERE order_id = ANY($1)`, [ids]);
    await db.query(`UPDATE orders SET paid_at = paid_at - interval '4 days', created_at = created_at - interval '4 days' WHERE id = ANY($1)`, [ids]);
    const resumedAt = Date.now();
    const resumed = await api('POST', '/ops/transfers/resume', { reason: 'bank is back' });
    expect(resumed.status).toBe(200);
    const sweep = await stack.temporal.client.workflow.getHandle(resumed.body.sweep.workflowId).describe();
    expect(sweep.startTime.getTime() - resumedAt).toBeLessThan(5_000);
    for (const [i, o] of orders.entries()) {
      await eventually(() => payoutRow(db, o.orderId), (p) => p?.status === 'settled', 30_000);
      const transfers = await control.transfers({ recipient: accounts[i]! });
      expect(transfers.map((t) => [t.amount, t.notes])).toEqual([[8_100, expect.objectContaining({ transaction_id: o.payoutId })]]);
    }
  });

  test('when the request went out long after its claim (a worker outage between), then the resolver finds the transfer around the send, not the claim', async () => {
    const account = await control.createLinkedAccount();
    const order = await seedPaidOrder(db, { linkedAccountId: account });
    // The run died after sending: the claim is an hour old, the request a moment old, the answer lost.
    await db.query(`UPDATE payouts SET status = 'processing', attempts = 1, claimed_at = now() - interval '1 hour', request_sent_at = now(), key_first_sent_at = now() WHERE id = $1`, [order.payoutId]);
    const made = await createGateway(stack.config).createDirectTransfer({ account, amountPaise: 8_100, idempotencyKey: order.payoutId!, notes: { transaction_id: order.payoutId!, order_id: order.orderId } });
    expect(made.type).toBe('accepted');
    await starter().startPayout(order.orderId);
    expect(await result(order.orderId)).toMatchObject({ kind: 'finished', status: 'settled' });
    expect(await attemptOutcomes(db, order.payoutId!)).toEqual(['recovered', 'settled']);
    expect(await control.transfers({ recipient: account })).toHaveLength(1);
  });

  test('when nothing is found and the idempotency key is past its retention, then the payout goes to review and no transfer is sent with that key or a fresh one', async () => {
    const account = await control.createLinkedAccount();
    const order = await seedPaidOrder(db, { linkedAccountId: account });
    await db.query(
      `UPDATE payouts SET status = 'processing', attempts = 1, claimed_at = now() - interval '25 hours',
              request_sent_at = now() - interval '25 hours', key_first_sent_at = now() - interval '25 hours' WHERE id = $1`, [order.payoutId]);
    await starter().startPayout(order.orderId);
    await eventually(() => payoutRow(db, order.orderId), (p) => p?.status === 'review', 20_000);
    expect(await payoutRow(db, order.orderId)).toMatchObject({ status: 'review', last_code: 'IDEMPOTENCY_KEY_EXPIRED' });
    expect(await control.transfers({ recipient: account })).toHaveLength(0);

    // The same holds when a released payout would be retried with its old key.
    const second = await seedPaidOrder(db, { linkedAccountId: account });
    await db.query(`UPDATE payouts SET status = 'failed', attempts = 1, key_first_sent_at = now() - interval '25 hours' WHERE id = $1`, [second.payoutId]);
    await starter().startPayout(second.orderId);
    await eventually(() => payoutRow(db, second.orderId), (p) => p?.status === 'review', 20_000);
    expect(await payoutRow(db, second.orderId)).toMatchObject({ last_code: 'IDEMPOTENCY_KEY_EXPIRED' });
    expect(await attemptOutcomes(db, second.payoutId!)).toEqual(['not_sent']);
    expect(await control.transfers({ recipient: account })).toHaveLength(0);
    await recordHistory(stack.temporal.client, payoutWorkflowId(second.orderId), 'payout-key-expired-not-sent');

    // Ops checked the provider and retries: a fresh key, one transfer.
    const retried = await api('POST', `/ops/payouts/${second.orderId}/retry`, { reason: 'checked the Razorpay dashboard: nothing under this payout' });
    expect(retried.status).toBe(200);
    await eventually(() => payoutRow(db, second.orderId), (p) => p?.status === 'settled', 20_000);
    expect((await payoutRow(db, second.orderId))!.idempotency_key).not.toBe(second.payoutId);
    expect(await control.transfers({ recipient: account })).toHaveLength(1);
  });

  test('when listing transfers keeps failing past PAYOUT_RESOLVER_GIVE_UP_MS, then the payout goes to review with a code and is counted', async () => {
    const account = await control.createLinkedAccount();
    const order = await seedPaidOrder(db, { linkedAccountId: account });
    await db.query(`UPDATE payouts SET status = 'processing', attempts = 1, claimed_at = now() - interval '1 hour', request_sent_at = now() - interval '1 hour' WHERE id = $1`, [order.payoutId]);
    await control.injectFault({ endpoint: 'transfers.list', fault: { kind: 'server_error_before' }, probability: 1, seed: 1 });
    const before = (await readPayoutCounters(db)).resolverGaveUp;
    await starter().startPayout(order.orderId);
    await eventually(() => payoutRow(db, order.orderId), (p) => p?.status === 'review', 30_000);
    expect(await payoutRow(db, order.orderId)).toMatchObject({ last_code: 'RESOLVER_LISTING_FAILING' });
    expect((await readPayoutCounters(db)).resolverGaveUp).toBe(before + 1);
    expect(await control.transfers({ recipient: account })).toHaveLength(0);
  });

  test('when a signal is sent by hand with no recorded decision, then nothing changes and the step log says it was ignored', async () => {
    const account = await control.createLinkedAccount({ status: 'suspended' });
    const order = await seedPaidOrder(db, { linkedAccountId: account });
    await starter().startPayout(order.orderId);
    await eventually(() => payoutRow(db, order.orderId), (p) => p?.status === 'parked', 20_000);
    await handle(order.orderId).signal(opsDecisionSignal, { action: 'cancel', actor: 'someone-in-web-ui' });
    const state = await eventually(() => handle(order.orderId).query(payoutStateQuery), (s) => s.steps.some((x) => x.detail.startsWith('ignored')), 10_000);
    expect(state.steps.map((s) => s.detail)).toContain('ignored cancel by someone-in-web-ui: no recorded decision (use the ops API)');
    expect(await payoutRow(db, order.orderId)).toMatchObject({ status: 'parked' });
    await recordHistory(stack.temporal.client, payoutWorkflowId(order.orderId), 'payout-ignored-signal');
  });

  test('when ops decides to pay a parked payout offline, then it is in the open offline ledger once and no transfer is ever sent for it', async () => {
    const account = await control.createLinkedAccount({ status: 'suspended' });
    const order = await seedPaidOrder(db, { linkedAccountId: account });
    await starter().startPayout(order.orderId);
    await eventually(() => payoutRow(db, order.orderId), (p) => p?.status === 'parked', 20_000);
    expect(await inOpenLedger(order.orderId)).toBe(0); // transfers are on and a retry could still pay it
    const decided = await api('POST', `/ops/payouts/${order.orderId}/pay-offline`, { reason: 'vendor asked for NEFT while the account is suspended' });
    expect([decided.status, decided.body.payout.status]).toEqual([200, 'offline']);
    expect(await result(order.orderId)).toMatchObject({ kind: 'finished', status: 'offline' });
    expect(await inOpenLedger(order.orderId)).toBe(1);
    await control.setLinkedAccountStatus(account, 'activated');
    expect((await api('POST', `/ops/payouts/${order.orderId}/retry`, { reason: 'try a transfer after all' })).status).toBe(409);
    expect(await control.transfers({ recipient: account })).toHaveLength(0);
    const audit = await db.query(`SELECT actor, action FROM review_actions WHERE payout_id = $1`, [order.payoutId]);
    expect(audit.rows).toEqual([{ actor: 'key:test-ops (asha)', action: 'pay_offline' }]);
    await recordHistory(stack.temporal.client, payoutWorkflowId(order.orderId), 'payout-pay-offline');
    await recordHistory(stack.temporal.client, payoutWorkflowId(order.orderId), 'payout-pay-offline-patches-up-front');
  });

  test('when payouts sit in each status, then the open offline ledger lists only what no transfer may still pay, paused or not', async () => {
    const statuses = ['pending', 'failed', 'processing', 'accepted', 'parked', 'review', 'settled', 'cancelled', 'rerouted', 'offline'] as const;
    const account = await control.createLinkedAccount();
    const byStatus: Record<string, string> = {};
    for (const status of statuses) {
      const o = await seedPaidOrder(db, { linkedAccountId: account });
      await db.query('UPDATE payouts SET status = $2 WHERE id = $1', [o.payoutId, status]);
      await recordPayoutInLedger(db, o.payoutId!); // as a transition to it writes the ledger
      byStatus[status] = o.orderId;
    }
    const listed = async () => {
      const out: string[] = [];
      for (const s of statuses) if ((await inOpenLedger(byStatus[s]!)) === 1) out.push(s);
      return out;
    };
    expect(await listed()).toEqual(['rerouted', 'offline']);
    // A pause holds claims back, it does not stop them for good: paying by hand is the offline decision.
    await setTransfersPaused(db, { paused: true, actor: 'test', reason: 'settle offline meanwhile' });
    expect(await listed()).toEqual(['rerouted', 'offline']);
  });
});
