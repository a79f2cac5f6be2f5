/** Issue 19 item 10: the kill switch's promise. A pause stops every request that has not passed the
 * gate (the money-moving activity's last check of the switch, which records request_sent_at in the
 * same transaction); a request already past it may still land. The pause answer says how many were
 * in flight at that moment and lists them. Real API, Temporal worker, PostgreSQL and the sandbox,
 * whose latency on transfers.create keeps a request in the air while ops pause. */
import { payoutWorkflowId, type PayoutWorkflowResult } from '../../src/contracts/payout';
import type { Db } from '../../src/db/pool';
import { setTransfersPaused } from '../../src/payouts/killSwitch';
import { temporalPayoutStarter } from '../../src/payouts/temporalStarter';
import type { SandboxControl } from '../../src/sandbox/control';
import { eventually, payoutRow, seedPaidOrder } from './payoutSeed';
import { opsApi, startPayoutStack, type PayoutStack } from './payoutStack';

describe('payouts: what a pause cannot stop', () => {
  let stack: PayoutStack;
  let db: Db;
  let control: SandboxControl;

  beforeAll(async () => {
    stack = await startPayoutStack({ name: 'pause-in-flight', env: { PAYOUT_HUMAN_RECHECK_MS: '60000', PAYOUT_SETTLEMENT_POLL_MS: '500' } });
    ({ db } = stack);
    control = stack.sandbox.control;
    await control.setPlatformBalance(10_000_000);
  });

  afterAll(async () => {
    await setTransfersPaused(db, { paused: false, actor: 'test', reason: 'reset' });
    await stack?.close();
  });

  /** A payout row in `status` as a run would leave it, without a run. */
  async function seeded(status: string, opts: { sent: boolean; unknownAnswer?: boolean }) {
    const o = await seedPaidOrder(db, { linkedAccountId: await control.createLinkedAccount() });
    await db.query(`UPDATE payouts SET status = $2, attempts = 1, claimed_at = now() - interval '1 minute', request_sent_at = CASE WHEN $3 THEN now() END WHERE id = $1`,
      [o.payoutId, status, opts.sent]);
    if (opts.unknownAnswer) {
      await db.query(`INSERT INTO payout_attempts (payout_id, attempt_no, idempotency_key, outcome, provider_code) VALUES ($1::uuid, 1, $1::text, 'unknown', 'timeout')`, [o.payoutId]);
    }
    return o;
  }

  test('when ops pause while a transfer request is in the air, then the answer counts and lists it (and a sent request answered unknown), not a claim that has not passed the gate nor an answered one; the request still lands, once', async () => {
    const claimedNotSent = await seeded('processing', { sent: false });
    const answered = await seeded('accepted', { sent: true });
    const answeredUnknown = await seeded('processing', { sent: true, unknownAnswer: true });

    const account = await control.createLinkedAccount();
    const inAir = await seedPaidOrder(db, { linkedAccountId: account });
    await control.injectFault({ endpoint: 'transfers.create', fault: { kind: 'latency', ms: 3_000 }, calls: [1] });
    await temporalPayoutStarter(stack.temporal.client, stack.temporal.taskQueue).startPayout(inAir.orderId);
    // Past the gate: the send is recorded and the request is on its way to the provider.
    const sent = await eventually(
      async () => (await db.query(`SELECT status, claimed_at, request_sent_at FROM payouts WHERE id = $1`, [inAir.payoutId])).rows[0],
      (r) => r?.request_sent_at !== null, 10_000);
    expect(sent.status).toBe('processing');

    const paused = await opsApi(stack)('POST', '/ops/transfers/pause', { reason: 'bank incident' });
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ paused: true, reason: 'bank incident', changedBy: 'key:test-ops (asha)' });
    expect(paused.body.inFlight.count).toBe(2);
    expect(paused.body.inFlight.payouts).toEqual([
      { orderId: answeredUnknown.orderId, payoutId: answeredUnknown.payoutId, amountPaise: 8_100, linkedAccountId: expect.stringMatching(/^acc_/), claimedAt: expect.any(String), requestSentAt: expect.any(String), outcome: 'unknown' },
      { orderId: inAir.orderId, payoutId: inAir.payoutId, amountPaise: 8_100, linkedAccountId: account, claimedAt: sent.claimed_at.toISOString(), requestSentAt: sent.request_sent_at.toISOString(), outcome: null },
    ]);
    const listed = paused.body.inFlight.payouts.map((p: { orderId: string }) => p.orderId);
    expect(listed).not.toContain(claimedNotSent.orderId);
    expect(listed).not.toContain(answered.orderId);

    // "May still land": the request past the gate is answered and settles, exactly once.
    const result = await (stack.temporal.client.workflow.getHandle(payoutWorkflowId(inAir.orderId)).result() as Promise<PayoutWorkflowResult>);
    expect(result).toMatchObject({ kind: 'finished', status: 'settled' });
    expect(await control.transfers({ recipient: account })).toHaveLength(1);

    // A payout due after the pause sends nothing.
    const later = await seedPaidOrder(db, { linkedAccountId: account });
    await temporalPayoutStarter(stack.temporal.client, stack.temporal.taskQueue).startPayout(later.orderId);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await payoutRow(db, later.orderId)).toMatchObject({ status: 'pending' });
    expect(await control.transfers({ recipient: account })).toHaveLength(1);

    // Pausing again lists what is still in flight: the settled one is gone.
    const again = await opsApi(stack)('POST', '/ops/transfers/pause', { reason: 'still the bank incident' });
    expect(again.body.inFlight).toMatchObject({ count: 1, payouts: [{ orderId: answeredUnknown.orderId }] });
  });
});
