/** Issue 5's money scenarios against the real Temporal dev server, PostgreSQL and the Razorpay
 * sandbox over HTTP (through the official SDK). Every test asserts from the SANDBOX's ledger that
 * exactly one transfer of the vendor net went to the right linked account (or none), and that our
 * database agrees. Durations come from config, so nothing sleeps for real minutes. */
import { payoutStateQuery, payoutWorkflowId, type PayoutWorkflowResult } from '../../src/contracts/payout';
import type { Db } from '../../src/db/pool';
import { readRunDetails } from '../../src/temporal/runDetails';
import type { RzpTransfer } from '../../src/gateway/types';
import { readPayoutCounters } from '../../src/payouts/counters';
import { readBalanceWall } from '../../src/payouts/balanceWall';
import { setTransfersPaused } from '../../src/payouts/killSwitch';
import { temporalPayoutStarter } from '../../src/payouts/temporalStarter';
import type { SandboxControl } from '../../src/sandbox/control';
import { payoutSweepWorkflow } from '../../src/workflows/payoutSweep';
import type { TestTemporal } from '../support/temporal';
import { attemptOutcomes, eventually, payoutRow, recordHistory, seedPaidOrder } from './payoutSeed';
import { startPayoutStack, type PayoutStack } from './payoutStack';

const BALANCE = 10_000_000;

