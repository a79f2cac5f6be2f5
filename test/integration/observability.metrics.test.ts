/** GET /metrics on the API of a real payout stack (PostgreSQL, Temporal, the Razorpay sandbox):
 * the text parses as Prometheus text, and each metric moves when its event really happens — a
 * payout that parks, a lost answer the resolver recovers, a lost claim, a duplicate and a
 * badly-signed webhook, the kill switch, a stuck payout, an open recon exception, a Schedule. */
import { randomBytes } from 'node:crypto';
import { ScheduleOverlapPolicy } from '@temporalio/client';
import { payoutWorkflowId, type PayoutWorkflowResult } from '../../src/contracts/payout';
import { PAYOUT_SWEEP_WORKFLOW_TYPE } from '../../src/contracts/sweep';
import { hmacSha256Hex } from '../../src/gateway/signatures';
import { createPayoutMetrics } from '../../src/observability/metrics';
import { watchSchedules } from '../../src/observability/scheduleWatch';
import { claimPayout } from '../../src/payouts/repository';
import { temporalPayoutStarter } from '../../src/payouts/temporalStarter';
import { parsePrometheusText, sampleValue, type Family } from '../unit/observability.promText';
import { eventually, explainingRun, seedPaidOrder } from './payoutSeed';
import { withTimeout } from '../../src/withTimeout';
import { startPayoutStack, type PayoutStack } from './payoutStack';
import { oweOrders } from '../../src/ledger/orderObligations';
import { recordSettlementLinesInLedger } from '../../src/ledger/settlementLines';

