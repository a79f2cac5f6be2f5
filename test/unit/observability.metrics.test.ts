/** The metrics registry against a stand-in database and Temporal client: what each series says for
 * a given snapshot, one read per scrape, what a failed read leaves, the Schedules' readings, the
 * backlog, the balance wall and the provider budget, the webhook and provider-call counters, and the
 * SDK exporter's address parsing. */
import { spawnSync } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import type { Db } from '../../src/db/pool';
import { countProviderCall } from '../../src/gateway/callCounts';
import { createPayoutMetrics, webhookMetrics } from '../../src/observability/metrics';
import { watchSchedules } from '../../src/observability/scheduleWatch';
import { runtimeOptions, sdkMetricsAddressFrom } from '../../src/temporal/runtime';
import { backlogSeriesOf, parsePrometheusText, sampleValue } from './observability.promText';

type Queryable = Pick<Db, 'query'>;
/** A database whose snapshot statement answers with `answer()` (or throws what it throws); the
 * backlog's and the balance wall's reads answer `reads` (an empty backlog, the wall down). */
function stubDb(answer: () => unknown, reads: { backlog?: Record<string, number>; wallSince?: Date; neededPaise?: number } = {}): Queryable & { calls: () => number } {
  const query = jest.fn(async (sql: string) => {
    const snapshotRow = answer();
    if (sql.includes('AS write_due')) return { rows: [{ write_due: 0, write_claimed: 0, write_in_flight: 0, read_unknown: 0, read_awaiting_settlement: 0, ...reads.backlog }] };
    if (sql.includes('balance_short_since AS since')) return { rows: [{ since: reads.wallSince ?? null, code: reads.wallSince ? 'BAD_REQUEST_TRANSFER_INSUFFICIENT_BALANCE' : null, probe_at: null, probe_payout: null }] };
    if (sql.includes('AS needed')) return { rows: [{ needed: String(reads.neededPaise ?? 0), n: 3 }] };
    return { rows: [snapshotRow] };
  });
  return Object.assign({ query } as unknown as Queryable, { calls: () => query.mock.calls.length });
}
const budget = { RAZORPAY_WRITE_RPS: 8, RAZORPAY_READ_RPS: 10, PAYOUT_BACKLOG_ETA_ALERT_SECONDS: 3_600 };

const snapshot = (over: Record<string, unknown> = {}) => ({
  live: [
    { status: 'pending', count: 4, paise: 40_000 },
    { status: 'parked', count: 2, paise: 16_200 },
    { status: 'processing', count: 1, paise: 8_100 },
  ],
  totals: [
    { metric: 'attempt_outcome', label: 'accepted', count: 10, paise: 0 },
    { metric: 'attempt_outcome', label: 'rejected', count: 2, paise: 0 },
    { metric: 'attempt_outcome', label: 'unknown', count: 3, paise: 0 },
    { metric: 'attempt_outcome', label: 'recovered', count: 1, paise: 0 },
    { metric: 'lost_claim', label: '', count: 5, paise: 0 },
    { metric: 'terminal_status', label: 'settled', count: 9, paise: 72_900 },
  ],
  oldest_processing: 1_900.5,
  oldest_accepted: null,
  exceptions: [
    { class: 'unmatched', severity: 'critical', reason: 'transfer-not-in-app', count: 1 },
    { class: 'mismatched', severity: 'medium', reason: 'fee-mismatch', count: 2 },
    { class: 'mismatched', severity: 'high', reason: 'amount-mismatch', count: 3 },
  ],
  paused: true,
  paused_for: 4_000,
  offline_owed: [{ bucket: '1-7d', count: 3, paise: 24_300 }, { bucket: '30d+', count: 1, paise: -1_900 }],
  oldest_offline_owed: 3 * 86_400,
  settlement_open_batches: 1,
  settlement_paid_without_debit: 2,
  refund_hints_unread: 1,
  oldest_refund_hint: 95,
  ...over,
});

const render = async (metrics: ReturnType<typeof createPayoutMetrics>) => parsePrometheusText(await metrics.render());

