/** Routing at fire time, the claim's compare-and-swap and the kill switch, against real PostgreSQL
 * and Temporal. No money moves here, so no gateway is wired: any call to it would fail the test. */
import type { Client } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createPayoutActivities } from '../../src/activities/payout';
import { loadConfig, type Config } from '../../src/config/config';
import { payoutWorkflowId, type PayoutWorkflowResult } from '../../src/contracts/payout';
import { readRunDetails } from '../../src/temporal/runDetails';
import type { Db } from '../../src/db/pool';
import { readPayoutCounters } from '../../src/payouts/counters';
import { setTransfersPaused } from '../../src/payouts/killSwitch';
import { recordResolution, recordTransferOutcome } from '../../src/payouts/outcomes';
import { claimPayout } from '../../src/payouts/repository';
import { ensurePayoutSweepSchedule } from '../../src/payouts/sweepSchedule';
import { startPayoutWorkflow } from '../../src/payouts/temporalStarter';
import { isolatedPool } from '../support/db';
import { startTestWorker, type TestTemporal } from '../support/temporal';
import { attemptOutcomes, payoutRow, recordHistory, seedPaidOrder, eventually } from './payoutSeed';
import { rebuildLedger } from '../../src/ledger/backfill';

describe('payouts: routing at fire time, claims and the kill switch (no money moves)', () => {
  let db: Db;
  let temporal: TestTemporal;
  let config: Config;
  let client: Client;

  beforeAll(async () => {
    ({ db } = await isolatedPool());
    config = loadConfig({ ...process.env, PAYOUT_RETRY_BACKOFF_MS: '200', PAYOUT_SETTLEMENT_POLL_MS: '500' });
    temporal = await startTestWorker({ db, config, gateway: undefined as never });
    client = temporal.client;
  });
  afterAll(async () => {
    await temporal?.close();
    await db?.end();
  });

  async function runPayout(orderId: string): Promise<PayoutWorkflowResult> {
    await startPayoutWorkflow(client, temporal.taskQueue, orderId);
    return client.workflow.getHandle(payoutWorkflowId(orderId)).result();
  }

  test('when orders are paid in cash, corporate_direct, manual_offline, without a linked account or below ₹1, then the right ledger/obligation rows are written and no transfer is attempted', async () => {
    const cash = await seedPaidOrder(db, { linkedAccountId: 'acc_CashVendor0001', method: 'cash', totalPaise: 10_000, subsidyPaise: 1_000, commissionBps: 1_900 });
    const corporate = await seedPaidOrder(db, { linkedAccountId: 'acc_CorpVendor0001', mode: 'corporate_direct' });
    const manual = await seedPaidOrder(db, { linkedAccountId: 'acc_ManualVendor01', mode: 'manual_offline' });
    const noAccount = await seedPaidOrder(db, { linkedAccountId: null });
    const tiny = await seedPaidOrder(db, { linkedAccountId: 'acc_TinyVendor0001', totalPaise: 100, subsidyPaise: 99, commissionBps: 2_000 });

    const results = await Promise.all([cash, corporate, manual, noAccount, tiny].map((o) => runPayout(o.orderId)));
    expect(results.map((r) => r.kind)).toEqual(['no_transfer', 'no_transfer', 'no_transfer', 'no_transfer', 'no_transfer']);

    const ledger = async (orderId: string) => (await db.query('SELECT amount_paise, route FROM offline_ledger WHERE order_id = $1', [orderId])).rows;
    // Cash: the vendor holds ₹10 of customer cash; the platform owes subsidy − commission = 1000 − 1900 = −900 (the vendor owes).
    expect(await ledger(cash.orderId)).toEqual([{ amount_paise: -900, route: 'cash' }]);
    expect(await ledger(manual.orderId)).toEqual([{ amount_paise: 8_100, route: 'manual_offline' }]);
    expect(await ledger(noAccount.orderId)).toEqual([{ amount_paise: 8_100, route: 'no_linked_account' }]);
    expect(await ledger(tiny.orderId)).toEqual([{ amount_paise: 80, route: 'below_transfer_minimum' }]);
    const obligations = await db.query('SELECT amount_paise FROM vendor_obligations WHERE order_id = $1', [corporate.orderId]);
    expect(obligations.rows).toEqual([{ amount_paise: 8_100 }]);
    const open = await db.query('SELECT order_id FROM offline_ledger_open WHERE order_id = ANY($1) ORDER BY order_id',
      [[cash.orderId, corporate.orderId, manual.orderId, noAccount.orderId, tiny.orderId]]);
    expect(open.rows.map((r) => r.order_id).sort()).toEqual([cash.orderId, manual.orderId, noAccount.orderId, tiny.orderId].sort());
    const payouts = await db.query('SELECT count(*)::int AS n FROM payouts WHERE order_id = ANY($1)', [[cash.orderId, manual.orderId, noAccount.orderId, tiny.orderId, corporate.orderId]]);
    expect(payouts.rows[0].n).toBe(0);
    // The ledger the claims wrote is the one their rows say (the employer-direct net on its own rail).
    expect((await rebuildLedger(db)).disagreements).toEqual([]);
  });

  test('when the pair switched to manual_offline after the order became payable, then the pending payout is rerouted and its ledger entry reopens', async () => {
    const order = await seedPaidOrder(db, { linkedAccountId: 'acc_SwitchVendor01' });
    await db.query(`UPDATE employer_vendor SET settlement_mode = 'manual_offline' WHERE vendor_id = $1`, [order.vendorId]);
    const result = await runPayout(order.orderId);
    expect(result).toMatchObject({ kind: 'no_transfer' });
    expect((await payoutRow(db, order.orderId))?.status).toBe('rerouted');
    const open = await db.query('SELECT amount_paise FROM offline_ledger_open WHERE order_id = $1', [order.orderId]);
    expect(open.rows).toEqual([{ amount_paise: 8_100 }]);
    await recordHistory(client, payoutWorkflowId(order.orderId), 'payout-rerouted');
  });

  test('when 50 claims race for one pending payout, then exactly one wins and 49 lost claims are counted', async () => {
    const order = await seedPaidOrder(db, { linkedAccountId: 'acc_RaceVendor0001' });
    const before = await readPayoutCounters(db);
    const claims = await Promise.all(Array.from({ length: 50 }, (_, i) => claimPayout(db, order.orderId, { attemptCap: 5, runId: `race-${order.orderId}-${i}`, balanceProbeMs: 60_000 })));
    expect(claims.filter((c) => c.kind === 'claimed')).toHaveLength(1);
    expect(claims.filter((c) => c.kind === 'lost')).toHaveLength(49);
    const row = await payoutRow(db, order.orderId);
    expect(row).toMatchObject({ status: 'processing', attempts: 1 });
    expect((await readPayoutCounters(db)).lostClaims - before.lostClaims).toBe(49);
    expect((await readPayoutCounters(db)).oldestProcessingAgeSeconds).toBeGreaterThanOrEqual(0);
  });

  test('when a claim activity is retried after its first try committed, then the same run gets its claim back and another run loses', async () => {
    const order = await seedPaidOrder(db, { linkedAccountId: 'acc_RetryVendor001' });
    const first = await claimPayout(db, order.orderId, { attemptCap: 5, runId: 'run-A', balanceProbeMs: 60_000 });
    const retried = await claimPayout(db, order.orderId, { attemptCap: 5, runId: 'run-A', balanceProbeMs: 60_000 });
    expect(first.kind).toBe('claimed');
    expect(retried).toEqual(first);
    expect((await claimPayout(db, order.orderId, { attemptCap: 5, runId: 'run-B', balanceProbeMs: 60_000 })).kind).toBe('lost');
    expect(await payoutRow(db, order.orderId)).toMatchObject({ status: 'processing', attempts: 1 });
  });

  test('when a run loses the claim on a row still waiting for one, then the run fails (not completes) so the sweep may start another', async () => {
    const order = await seedPaidOrder(db, { linkedAccountId: 'acc_CapVendor00001' });
    await db.query(`UPDATE payouts SET status = 'failed', attempts = 5 WHERE order_id = $1`, [order.orderId]);
    await expect(runPayout(order.orderId)).rejects.toMatchObject({ cause: { type: 'PayoutLostClaim' } });
    expect(await payoutRow(db, order.orderId)).toMatchObject({ status: 'failed', attempts: 5 });
  });

  test('when a retried resolver finds the row no longer processing, then it says moved_on instead of asking again', async () => {
    const order = await seedPaidOrder(db, { linkedAccountId: 'acc_MovedVendor001' });
    await db.query(`UPDATE payouts SET status = 'accepted', attempts = 1, claimed_at = now() WHERE order_id = $1`, [order.orderId]);
    const activities = createPayoutActivities({ db, gateway: undefined as never, config });
    const found = await new MockActivityEnvironment().run(activities.resolveUnknownTransfer, order.payoutId!);
    expect(found).toMatchObject({ resolution: 'moved_on', payout: { status: 'accepted' } });
  });

  test('when an unsubsidised online order\'s gateway order carries no split, then it is a direct transfer at fire time, as money in decided', async () => {
    const noSplit = await seedPaidOrder(db, { linkedAccountId: 'acc_NoSplitVendor1', subsidyPaise: 0, withPayout: true });
    expect((await claimPayout(db, noSplit.orderId, { attemptCap: 5, runId: 'run-nosplit', balanceProbeMs: 60_000 })).kind).toBe('claimed');
    expect(await payoutRow(db, noSplit.orderId)).toMatchObject({ status: 'processing' });

    const withSplit = await seedPaidOrder(db, { linkedAccountId: 'acc_SplitVendor001', subsidyPaise: 0 });
    await db.query('UPDATE orders SET split_transfer_paise = $2, split_linked_account_id = $3 WHERE id = $1', [withSplit.orderId, withSplit.vendorNetPaise, 'acc_SplitVendor001']);
    expect(await claimPayout(db, withSplit.orderId, { attemptCap: 5, runId: 'run-split', balanceProbeMs: 60_000 })).toMatchObject({ kind: 'no_transfer', reason: 'route split' });
  });

  test('when a resolver finding about an older claim arrives after a new claim, then the new claim is not released', async () => {
    const order = await seedPaidOrder(db, { linkedAccountId: 'acc_OldClaimVendr1' });
    await db.query(`UPDATE payouts SET status = 'processing', attempts = 2, claimed_at = now() WHERE order_id = $1`, [order.orderId]);
    const policy = { attemptCap: 5, retryBackoffMs: 200, retryBackoffMaxMs: 1_000, balanceProbeMs: 60_000 };
    await recordResolution(db, { payoutId: order.payoutId!, attemptNo: 1, resolution: { kind: 'nothing_found' }, runId: 'run-old', policy });
    expect(await payoutRow(db, order.orderId)).toMatchObject({ status: 'processing', attempts: 2 });
    expect(await attemptOutcomes(db, order.payoutId!)).toEqual([]);
  });

  test('when the provider accepts a transfer after its claim moved on, then the accepted attempt is still appended as evidence', async () => {
    const order = await seedPaidOrder(db, { linkedAccountId: 'acc_LateAcceptVnd1' });
    await db.query(`UPDATE payouts SET status = 'failed', attempts = 1 WHERE order_id = $1`, [order.orderId]);
    const entity = { id: 'trf_LateAccepted01', status: 'processed' } as never;
    await recordTransferOutcome(db, {
      payoutId: order.payoutId!, attemptNo: 1, idempotencyKey: order.payoutId!, outcome: { type: 'accepted', entity }, runId: 'run-late',
      policy: { attemptCap: 5, retryBackoffMs: 200, retryBackoffMaxMs: 1_000, balanceProbeMs: 60_000 },
    });
    expect(await payoutRow(db, order.orderId)).toMatchObject({ status: 'failed', attempts: 1 });
    const { rows } = await db.query('SELECT outcome, provider_transfer_id FROM payout_attempts WHERE payout_id = $1', [order.payoutId]);
    expect(rows).toEqual([{ outcome: 'accepted', provider_transfer_id: 'trf_LateAccepted01' }]);
  });

  test('when direct transfers are paused, then the payout stays pending and nothing is claimed; the pause is audited', async () => {
    const order = await seedPaidOrder(db, { linkedAccountId: 'acc_PausedVendor01' });
    await setTransfersPaused(db, { paused: true, actor: 'admin:test', reason: 'bank incident' });
    try {
      // The run waits out the switch (a routine pause shows no failed runs) and says so.
      await startPayoutWorkflow(client, temporal.taskQueue, order.orderId);
      const details = await eventually(() => readRunDetails(client.workflow.getHandle(payoutWorkflowId(order.orderId))), (d) => /paused/.test(d.currentDetails ?? ''), 10_000);
      expect(details.currentDetails).toContain('continues by itself when ops resume');
      expect(await payoutRow(db, order.orderId)).toMatchObject({ status: 'pending', attempts: 0 });
      // A claim takes it once transfers resume: not owed by hand unless ops pay it offline (issue 20).
      const open = await db.query('SELECT amount_paise FROM offline_ledger_open WHERE order_id = $1', [order.orderId]);
      expect(open.rows).toEqual([]);
    } finally {
      await setTransfersPaused(db, { paused: false, actor: 'admin:test', reason: 'incident over' });
      await client.workflow.getHandle(payoutWorkflowId(order.orderId)).terminate('test over').catch(() => undefined);
    }
    const audit = await db.query(`SELECT action, reason FROM review_actions WHERE payout_id IS NULL ORDER BY id`);
    expect(audit.rows).toEqual([{ action: 'pause_transfers', reason: 'bank incident' }, { action: 'resume_transfers', reason: 'incident over' }]);
  });

  test('when the sweep schedule is ensured twice, then it is created once, every N ms with overlap SKIP', async () => {
    const scheduleId = `payout-sweep-test-${Date.now()}`;
    const cfg = { PAYOUT_SWEEP_EVERY_MS: 300_000, TEMPORAL_TASK_QUEUE: temporal.taskQueue };
    try {
      expect(await ensurePayoutSweepSchedule(client, cfg, scheduleId)).toBe('created');
      expect(await ensurePayoutSweepSchedule(client, cfg, scheduleId)).toBe('unchanged');
      const described = await client.schedule.getHandle(scheduleId).describe();
      expect(described.policies.overlap).toBe('SKIP');
      expect(described.spec.intervals?.[0]?.every).toBe(300_000);
      expect(described.action).toMatchObject({ type: 'startWorkflow', workflowType: 'payoutSweepWorkflow', taskQueue: temporal.taskQueue });
    } finally {
      await client.schedule.getHandle(scheduleId).delete();
    }
  });
});