describe('GET /metrics on the API', () => {
  let stack: PayoutStack;

  beforeAll(async () => {
    stack = await startPayoutStack({
      name: 'observability',
      sandbox: { transferProcessingDelayMs: 300 },
    });
    await stack.sandbox.control.setPlatformBalance(10_000_000);
  });

  afterAll(async () => {
    await stack?.close();
  });

  afterEach(async () => {
    await stack.sandbox.control.clearFaults();
  });

  async function scrape(): Promise<Map<string, Family>> {
    const res = await fetch(`${stack.apiUrl}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return parsePrometheusText(await res.text());
  }
  const read = async (name: string, labels: Record<string, string> = {}) => sampleValue(await scrape(), name, labels) ?? NaN;
  const starter = () => temporalPayoutStarter(stack.temporal.client, stack.temporal.taskQueue, stack.db);
  const finished = (orderId: string) => stack.temporal.client.workflow.getHandle(payoutWorkflowId(orderId));

  async function postWebhook(rawBody: string, eventId: string, signature = hmacSha256Hex(rawBody, stack.config.RAZORPAY_WEBHOOK_SECRET)) {
    const res = await fetch(`${stack.apiUrl}/webhooks/razorpay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-razorpay-event-id': eventId, 'x-razorpay-signature': signature },
      body: rawBody,
    });
    return { status: res.status, body: await res.json() as Record<string, unknown> };
  }
  /** A signed event the app acknowledges and does not act on. */
  const routeEvent = () => JSON.stringify({
    entity: 'event', account_id: 'acc_platform', event: 'product.route.under_review', contains: ['merchant_product'],
    payload: { merchant_product: { entity: { id: `acc_prd_${randomBytes(4).toString('hex')}` } } }, created_at: Math.floor(Date.now() / 1000),
  });

  test('when Prometheus scrapes without credentials, then the API answers Prometheus text with a # TYPE line for every payout metric', async () => {
    const families = await scrape();
    const types = Object.fromEntries([...families.values()].map((f) => [f.name, f.type]));
    expect(types).toMatchObject({
      payouts_by_status: 'gauge',
      payouts_amount_paise_by_status: 'gauge',
      payouts_oldest_processing_age_seconds: 'gauge',
      payouts_oldest_accepted_age_seconds: 'gauge',
      payouts_lost_claims_total: 'counter',
      payouts_attempt_outcomes_total: 'counter',
      payouts_transfers_sent_total: 'counter',
      payouts_recon_exceptions_open: 'gauge',
      payouts_recon_exceptions_open_by_reason: 'gauge',
      payouts_transfers_paused: 'gauge',
      payouts_transfers_paused_seconds: 'gauge',
      payouts_webhook_reply_seconds: 'histogram',
      payouts_webhook_duplicates_total: 'counter',
      payouts_schedule_found: 'gauge',
      payouts_metrics_db_up: 'gauge',
      payouts_offline_owed_paise: 'gauge',
      payouts_offline_owed_lines: 'gauge',
      payouts_offline_owed_oldest_age_seconds: 'gauge',
      payouts_settlement_batches_open: 'gauge',
      payouts_settlement_paid_without_debit: 'gauge',
      payouts_refund_hints_unread: 'gauge',
      payouts_refund_hint_oldest_age_seconds: 'gauge',
      process_resident_memory_bytes: 'gauge',
    });
    expect(sampleValue(families, 'payouts_metrics_db_up')).toBe(1);
    // The route is in the OpenAPI document as public, for the reason metrics are.
    const doc = await (await fetch(`${stack.apiUrl}/openapi.json`)).json() as { paths: Record<string, Record<string, Record<string, unknown>>> };
    expect(doc.paths['/metrics']?.get?.['x-public']).toBe('metrics');
  });

  test('when a payout to a suspended linked account parks, then the parked count and amount rise, and so do the rejected outcomes and the transfers sent', async () => {
    const before = await scrape();
    const account = await stack.sandbox.control.createLinkedAccount({ status: 'suspended' });
    const order = await seedPaidOrder(stack.db, { linkedAccountId: account });
    await starter().startPayout(order.orderId);
    const after = await eventually(scrape, (f) => sampleValue(f, 'payouts_by_status', { status: 'parked' }) === sampleValue(before, 'payouts_by_status', { status: 'parked' })! + 1);
    const delta = (name: string, labels: Record<string, string> = {}) => sampleValue(after, name, labels)! - sampleValue(before, name, labels)!;
    expect(delta('payouts_amount_paise_by_status', { status: 'parked' })).toBe(order.vendorNetPaise);
    expect(delta('payouts_attempt_outcomes_total', { outcome: 'rejected' })).toBe(1);
    expect(delta('payouts_transfers_sent_total')).toBe(1);
    expect(delta('payouts_by_status', { status: 'pending' })).toBe(0);
  });

  test('when a transfer is made but its answer is lost, then the unknown and recovered outcomes rise, and the settled count and amount once it settles', async () => {
    const before = await scrape();
    const account = await stack.sandbox.control.createLinkedAccount();
    const order = await seedPaidOrder(stack.db, { linkedAccountId: account });
    await stack.sandbox.control.injectFault({ endpoint: 'transfers.create', fault: { kind: 'drop_after_commit' }, calls: [1] });
    await starter().startPayout(order.orderId);
    // 9-14 s in CI; once (at 335af7b) past jest's 120 s with nothing said: now the run's steps are printed.
    const result = await explainingRun(stack.temporal.client, payoutWorkflowId(order.orderId),
      () => withTimeout(finished(order.orderId).result() as Promise<PayoutWorkflowResult>, 90_000, `the payout run of ${order.orderId}`));
    expect(result).toMatchObject({ status: 'settled' });
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string> = {}) => sampleValue(after, name, labels)! - sampleValue(before, name, labels)!;
    expect(delta('payouts_attempt_outcomes_total', { outcome: 'unknown' })).toBe(1);
    expect(delta('payouts_attempt_outcomes_total', { outcome: 'recovered' })).toBe(1);
    expect(delta('payouts_attempt_outcomes_total', { outcome: 'settled' })).toBe(1);
    expect(delta('payouts_transfers_sent_total')).toBe(1);
    expect(delta('payouts_by_status', { status: 'settled' })).toBe(1);
    expect(delta('payouts_amount_paise_by_status', { status: 'settled' })).toBe(order.vendorNetPaise);
  });

  test('when a run claims a payout another has already settled, then the lost claims counter rises', async () => {
    const before = await read('payouts_lost_claims_total');
    const order = await seedPaidOrder(stack.db, { linkedAccountId: await stack.sandbox.control.createLinkedAccount() });
    await stack.db.query(`UPDATE payouts SET status = 'settled', settled_at = now() WHERE order_id = $1`, [order.orderId]);
    expect(await claimPayout(stack.db, order.orderId, { attemptCap: 5, runId: `run-${randomBytes(4).toString('hex')}`, balanceProbeMs: 60_000 })).toMatchObject({ kind: 'lost' });
    expect(await read('payouts_lost_claims_total')).toBe(before + 1);
  });

  test('when the same webhook arrives twice, then the duplicates counter rises by one and the reply histogram counts both answers; a bad signature counts as a 4xx', async () => {
    const before = await scrape();
    const body = routeEvent();
    const eventId = `evt_${randomBytes(6).toString('hex')}`;
    expect((await postWebhook(body, eventId)).body).toMatchObject({ duplicate: false });
    expect((await postWebhook(body, eventId)).body).toMatchObject({ duplicate: true });
    expect((await postWebhook(body, `evt_${randomBytes(6).toString('hex')}`, 'f'.repeat(64))).status).toBe(401);
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string> = {}) => sampleValue(after, name, labels)! - sampleValue(before, name, labels)!;
    expect(delta('payouts_webhook_duplicates_total')).toBe(1);
    expect(delta('payouts_webhook_reply_seconds_count', { status_class: '2xx' })).toBe(2);
    expect(delta('payouts_webhook_reply_seconds_count', { status_class: '4xx' })).toBe(1);
    expect(delta('payouts_webhook_reply_seconds_sum', { status_class: '2xx' })).toBeGreaterThan(0);
    expect(sampleValue(after, 'payouts_webhook_reply_seconds_bucket', { status_class: '2xx', le: '+Inf' })).toBe(sampleValue(after, 'payouts_webhook_reply_seconds_count', { status_class: '2xx' }));
    // Other routes are not webhooks: a scrape does not count itself.
    expect(sampleValue(await scrape(), 'payouts_webhook_reply_seconds_count', { status_class: '2xx' })).toBe(sampleValue(after, 'payouts_webhook_reply_seconds_count', { status_class: '2xx' }));
  });

  test('when ops pause direct transfers, then the kill switch gauge reads 1 and its duration grows; resumed, both read 0', async () => {
    const post = (path: string) => fetch(`${stack.apiUrl}${path}`, { method: 'POST', headers: { ...stack.keys.ops, 'content-type': 'application/json' }, body: JSON.stringify({ reason: 'metrics test' }) });
    expect(await read('payouts_transfers_paused')).toBe(0);
    expect((await post('/ops/transfers/pause')).status).toBe(200);
    try {
      expect(await read('payouts_transfers_paused')).toBe(1);
      await eventually(() => read('payouts_transfers_paused_seconds'), (s) => s >= 1, 5_000);
    } finally {
      expect((await post('/ops/transfers/resume')).status).toBe(200);
    }
    expect(await read('payouts_transfers_paused')).toBe(0);
    expect(await read('payouts_transfers_paused_seconds')).toBe(0);
  });

  test('when a payout has been processing for 40 minutes and another accepted for 2 hours, then the oldest ages say so', async () => {
    const stuck = await seedPaidOrder(stack.db, { linkedAccountId: 'acc_Stuck000000001' });
    const waiting = await seedPaidOrder(stack.db, { linkedAccountId: 'acc_Waiting0000001' });
    try {
      await stack.db.query(`UPDATE payouts SET status = 'processing', claimed_at = now() - interval '40 minutes', updated_at = now() - interval '40 minutes' WHERE order_id = $1`, [stuck.orderId]);
      await stack.db.query(`UPDATE payouts SET status = 'accepted', updated_at = now() - interval '2 hours' WHERE order_id = $1`, [waiting.orderId]);
      const families = await scrape();
      expect(sampleValue(families, 'payouts_oldest_processing_age_seconds')).toBeGreaterThanOrEqual(2_400);
      expect(sampleValue(families, 'payouts_oldest_processing_age_seconds')).toBeLessThan(2_500);
      expect(sampleValue(families, 'payouts_oldest_accepted_age_seconds')).toBeGreaterThanOrEqual(7_200);
    } finally {
      // Out of the way of the other tests: ops cancel them (terminal).
      await stack.db.query(`UPDATE payouts SET status = 'cancelled' WHERE order_id = ANY($1)`, [[stuck.orderId, waiting.orderId]]);
    }
    expect(await read('payouts_oldest_processing_age_seconds')).toBe(0);
  });

  test('when recon opens a transfer-not-in-app exception, then it counts by reason and by class and severity, and stops counting once resolved', async () => {
    const before = await scrape();
    const key = `transfer-not-in-app:trf_${randomBytes(6).toString('hex')}`;
    const { rows } = await stack.db.query<{ id: number }>(
      `INSERT INTO recon_exceptions (key, class, reason, severity, next_action, day, entity_id, first_run_id, last_run_id)
       VALUES ($1, 'unmatched', 'transfer-not-in-app', 'critical', 'check', current_date, 'trf_x', 'run-1', 'run-1') RETURNING id`, [key]);
    const open = await scrape();
    expect(sampleValue(open, 'payouts_recon_exceptions_open_by_reason', { reason: 'transfer-not-in-app' })).toBe(sampleValue(before, 'payouts_recon_exceptions_open_by_reason', { reason: 'transfer-not-in-app' })! + 1);
    expect(sampleValue(open, 'payouts_recon_exceptions_open', { class: 'unmatched', severity: 'critical' })).toBe(sampleValue(before, 'payouts_recon_exceptions_open', { class: 'unmatched', severity: 'critical' })! + 1);
    await stack.db.query(`UPDATE recon_exceptions SET status = 'resolved', resolved_at = now(), resolved_by = 'key:finance', resolution_note = 'reversed' WHERE id = $1`, [rows[0]!.id]);
    expect(await read('payouts_recon_exceptions_open_by_reason', { reason: 'transfer-not-in-app' })).toBe(sampleValue(before, 'payouts_recon_exceptions_open_by_reason', { reason: 'transfer-not-in-app' }));
  });

  test('when an offline line has been owed ten days and a paid settlement line has no debit, then the age buckets, the oldest age and the lines paid without a debit say so', async () => {
    const before = await scrape();
    const order = await seedPaidOrder(stack.db, { linkedAccountId: null, mode: 'manual_offline', withPayout: false });
    const { rows: [line] } = await stack.db.query<{ id: string }>(
      `INSERT INTO offline_ledger (order_id, employer_id, vendor_id, amount_paise, route, created_at)
       SELECT id, employer_id, vendor_id, vendor_net_paise, 'manual_offline', now() - interval '10 days' FROM orders WHERE id = $1 RETURNING id`, [order.orderId]);
    await oweOrders(stack.db, [order.orderId]); // as markPaid writes the order's obligation with its line
    let families = await scrape();
    const delta = (name: string, labels: Record<string, string> = {}) => sampleValue(families, name, labels)! - sampleValue(before, name, labels)!;
    expect(delta('payouts_offline_owed_paise', { age: '7-30d' })).toBe(order.vendorNetPaise);
    expect(delta('payouts_offline_owed_lines', { age: '7-30d' })).toBe(1);
    expect(sampleValue(families, 'payouts_offline_owed_oldest_age_seconds')).toBeGreaterThanOrEqual(10 * 86_400);

    // Frozen in a batch and recorded paid five days ago, with no debit imported.
    await stack.db.query(`INSERT INTO vendor_bank_details (vendor_id, beneficiary_name, ifsc, account_ciphertext, account_iv, account_auth_tag, key_id, account_masked, created_by, updated_by)
      VALUES ($1, 'Metrics Vendor', 'HDFC0001234', '\\x01', decode(repeat('00', 12), 'hex'), decode(repeat('00', 16), 'hex'), 'k', 'XXXXXX1234', 't', 't')`, [order.vendorId]);
    await stack.db.query(`INSERT INTO settlement_batches (id, workflow_id, run_id, period_from, period_to, status, created_by) VALUES ('stb_metrics0000000', 'w', 'r-metrics', current_date, current_date, 'open', 't')`);
    const { rows: [sl] } = await stack.db.query<{ id: string }>(`INSERT INTO settlement_lines (batch_id, vendor_id, reference, amount_paise, beneficiary_name, ifsc, account_masked, bank_details_updated_at)
      VALUES ('stb_metrics0000000', $1, 'STMETRICS00001', $2, 'Metrics Vendor', 'HDFC0001234', 'XXXXXX1234', now()) RETURNING id`, [order.vendorId, order.vendorNetPaise]);
    await stack.db.query('INSERT INTO settlement_line_members (line_id, ledger_id, amount_paise) VALUES ($1, $2, $3)', [sl!.id, line!.id, order.vendorNetPaise]);
    await recordSettlementLinesInLedger(stack.db, [sl!.id]); // as the freeze writes it
    families = await scrape();
    expect(delta('payouts_settlement_batches_open')).toBe(1);
    await stack.db.query(`UPDATE settlement_lines SET status = 'paid', utr = 'UTRMETRICS01', utr_normalised = 'UTRMETRICS01', paid_on = current_date - 5 WHERE id = $1`, [sl!.id]);
    await recordSettlementLinesInLedger(stack.db, [sl!.id]); // as recording the UTR writes it
    families = await scrape();
    expect(delta('payouts_settlement_paid_without_debit')).toBe(1);
    // Paid: no longer owed offline.
    expect(delta('payouts_offline_owed_lines', { age: '7-30d' })).toBe(0);
  });

  test('when the running totals behind the counters are compared with a full count of the tables, then they agree', async () => {
    const { rows } = await stack.db.query<{ kind: string; label: string; counted: number; paise: number }>(`
      SELECT 'attempt_outcome' AS kind, outcome AS label, count(*)::int8 AS counted, 0::int8 AS paise FROM payout_attempts GROUP BY outcome
      UNION ALL SELECT 'lost_claim', '', count(*)::int8, 0 FROM payout_lost_claims
      UNION ALL SELECT 'terminal_status', status, count(*)::int8, sum(amount_paise)::int8 FROM payouts WHERE status IN ('settled', 'cancelled', 'rerouted', 'offline') GROUP BY status`);
    const { rows: totals } = await stack.db.query<{ metric: string; label: string; count: number; paise: number }>('SELECT metric, label, count, paise FROM payout_metric_totals');
    const key = (kind: string, label: string) => `${kind}/${label}`;
    const expected = Object.fromEntries(rows.filter((r) => r.counted > 0).map((r) => [key(r.kind, r.label), { count: r.counted, paise: r.paise }]));
    const actual = Object.fromEntries(totals.filter((t) => t.count > 0).map((t) => [key(t.metric, t.label), { count: t.count, paise: t.paise }]));
    expect(actual).toEqual(expected);
    // This file's payouts made every kind of total move.
    expect(Object.keys(actual)).toEqual(expect.arrayContaining(['attempt_outcome/unknown', 'attempt_outcome/recovered', 'lost_claim/', 'terminal_status/settled', 'terminal_status/cancelled']));
  });

  test('when a Schedule runs, then its last run age restarts near 0 and its cadence is its interval; a missing Schedule reads found 0', async () => {
    const client = stack.temporal.client;
    const scheduleId = `obs-${randomBytes(4).toString('hex')}`;
    const handle = await client.schedule.create({
      scheduleId,
      spec: { intervals: [{ every: '1 hour' }] },
      // A task queue no worker polls: the Schedule's run starts (what the metric reads) and does nothing.
      action: { type: 'startWorkflow', workflowType: PAYOUT_SWEEP_WORKFLOW_TYPE, taskQueue: `${scheduleId}-nobody`, args: [{ batchSize: 1 }], workflowId: scheduleId },
      policies: { overlap: ScheduleOverlapPolicy.SKIP },
    });
    try {
      const metrics = createPayoutMetrics({ db: stack.db, schedules: watchSchedules(client, [scheduleId, `${scheduleId}-missing`], { freshMs: 0 }) });
      const value = async (name: string, id = scheduleId) => sampleValue(parsePrometheusText(await metrics.render()), name, { schedule: id });
      expect(await value('payouts_schedule_found')).toBe(1);
      expect(await value('payouts_schedule_interval_seconds')).toBe(3_600);
      await new Promise((r) => setTimeout(r, 1_500));
      expect(await value('payouts_schedule_last_run_age_seconds')).toBeGreaterThanOrEqual(1);
      await handle.trigger();
      await eventually(() => handle.describe(), (d) => d.info.recentActions.length > 0, 10_000);
      expect(await value('payouts_schedule_last_run_age_seconds')).toBeLessThan(1.5);
      expect(await value('payouts_schedule_found', `${scheduleId}-missing`)).toBe(0);
      expect(await value('payouts_schedule_last_run_age_seconds', `${scheduleId}-missing`)).toBeUndefined();
    } finally {
      await handle.delete();
      for await (const run of client.workflow.list({ query: `TemporalScheduledById = "${scheduleId}" AND ExecutionStatus = "Running"` })) {
        await client.workflow.getHandle(run.workflowId, run.runId).terminate('metrics test done').catch(() => undefined);
      }
    }
  });
});