describe('payout metrics from the database', () => {
  test('when a snapshot is scraped, then every series says what the snapshot holds, with a # TYPE line of the right type', async () => {
    const db = stubDb(() => snapshot());
    const families = await render(createPayoutMetrics({ db }));
    const types = Object.fromEntries([...families.values()].map((f) => [f.name, f.type]));
    expect(types).toMatchObject({
      payouts_by_status: 'gauge', payouts_amount_paise_by_status: 'gauge',
      payouts_oldest_processing_age_seconds: 'gauge', payouts_oldest_accepted_age_seconds: 'gauge',
      payouts_lost_claims_total: 'counter', payouts_attempt_outcomes_total: 'counter', payouts_transfers_sent_total: 'counter',
      payouts_recon_exceptions_open: 'gauge', payouts_recon_exceptions_open_by_reason: 'gauge',
      payouts_transfers_paused: 'gauge', payouts_transfers_paused_seconds: 'gauge', payouts_metrics_db_up: 'gauge',
      process_cpu_seconds_total: 'counter',
    });
    const v = (name: string, labels?: Record<string, string>) => sampleValue(families, name, labels);
    expect(v('payouts_by_status', { status: 'parked' })).toBe(2);
    expect(v('payouts_amount_paise_by_status', { status: 'parked' })).toBe(16_200);
    expect(v('payouts_by_status', { status: 'settled' })).toBe(9);
    expect(v('payouts_amount_paise_by_status', { status: 'settled' })).toBe(72_900);
    // Every status is present, 0 when none is in it, so an alert sees it clear.
    expect(v('payouts_by_status', { status: 'review' })).toBe(0);
    expect(v('payouts_by_status', { status: 'offline' })).toBe(0);
    expect(v('payouts_oldest_processing_age_seconds')).toBe(1_900.5);
    // The offline rail: every age bucket present (0 when empty), signed paise.
    expect(v('payouts_offline_owed_paise', { age: '1-7d' })).toBe(24_300);
    expect(v('payouts_offline_owed_paise', { age: '30d+' })).toBe(-1_900);
    expect(v('payouts_offline_owed_lines', { age: '0-1d' })).toBe(0);
    expect(v('payouts_offline_owed_oldest_age_seconds')).toBe(259_200);
    expect(v('payouts_settlement_batches_open')).toBe(1);
    expect(v('payouts_settlement_paid_without_debit')).toBe(2);
    expect(v('payouts_refund_hints_unread')).toBe(1);
    expect(v('payouts_refund_hint_oldest_age_seconds')).toBe(95);
    expect(v('payouts_oldest_accepted_age_seconds')).toBe(0);
    expect(v('payouts_lost_claims_total')).toBe(5);
    expect(v('payouts_attempt_outcomes_total', { outcome: 'unknown' })).toBe(3);
    expect(v('payouts_attempt_outcomes_total', { outcome: 'recovered' })).toBe(1);
    expect(v('payouts_attempt_outcomes_total', { outcome: 'not_sent' })).toBe(0);
    expect(v('payouts_attempt_outcomes_total', { outcome: 'failed_after_accept' })).toBe(0);
    expect(v('payouts_transfers_sent_total')).toBe(15);
    expect(v('payouts_recon_exceptions_open', { class: 'mismatched', severity: 'medium' })).toBe(2);
    expect(v('payouts_recon_exceptions_open', { class: 'unmatched', severity: 'critical' })).toBe(1);
    expect(v('payouts_recon_exceptions_open', { class: 'expected', severity: 'low' })).toBe(0);
    expect(v('payouts_recon_exceptions_open_by_reason', { reason: 'transfer-not-in-app' })).toBe(1);
    expect(v('payouts_recon_exceptions_open_by_reason', { reason: 'on-hold' })).toBe(0);
    expect(v('payouts_transfers_paused')).toBe(1);
    expect(v('payouts_transfers_paused_seconds')).toBe(4_000);
    expect(v('payouts_metrics_db_up')).toBe(1);
  });

  test('when every series is collected, then the database is read once per scrape (the snapshot, the backlog, the wall), and again on the next', async () => {
    const db = stubDb(() => snapshot());
    const metrics = createPayoutMetrics({ db, budget });
    await metrics.render();
    const perScrape = db.calls();
    expect(perScrape).toBe(3);
    // Two scrapes at once share the read in flight; the next scrape reads afresh.
    await Promise.all([metrics.render(), metrics.render()]);
    expect(db.calls()).toBe(2 * perScrape);
    await metrics.render();
    expect(db.calls()).toBe(3 * perScrape);
  });

  test('when payouts wait on Razorpay, then the backlog reads by class and state, and the ETA is what is still to send at the configured write rate', async () => {
    const db = stubDb(() => snapshot(), { backlog: { write_due: 70, write_claimed: 10, write_in_flight: 4, read_unknown: 2, read_awaiting_settlement: 30 } });
    const families = await render(createPayoutMetrics({ db, budget }));
    expect(families.get('payouts_backlog')?.type).toBe('gauge');
    expect(backlogSeriesOf(families)).toEqual({
      writeDue: 70, writeClaimed: 10, writeInFlight: 4, readUnknown: 2, readAwaitingSettlement: 30,
      etaSeconds: 10, etaAlertSeconds: 3_600, writeRps: 8, readRps: 10, wallUp: 0, wallNeededPaise: 0,
    });
  });

  test('when the balance wall is up, then it reads 1 with what the waiting transfers need; without a budget there is no ETA, bound or budget series', async () => {
    const db = stubDb(() => snapshot(), { wallSince: new Date(), neededPaise: 12_345_600 });
    const families = await render(createPayoutMetrics({ db }));
    expect(sampleValue(families, 'payouts_balance_wall_up')).toBe(1);
    expect(sampleValue(families, 'payouts_balance_wall_needed_paise')).toBe(12_345_600);
    for (const name of ['payouts_backlog_eta_seconds', 'payouts_backlog_eta_alert_seconds', 'payouts_provider_budget_rps']) expect([name, families.has(name)]).toEqual([name, false]);
  });

  test('when the adapter counts Razorpay calls, then they read by endpoint and outcome; every endpoint\'s 429s are a series from the start', async () => {
    const metrics = createPayoutMetrics({ db: stubDb(() => snapshot()) });
    const read = async (labels: Record<string, string>) => sampleValue(await render(metrics), 'payouts_provider_calls_total', labels) ?? NaN;
    const before = await read({ endpoint: 'transfers.list', outcome: 'rate_limited' });
    expect(before).toBeGreaterThanOrEqual(0);
    expect(await read({ endpoint: 'settlements.fetch', outcome: 'rate_limited' })).toBeGreaterThanOrEqual(0);
    countProviderCall('transfers.list', 'rate_limited');
    countProviderCall('transfers.list', 'rate_limited');
    expect(await read({ endpoint: 'transfers.list', outcome: 'rate_limited' })).toBe(before + 2);
  });

  test('when the kill switch is off, then it reads 0 and so does its duration', async () => {
    const families = await render(createPayoutMetrics({ db: stubDb(() => snapshot({ paused: false, paused_for: 0 })) }));
    expect(sampleValue(families, 'payouts_transfers_paused')).toBe(0);
    expect(sampleValue(families, 'payouts_transfers_paused_seconds')).toBe(0);
  });

  test('when the database fails, then db_up is 0, the scrape still answers and the counters keep their last values instead of dropping to 0', async () => {
    let down = false;
    const db = stubDb(() => { if (down) throw new Error('connection refused'); return snapshot(); });
    const metrics = createPayoutMetrics({ db });
    await metrics.render();
    down = true;
    const families = await render(metrics);
    expect(sampleValue(families, 'payouts_metrics_db_up')).toBe(0);
    expect(sampleValue(families, 'payouts_lost_claims_total')).toBe(5);
    expect(sampleValue(families, 'payouts_attempt_outcomes_total', { outcome: 'accepted' })).toBe(10);
    expect(sampleValue(families, 'process_cpu_seconds_total')).toBeGreaterThan(0);
  });

  test('when the database is down from the start, then the database series are absent rather than 0', async () => {
    const db = stubDb(() => { throw new Error('connection refused'); });
    const families = await render(createPayoutMetrics({ db }));
    expect(sampleValue(families, 'payouts_metrics_db_up')).toBe(0);
    for (const name of ['payouts_lost_claims_total', 'payouts_transfers_sent_total', 'payouts_oldest_processing_age_seconds', 'payouts_transfers_paused', 'payouts_balance_wall_up']) {
      expect([name, families.get(name)?.samples.length]).toEqual([name, 0]);
    }
    expect(families.get('payouts_by_status')?.samples).toEqual([]);
    expect(families.get('payouts_backlog')?.samples).toEqual([]);
  });

  test('when two registries are built in one process, then they do not clash and count separately', async () => {
    const a = createPayoutMetrics({ db: stubDb(() => snapshot()) });
    const b = createPayoutMetrics({ db: stubDb(() => snapshot({ live: [] })) });
    const hooksA = webhookMetrics(a.registry);
    webhookMetrics(b.registry);
    hooksA.duplicate();
    const [fa, fb] = [await render(a), await render(b)];
    expect(sampleValue(fa, 'payouts_webhook_duplicates_total')).toBe(1);
    expect(sampleValue(fb, 'payouts_webhook_duplicates_total')).toBe(0);
    expect(sampleValue(fa, 'payouts_by_status', { status: 'parked' })).toBe(2);
    expect(sampleValue(fb, 'payouts_by_status', { status: 'parked' })).toBe(0);
  });
});