describe('payouts: exactly-once transfers through the sandbox', () => {
  let stack: PayoutStack;
  let db: Db;
  let temporal: TestTemporal;
  let control: SandboxControl;
  let apiUrl: string;
  let opsKey: { authorization: string };

  beforeAll(async () => {
    stack = await startPayoutStack({
      name: 'payout-transfers',
      // Transfers stay pending briefly, as at Razorpay, so settlement arrives after acceptance.
      sandbox: { transferProcessingDelayMs: 300 },
      env: {
        GATEWAY_TIMEOUT_MS: '1500',
        PAYOUT_TRANSFER_TIMEOUT_MS: '4000',
        PAYOUT_RETRY_BACKOFF_MS: '200',
        PAYOUT_RETRY_BACKOFF_MAX_MS: '800',
        PAYOUT_SETTLEMENT_POLL_MS: '3000',
        PAYOUT_RESOLVER_RETRY_MS: '300',
        PAYOUT_STALE_CLAIM_MS: '5000',
        PAYOUT_HUMAN_RECHECK_MS: '60000',
        PAYOUT_BALANCE_PROBE_MS: '3000',
      },
    });
    ({ db, temporal, apiUrl } = stack);
    opsKey = stack.keys.ops;
    control = stack.sandbox.control;
    await control.setPlatformBalance(BALANCE);
  });

  afterAll(async () => {
    await stack?.close();
  });

  afterEach(async () => {
    await control.clearFaults();
    await control.setPlatformBalance(BALANCE);
    // Each test starts with the balance wall down (a failed test may leave it up).
    await db.query('UPDATE transfer_switch SET balance_short_since = NULL, balance_short_code = NULL, balance_probe_at = NULL, balance_probe_payout = NULL WHERE id = 1');
  });

  const starter = () => temporalPayoutStarter(temporal.client, temporal.taskQueue);
  const handle = (orderId: string) => temporal.client.workflow.getHandle(payoutWorkflowId(orderId));
  const result = (orderId: string) => handle(orderId).result() as Promise<PayoutWorkflowResult>;
  const transfersTo = (account: string): Promise<RzpTransfer[]> => control.transfers({ recipient: account });
  const createCalls = async () => (await control.callCounts())['transfers.create'] ?? 0;
  let lastSweepId = '';
  const runSweep = () => {
    lastSweepId = `payout-sweep-test-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
    return temporal.client.workflow.execute(payoutSweepWorkflow, { workflowId: lastSweepId, taskQueue: temporal.taskQueue, args: [{ batchSize: 100 }] });
  };
  /** The ops API over real HTTP, as an operator's tool would call it. */
  const ops = async (orderId: string, action: string, body: Record<string, string>) => {
    const res = await fetch(`${apiUrl}/ops/payouts/${orderId}/${action}`, {
      method: 'POST', body: JSON.stringify(body),
      headers: { ...opsKey, 'x-actor': 'asha', 'content-type': 'application/json' },
    });
    return { statusCode: res.status, body: await res.json() };
  };

  /** The one transfer the sandbox holds for this payout, checked against our row. */
  async function expectExactlyOneTransfer(account: string, payoutId: string, orderId: string, netPaise: number): Promise<RzpTransfer> {
    const transfers = await transfersTo(account);
    expect(transfers).toHaveLength(1);
    const [t] = transfers;
    expect(t).toMatchObject({ amount: netPaise, recipient: account, notes: { transaction_id: payoutId, order_id: orderId } });
    expect(await payoutRow(db, orderId)).toMatchObject({ provider_transfer_id: t!.id });
    return t!;
  }

  test('1. when the 99%-subsidy ₹100 order is paid out, then one ₹81 transfer goes to the vendor and the payout is settled after transfer.processed', async () => {
    const account = await control.createLinkedAccount();
    const order = await seedPaidOrder(db, { linkedAccountId: account, totalPaise: 10_000, subsidyPaise: 9_900, commissionBps: 1_900 });
    await starter().startPayout(order.orderId);
    expect(await result(order.orderId)).toMatchObject({ kind: 'finished', status: 'settled', attempts: 1 });
    await expectExactlyOneTransfer(account, order.payoutId!, order.orderId, 8_100);
    expect(await payoutRow(db, order.orderId)).toMatchObject({ status: 'settled', attempts: 1 });
    expect(await attemptOutcomes(db, order.payoutId!)).toEqual(['accepted', 'settled']);
    const settled = await db.query(`SELECT raw->>'source' AS source FROM payout_attempts WHERE payout_id = $1 AND outcome = 'settled'`, [order.payoutId]);
    expect(settled.rows[0].source).toBe('webhook transfer.processed');
    const state = await handle(order.orderId).query(payoutStateQuery);
    expect(state.payout).toMatchObject({ status: 'settled', attempts: 1 });
    await recordHistory(temporal.client, payoutWorkflowId(order.orderId), 'payout-happy-path');
    await recordHistory(temporal.client, payoutWorkflowId(order.orderId), 'payout-happy-path-patches-up-front');
  });

  test('2. when the webhook seam and the sweep start the same payout 50 times concurrently, then one transfer is made', async () => {
    const account = await control.createLinkedAccount();
    const order = await seedPaidOrder(db, { linkedAccountId: account });
    await Promise.all([
      ...Array.from({ length: 45 }, () => starter().startPayout(order.orderId)),
      ...Array.from({ length: 5 }, () => runSweep()),
    ]);
    expect(await result(order.orderId)).toMatchObject({ kind: 'finished', status: 'settled' });
    await expectExactlyOneTransfer(account, order.payoutId!, order.orderId, 8_100);
    expect(await payoutRow(db, order.orderId)).toMatchObject({ status: 'settled', attempts: 1 });
  });

  test('3. when the transfer is made but the answer is lost, then the outcome is unknown, the resolver finds our note and no second transfer is made', async () => {
    const account = await control.createLinkedAccount();
    const order = await seedPaidOrder(db, { linkedAccountId: account });
    const before = await readPayoutCounters(db);
    const callsBefore = await createCalls();
    await control.injectFault({ endpoint: 'transfers.create', fault: { kind: 'drop_after_commit' }, calls: [1] });
    await starter().startPayout(order.orderId);
    expect(await result(order.orderId)).toMatchObject({ kind: 'finished', status: 'settled', attempts: 1 });
    await expectExactlyOneTransfer(account, order.payoutId!, order.orderId, 8_100);
    expect(await createCalls()).toBe(callsBefore + 1);
    expect(await attemptOutcomes(db, order.payoutId!)).toEqual(['unknown', 'recovered', 'settled']);
    const after = await readPayoutCounters(db);
    expect(after.unknownOutcomes - before.unknownOutcomes).toBe(1);
    expect(after.recoveredTransfers - before.recoveredTransfers).toBe(1);
    await recordHistory(temporal.client, payoutWorkflowId(order.orderId), 'payout-unknown-recovered');
  });

  test('4. when the provider fails with a 5xx before acting, then the resolver finds nothing, the payout is retried with the same key and exactly one transfer is made', async () => {
    const account = await control.createLinkedAccount();
    const order = await seedPaidOrder(db, { linkedAccountId: account });
    const callsBefore = await createCalls();
    await control.injectFault({ endpoint: 'transfers.create', fault: { kind: 'server_error_before' }, calls: [1] });
    await starter().startPayout(order.orderId);
    expect(await result(order.orderId)).toMatchObject({ kind: 'finished', status: 'settled', attempts: 2 });
    await expectExactlyOneTransfer(account, order.payoutId!, order.orderId, 8_100);
    expect(await createCalls()).toBe(callsBefore + 2);
    expect(await attemptOutcomes(db, order.payoutId!)).toEqual(['unknown', 'not_found', 'accepted', 'settled']);
    const keys = await db.query('SELECT DISTINCT idempotency_key FROM payout_attempts WHERE payout_id = $1', [order.payoutId]);
    expect(keys.rows).toEqual([{ idempotency_key: order.payoutId }]);
    await recordHistory(temporal.client, payoutWorkflowId(order.orderId), 'payout-5xx-retried');
  });

  test('6. when ops terminate the run while the transfer is in flight, then the sweep starts a new run that resolves first and exactly one transfer is made', async () => {
    const account = await control.createLinkedAccount();
    const order = await seedPaidOrder(db, { linkedAccountId: account });
    const callsBefore = await createCalls();
    await control.injectFault({ endpoint: 'transfers.create', fault: { kind: 'delay_after_commit', ms: 3_000 }, calls: [1] });
    await starter().startPayout(order.orderId);
    await eventually(createCalls, (n) => n === callsBefore + 1);
    await eventually(() => transfersTo(account), (t) => t.length === 1);
    await handle(order.orderId).terminate('ops: stuck payout');
    expect(await payoutRow(db, order.orderId)).toMatchObject({ status: 'processing' });
    const sweep = await runSweep();
    expect(sweep.started).toBeGreaterThanOrEqual(1);
    expect(await result(order.orderId)).toMatchObject({ kind: 'finished', status: 'settled', attempts: 1 });
    await recordHistory(temporal.client, payoutWorkflowId(order.orderId), 'payout-terminated-then-resolved');
    await expectExactlyOneTransfer(account, order.payoutId!, order.orderId, 8_100);
    expect(await createCalls()).toBe(callsBefore + 1);
    expect(await attemptOutcomes(db, order.payoutId!)).toEqual(['recovered', 'settled']);
  });

  test('7. when the linked account is suspended, then the payout is parked with the provider code and no further calls; an ops retry after reactivation pays once', async () => {
    const account = await control.createLinkedAccount({ status: 'suspended' });
    const order = await seedPaidOrder(db, { linkedAccountId: account });
    const callsBefore = await createCalls();
    await starter().startPayout(order.orderId);
    await eventually(() => payoutRow(db, order.orderId), (r) => r?.status === 'parked');
    expect(await payoutRow(db, order.orderId)).toMatchObject({ status: 'parked', attempts: 1, last_code: 'BAD_REQUEST_TRANSFER_NOT_ALLOWED_TO_SUSPENDED_LINKED_ACCOUNT' });
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await createCalls()).toBe(callsBefore + 1);
    expect(await transfersTo(account)).toHaveLength(0);
    // Ops find parked payouts in the Web UI by search attribute (visibility is eventually consistent).
    const listed = await eventually(async () => {
      const ids: string[] = [];
      for await (const wf of temporal.client.workflow.list({ query: `PayoutStatus = "parked" AND OrderId = "${order.orderId}" AND VendorId = "${order.vendorId}"` })) ids.push(wf.workflowId);
      return ids;
    }, (ids) => ids.length === 1);
    expect(listed).toEqual([payoutWorkflowId(order.orderId)]);

    await control.setLinkedAccountStatus(account, 'activated');
    const reply = await ops(order.orderId, 'retry', { reason: 'vendor reactivated by Razorpay' });
    expect(reply.statusCode).toBe(200);
    expect(await result(order.orderId)).toMatchObject({ kind: 'finished', status: 'settled', attempts: 2 });
    await expectExactlyOneTransfer(account, order.payoutId!, order.orderId, 8_100);
    const audit = await db.query('SELECT actor, action, reason FROM review_actions WHERE payout_id = $1', [order.payoutId]);
    expect(audit.rows).toEqual([{ actor: 'key:test-ops (asha)', action: 'retry', reason: 'vendor reactivated by Razorpay' }]);
    await recordHistory(temporal.client, payoutWorkflowId(order.orderId), 'payout-parked-retried');
  });

  const balanceWall = () => readBalanceWall(db);
  const resumeTransfers = () => fetch(`${apiUrl}/ops/transfers/resume`, {
    method: 'POST', body: JSON.stringify({ reason: 'balance topped up' }), headers: { ...opsKey, 'x-actor': 'asha', 'content-type': 'application/json' },
  });
  /** What the payout spent of its cap: attempts beyond those given back (attempt_limit − cap). */
  const attemptsSpent = (r: { attempts: number; attempt_limit: number | null }) => r.attempts - ((r.attempt_limit ?? 5) - 5);

  test('8a. when the platform balance runs dry, then the first rejection puts the balance wall up without spending an attempt, other payouts wait unsent, and once the balance is back one probe takes the wall down and each is paid once', async () => {
    const account = await control.createLinkedAccount();
    const first = await seedPaidOrder(db, { linkedAccountId: account });
    await control.setPlatformBalance(0);
    await starter().startPayout(first.orderId);
    const wall = await eventually(balanceWall, (w) => w !== null);
    expect(wall).toMatchObject({ code: 'BAD_REQUEST_TRANSFER_INSUFFICIENT_BALANCE' });
    expect(wall!.neededPaise).toBeGreaterThanOrEqual(8_100);
    const held = await eventually(() => payoutRow(db, first.orderId), (r) => r?.status === 'pending' && r?.attempts === 1);
    expect(attemptsSpent(held!)).toBe(0);
    // The switch the ops API answers says why and what the backlog needs.
    const sw = await (await fetch(`${apiUrl}/ops/transfers/switch`, { headers: opsKey })).json() as { paused: boolean; balanceWall: { neededPaise: number } | null };
    expect(sw).toMatchObject({ paused: false, balanceWall: { neededPaise: wall!.neededPaise } });

    const others = [await seedPaidOrder(db, { linkedAccountId: account }), await seedPaidOrder(db, { linkedAccountId: account })];
    const callsBehindTheWall = await createCalls();
    for (const o of others) await starter().startPayout(o.orderId);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await createCalls()).toBe(callsBehindTheWall); // nothing sent behind the wall
    for (const o of others) expect(await payoutRow(db, o.orderId)).toMatchObject({ status: 'pending', attempts: 0 });

    await control.setPlatformBalance(BALANCE);
    // The scheduled sweep is the timer: once the probe is due it wakes the oldest payout, whose
    // accepted transfer takes the wall down and wakes the rest.
    await eventually(async () => { await runSweep(); return balanceWall(); }, (w) => w === null, 20_000);
    for (const o of [first, ...others]) {
      expect(await result(o.orderId)).toMatchObject({ kind: 'finished', status: 'settled' });
      const row = await payoutRow(db, o.orderId);
      expect(row!.status).toBe('settled');
      expect(attemptsSpent(row!)).toBe(1);
    }
    const transfers = await transfersTo(account);
    expect(transfers).toHaveLength(3);
    expect(new Set(transfers.map((t) => (t.notes as Record<string, string>).transaction_id))).toEqual(new Set([first, ...others].map((o) => o.payoutId)));
    expect(await attemptOutcomes(db, first.payoutId!)).toEqual(['rejected', 'accepted', 'settled']);
    await recordHistory(temporal.client, payoutWorkflowId(first.orderId), 'payout-balance-wall');
  });

  test('8b. when the balance stays short, then no payout is parked: each probe finds it short without spending an attempt, and ops\' resume probes at once', async () => {
    const account = await control.createLinkedAccount();
    const order = await seedPaidOrder(db, { linkedAccountId: account });
    await control.setPlatformBalance(0);
    await starter().startPayout(order.orderId);
    await eventually(balanceWall, (w) => w !== null);
    // Probes every PAYOUT_BALANCE_PROBE_MS (3 s here), each rejected: more than the cap of 5 in all.
    const probed = await eventually(async () => { await runSweep(); return payoutRow(db, order.orderId); }, (r) => (r?.attempts ?? 0) >= 6 && r?.status === 'pending', 40_000);
    expect(probed).toMatchObject({ status: 'pending', last_code: 'BAD_REQUEST_TRANSFER_INSUFFICIENT_BALANCE' });
    expect(attemptsSpent(probed!)).toBe(0);
    const keys = await db.query('SELECT count(DISTINCT idempotency_key)::int AS n, count(*)::int AS rejected FROM payout_attempts WHERE payout_id = $1 AND outcome = $2', [order.payoutId, 'rejected']);
    expect(keys.rows[0].n).toBe(keys.rows[0].rejected); // a fresh key after every rejection
    expect(await transfersTo(account)).toHaveLength(0);

    // Right after a rejected probe (the next one 3 s away), ops' resume asks at once.
    await eventually(balanceWall, (w) => w !== null && Date.parse(w.nextProbeAt!) - Date.now() > 2_000, 10_000);
    await control.setPlatformBalance(BALANCE);
    const asked = Date.now();
    expect((await resumeTransfers()).status).toBe(200);
    await eventually(balanceWall, (w) => w === null, 10_000);
    expect(Date.now() - asked).toBeLessThan(2_500);
    expect(await result(order.orderId)).toMatchObject({ kind: 'finished', status: 'settled' });
    await expectExactlyOneTransfer(account, order.payoutId!, order.orderId, 8_100);
  });

  test('8c. when a re-send under a kept key gets the rejection stored for its first request replayed after the balance came back, then it takes a fresh key and pays, neither parking nor putting the wall up', async () => {
    const account = await control.createLinkedAccount();
    const order = await seedPaidOrder(db, { linkedAccountId: account });
    await control.setPlatformBalance(0);
    // The first request is rejected at zero balance and stored under its key, but its answer is lost.
    await control.injectFault({ endpoint: 'transfers.create', fault: { kind: 'drop_after_commit' }, calls: [1] });
    await starter().startPayout(order.orderId);
    await eventually(() => attemptOutcomes(db, order.payoutId!), (o) => o.includes('unknown'));
    await control.setPlatformBalance(BALANCE);
    expect(await result(order.orderId)).toMatchObject({ kind: 'finished', status: 'settled' });
    await expectExactlyOneTransfer(account, order.payoutId!, order.orderId, 8_100);
    // Nothing found (key kept, attempt given back), the kept key's stored rejection replayed (a fresh
    // key, attempt given back), then the fresh key's transfer.
    expect(await attemptOutcomes(db, order.payoutId!)).toEqual(['unknown', 'not_found', 'rejected', 'accepted', 'settled']);
    const row = await payoutRow(db, order.orderId);
    expect(attemptsSpent(row!)).toBe(1);
    expect(await balanceWall()).toBeNull();
  });

  test('9. when ops mark a parked payout paid externally, then it is settled with the reference and the sandbox shows no transfer', async () => {
    const account = await control.createLinkedAccount({ status: 'suspended' });
    const order = await seedPaidOrder(db, { linkedAccountId: account });
    await starter().startPayout(order.orderId);
    await eventually(() => payoutRow(db, order.orderId), (r) => r?.status === 'parked');
    const missing = await ops(order.orderId, 'mark-paid-externally', { reason: 'paid by NEFT' });
    expect(missing.statusCode).toBe(400);
    const reply = await ops(order.orderId, 'mark-paid-externally', { reason: 'paid by NEFT from the current account', reference: 'UTR-NEFT-000123' });
    expect(reply.statusCode).toBe(200);
    expect(await result(order.orderId)).toMatchObject({ kind: 'finished', status: 'settled' });
    expect(await payoutRow(db, order.orderId)).toMatchObject({ status: 'settled', external_reference: 'UTR-NEFT-000123' });
    expect(await transfersTo(account)).toHaveLength(0);
    const again = await ops(order.orderId, 'cancel', { reason: 'too late' });
    expect(again.statusCode).toBe(409);
    await recordHistory(temporal.client, payoutWorkflowId(order.orderId), 'payout-marked-paid-externally');
  });

  test('when transfers are paused, then nothing is sent; after resume the sweep pays the payout once', async () => {
    const account = await control.createLinkedAccount();
    const order = await seedPaidOrder(db, { linkedAccountId: account });
    await setTransfersPaused(db, { paused: true, actor: 'admin:test', reason: 'provider incident' });
    try {
      await starter().startPayout(order.orderId);
      // The run waits out the switch (no failed run) and says so in its details.
      const waiting = await eventually(() => readRunDetails(handle(order.orderId)), (d) => /paused/.test(d.currentDetails ?? ''), 10_000);
      expect(waiting.currentDetails).toMatch(/Direct transfers are \*\*paused\*\*/);
      expect((await handle(order.orderId).describe()).status.name).toBe('RUNNING');
      expect(await runSweep()).toMatchObject({ paused: true, started: 0 });
      expect(await transfersTo(account)).toHaveLength(0);
    } finally {
      await setTransfersPaused(db, { paused: false, actor: 'admin:test', reason: 'incident over' });
    }
    const sweep = await runSweep();
    expect(sweep.started).toBeGreaterThanOrEqual(1);
    await recordHistory(temporal.client, lastSweepId, 'payout-sweep-after-resume-v2');
    await eventually(() => payoutRow(db, order.orderId), (r) => r?.status === 'settled');
    await expectExactlyOneTransfer(account, order.payoutId!, order.orderId, 8_100);
    // The same run that waited out the switch paid it (woken by the sweep's transfersResumed).
    expect(await result(order.orderId)).toMatchObject({ kind: 'finished', status: 'settled' });
    await recordHistory(temporal.client, payoutWorkflowId(order.orderId), 'payout-waited-while-paused');
  });
});