describe('webhook metrics', () => {
  test('when webhooks are answered, then the histogram counts them by status class and the duplicates counter moves', async () => {
    const metrics = createPayoutMetrics({ db: stubDb(() => snapshot()) });
    const webhooks = webhookMetrics(metrics.registry);
    let families = await render(metrics);
    // Present from the start at 0: rate() and the 4xx alert see every class before it happens.
    expect(sampleValue(families, 'payouts_webhook_reply_seconds_count', { status_class: '4xx' })).toBe(0);
    webhooks.replied(200, 0.012);
    webhooks.replied(200, 0.3);
    webhooks.replied(401, 0.002);
    webhooks.duplicate();
    families = await render(metrics);
    expect(families.get('payouts_webhook_reply_seconds')?.type).toBe('histogram');
    expect(sampleValue(families, 'payouts_webhook_reply_seconds_count', { status_class: '2xx' })).toBe(2);
    expect(sampleValue(families, 'payouts_webhook_reply_seconds_count', { status_class: '4xx' })).toBe(1);
    expect(sampleValue(families, 'payouts_webhook_reply_seconds_bucket', { status_class: '2xx', le: '0.025' })).toBe(1);
    expect(sampleValue(families, 'payouts_webhook_reply_seconds_bucket', { status_class: '2xx', le: '+Inf' })).toBe(2);
    expect(sampleValue(families, 'payouts_webhook_reply_seconds_sum', { status_class: '2xx' })).toBeCloseTo(0.312);
    expect(sampleValue(families, 'payouts_webhook_duplicates_total')).toBe(1);
  });
});

describe('Schedules', () => {
  const now = Date.now();
  const describeOf: Record<string, () => unknown> = {
    'every-5-min': () => ({
      spec: { intervals: [{ every: 300_000 }] }, state: { paused: false },
      info: { recentActions: [{ takenAt: new Date(now - 900_000) }, { takenAt: new Date(now - 120_000) }], createdAt: new Date(now - 86_400_000), nextActionTimes: [] },
    }),
    daily: () => ({
      spec: { calendars: [{ hour: 1, minute: 30 }] }, state: { paused: true },
      info: { recentActions: [], createdAt: new Date(now - 3_600_000), nextActionTimes: [new Date(now + 1_000), new Date(now + 86_401_000)] },
    }),
    gone: () => { throw new Error('schedule not found'); },
  };
  const client = { schedule: { getHandle: (id: string) => ({ describe: async () => describeOf[id]!() }) } } as unknown as Client;

  test('when Schedules are described, then each has its last run age and cadence; a missing one reads found 0 and nothing else', async () => {
    const metrics = createPayoutMetrics({ db: stubDb(() => snapshot()), schedules: watchSchedules(client, ['every-5-min', 'daily', 'gone']) });
    const families = await render(metrics);
    const v = (name: string, schedule: string) => sampleValue(families, name, { schedule });
    expect(v('payouts_schedule_found', 'every-5-min')).toBe(1);
    expect(v('payouts_schedule_last_run_age_seconds', 'every-5-min')).toBeGreaterThanOrEqual(120);
    expect(v('payouts_schedule_last_run_age_seconds', 'every-5-min')).toBeLessThan(130);
    expect(v('payouts_schedule_interval_seconds', 'every-5-min')).toBe(300);
    expect(v('payouts_schedule_paused', 'every-5-min')).toBe(0);
    // Never ran: its age counts from its creation; a calendar's cadence is the gap between its next two times.
    expect(v('payouts_schedule_last_run_age_seconds', 'daily')).toBeGreaterThanOrEqual(3_600);
    expect(v('payouts_schedule_interval_seconds', 'daily')).toBe(86_400);
    expect(v('payouts_schedule_paused', 'daily')).toBe(1);
    expect(v('payouts_schedule_found', 'gone')).toBe(0);
    expect(v('payouts_schedule_last_run_age_seconds', 'gone')).toBeUndefined();
  });

  test('when no Schedules are watched, then there are no Schedule series', async () => {
    const families = await render(createPayoutMetrics({ db: stubDb(() => snapshot()) }));
    expect(families.has('payouts_schedule_found')).toBe(false);
  });
});

describe('the Temporal SDK exporter', () => {
  test('when WORKER_SDK_METRICS_ADDRESS is unset, empty or off, then the exporter is off; host:port turns it on; anything else is refused by name', () => {
    expect(sdkMetricsAddressFrom({})).toBeNull();
    expect(sdkMetricsAddressFrom({ WORKER_SDK_METRICS_ADDRESS: '' })).toBeNull();
    expect(sdkMetricsAddressFrom({ WORKER_SDK_METRICS_ADDRESS: 'off' })).toBeNull();
    expect(sdkMetricsAddressFrom({ WORKER_SDK_METRICS_ADDRESS: '127.0.0.1:9464' })).toBe('127.0.0.1:9464');
    expect(sdkMetricsAddressFrom({ WORKER_SDK_METRICS_ADDRESS: '[::]:9464' })).toBe('[::]:9464');
    for (const bad of ['9464', 'localhost', '127.0.0.1:99999', 'http://127.0.0.1:9464']) {
      expect(() => sdkMetricsAddressFrom({ WORKER_SDK_METRICS_ADDRESS: bad })).toThrow(/^WORKER_SDK_METRICS_ADDRESS=.*expected host:port/);
    }
  });

  test('when an address is given, then the runtime exports Prometheus names (counters _total, durations in seconds); without one, no telemetry is configured', () => {
    expect(runtimeOptions('127.0.0.1:9464').telemetryOptions?.metrics).toMatchObject({
      prometheus: { bindAddress: '127.0.0.1:9464', countersTotalSuffix: true, useSecondsForDurations: true, unitSuffix: true },
    });
    expect(runtimeOptions(null).telemetryOptions).toBeUndefined();
  });

  test('when the worker scrapes, then the SDK\'s text follows ours and payouts_sdk_metrics_up says whether it was read', async () => {
    const sdk = http.createServer((_req, res) => { res.end('# HELP temporal_num_pollers x\n# TYPE temporal_num_pollers gauge\ntemporal_num_pollers{poller_type="workflow_task"} 2\n'); });
    await new Promise<void>((resolve) => sdk.listen(0, '127.0.0.1', resolve));
    let url: string | null = `http://127.0.0.1:${(sdk.address() as AddressInfo).port}/metrics`;
    try {
      const metrics = createPayoutMetrics({ db: stubDb(() => snapshot()), sdkMetricsUrl: () => url });
      let families = await render(metrics);
      expect(sampleValue(families, 'temporal_num_pollers', { poller_type: 'workflow_task' })).toBe(2);
      expect(sampleValue(families, 'payouts_sdk_metrics_up')).toBe(1);
      url = null;
      families = await render(metrics);
      expect(families.has('temporal_num_pollers')).toBe(false);
      expect(sampleValue(families, 'payouts_sdk_metrics_up')).toBe(0);
    } finally {
      await new Promise((resolve) => sdk.close(resolve));
    }
  });
});

describe('promtool check metrics', () => {
  const hasPromtool = spawnSync('promtool', ['--version']).status === 0;
  if (!hasPromtool) console.warn('SKIPPED: promtool is not installed (Debian package `prometheus`): the metrics text is not linted');
  (hasPromtool ? test : test.skip)('when our payouts_* text is linted by promtool, then it finds no problem', async () => {
    const metrics = createPayoutMetrics({ db: stubDb(() => snapshot()), budget });
    webhookMetrics(metrics.registry);
    // prom-client's default nodejs_* gauges end in _total, which the linter dislikes; ours are what we own.
    const ours = (await metrics.render()).split('\n').filter((l) => /^(# (HELP|TYPE) )?payouts_/.test(l)).join('\n') + '\n';
    expect(ours).toContain('# TYPE payouts_by_status gauge');
    const result = spawnSync('promtool', ['check', 'metrics'], { input: ours, encoding: 'utf8' });
    expect({ status: result.status, out: result.stdout + result.stderr }).toEqual({ status: 0, out: '' });
  });
});
