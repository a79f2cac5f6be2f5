/** Prometheus metrics of one process (the API or a worker), each process with a registry of its own
 * (tests build several APIs in one process). What the database knows is read when Prometheus
 * scrapes: one read per scrape, shared by every gauge's `collect()` — one SQL statement over running
 * totals (migration 070) and indexed slices that stay small (the open backlog, the human queue, open
 * recon exceptions), then the provider backlog (src/payouts/backlog.ts) and the balance wall
 * (src/payouts/balanceWall.ts), each read as ops read it. The Schedules' last runs come from Temporal
 * on the same scrape; the worker adds the Temporal SDK's own metrics, read from the Runtime's
 * Prometheus exporter (src/temporal/runtime.ts). The API's webhook counters live in-process
 * (webhookMetrics, fed by src/observability/apiMetrics.ts), and so do the Razorpay calls this process
 * made (src/gateway/callCounts.ts).
 *
 * When the database does not answer, `payouts_metrics_db_up` is 0 and the database-derived series
 * keep their last values (a counter that dropped to 0 would read as a reset, and a spurious rate). */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { PAYOUT_STATUSES, type PayoutStatus } from '../contracts/payout';
import type { Db } from '../db/pool';
import { PROVIDER_ENDPOINTS } from '../contracts/providerEndpoints';
import { providerCallCounts } from '../gateway/callCounts';
import { backlogEtaSeconds, backlogSeries, readPayoutBacklog, type PayoutBacklog, type ProviderBudget } from '../payouts/backlog';
import { readBalanceWall, type BalanceWall } from '../payouts/balanceWall';
import { PAYOUT_ATTEMPT_OUTCOMES } from '../payouts/repository';
import { isTerminal } from '../payouts/stateMachine';
import { CLASSES, REASONS } from '../recon/reasons';
import { SET_ASIDE_REASONS, type SetAsideReason } from '../webhooks/quarantine';
import type { ScheduleSighting, ScheduleWatch } from './scheduleWatch';

const SEVERITIES = ['low', 'medium', 'high', 'critical'] as const;
/** A request went out and was answered (or not): what "transfers sent" counts. */
const SENT_OUTCOMES: ReadonlySet<string> = new Set(['accepted', 'rejected', 'unknown']);
const LIVE_STATUSES = PAYOUT_STATUSES.filter((s) => !isTerminal(s));
/** The SDK exporter's scrape, read inside ours. */
const SDK_SCRAPE_TIMEOUT_MS = 2_000;

export interface MetricsDeps {
  db: Pick<Db, 'query'>;
  /** Where a Temporal client is at hand: the age of each Schedule's last run (the process's one
   * watch, shared with its readiness). */
  schedules?: ScheduleWatch;
  /** The worker: the SDK exporter's /metrics URL (null while it is off), appended to each scrape. */
  sdkMetricsUrl?: () => string | null;
  /** The configured provider budget and ETA bound: without it the ETA and budget series are absent. */
  budget?: ProviderBudget;
}

export interface PayoutMetrics {
  registry: Registry;
  /** The Prometheus text format's media type. */
  contentType: string;
  /** One scrape: this registry's text, then the SDK's when it is exported. */
  render(): Promise<string>;
}

interface DbSnapshot {
  live: { status: PayoutStatus; count: number; paise: number }[];
  totals: { metric: 'attempt_outcome' | 'terminal_status' | 'lost_claim'; label: string; count: number; paise: number }[];
  oldest_processing: number | null;
  oldest_accepted: number | null;
  exceptions: { class: string; severity: string; reason: string; count: number }[];
  paused: boolean;
  paused_for: number;
  offline_owed: { bucket: string; count: number; paise: number }[];
  oldest_offline_owed: number | null;
  settlement_open_batches: number;
  settlement_paid_without_debit: number;
  refund_hints_unread: number;
  oldest_refund_hint: number | null;
  /** Read after the statement (the ops views' own reads), not columns of it. */
  backlog: PayoutBacklog;
  wall: BalanceWall | null;
}

/** Ages of the open offline ledger's lines (what finance still owes by hand). */
export const OFFLINE_AGE_BUCKETS = ['0-1d', '1-7d', '7-30d', '30d+'] as const;

/** One round trip. Each slice is read through an index (payouts_status, recon_exceptions_listing,
 * the totals' primary key) and none grows with history: live statuses are the open backlog and the
 * human queue; terminal ones come from the running totals. `updated_at` of an accepted payout is
 * when it became accepted (only status transitions write it); `claimed_at` is the claim. */
const SNAPSHOT_SQL = `
SELECT
  (SELECT coalesce(json_agg(s), '[]'::json) FROM (
     SELECT status, count(*) AS count, coalesce(sum(amount_paise), 0) AS paise
     FROM payouts WHERE status = ANY($1::text[]) GROUP BY status) s) AS live,
  (SELECT coalesce(json_agg(t), '[]'::json) FROM (SELECT metric, label, count, paise FROM payout_metric_totals) t) AS totals,
  (SELECT extract(epoch FROM now() - min(claimed_at))::float8 FROM payouts WHERE status = 'processing') AS oldest_processing,
  (SELECT extract(epoch FROM now() - min(updated_at))::float8 FROM payouts WHERE status = 'accepted') AS oldest_accepted,
  (SELECT coalesce(json_agg(e), '[]'::json) FROM (
     SELECT class, severity, reason, count(*) AS count
     FROM recon_exceptions WHERE status = 'open' GROUP BY class, severity, reason) e) AS exceptions,
  sw.paused,
  CASE WHEN sw.paused THEN extract(epoch FROM now() - sw.changed_at)::float8 ELSE 0 END AS paused_for,
  (SELECT coalesce(json_agg(o), '[]'::json) FROM (
     SELECT CASE WHEN age < interval '1 day' THEN '0-1d' WHEN age < interval '7 days' THEN '1-7d' WHEN age < interval '30 days' THEN '7-30d' ELSE '30d+' END AS bucket,
            count(*) AS count, coalesce(sum(amount_paise), 0) AS paise
     FROM (SELECT now() - created_at AS age, amount_paise FROM offline_ledger_open) l GROUP BY 1) o) AS offline_owed,
  -- The oldest line the platform owes (a vendor's negative line is owed to us, not by us).
  (SELECT extract(epoch FROM now() - min(created_at))::float8 FROM offline_ledger_open WHERE amount_paise > 0) AS oldest_offline_owed,
  (SELECT count(*)::int FROM settlement_batches WHERE status = 'open') AS settlement_open_batches,
  -- Paid lines whose debit should be on the statement by now (two days after the value date) and is not.
  (SELECT count(*)::int FROM settlement_lines l WHERE l.status = 'paid' AND l.paid_on < (now() AT TIME ZONE 'Asia/Kolkata')::date - 2
     AND NOT EXISTS (SELECT 1 FROM bank_statement_debits d WHERE d.utr_normalised = l.utr_normalised AND d.amount_paise = l.amount_paise)) AS settlement_paid_without_debit,
  -- Refunds announced by webhook that Razorpay has not answered for yet (their orders are held).
  (SELECT count(*)::int FROM refund_hints) AS refund_hints_unread,
  (SELECT extract(epoch FROM now() - min(received_at))::float8 FROM refund_hints) AS oldest_refund_hint
FROM transfer_switch sw WHERE sw.id = 1`;

interface ScheduleReading { id: string; found: boolean; lastRunAgeSeconds?: number; intervalSeconds?: number; paused?: boolean }

/** Shares one load between every collect() of a scrape: prom-client calls them all in the same
 * tick, and the next scrape loads afresh. */
function perScrape<T>(load: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | null = null;
  return () => (pending ??= load().finally(() => { pending = null; }));
}

function readSchedule(s: ScheduleSighting): ScheduleReading {
  if (s.answer.kind !== 'described') return { id: s.id, found: false };
  const d = s.answer.description;
  const last = d.info.recentActions.at(-1)?.takenAt ?? d.info.createdAt;
  const every = d.spec.intervals?.[0]?.every;
  const [next, after] = d.info.nextActionTimes;
  const intervalMs = typeof every === 'number' ? every : next && after ? after.getTime() - next.getTime() : undefined;
  return {
    id: s.id, found: true, paused: d.state.paused,
    lastRunAgeSeconds: Math.max(0, (Date.now() - last.getTime()) / 1000),
    ...(intervalMs === undefined ? {} : { intervalSeconds: intervalMs / 1000 }),
  };
}

export function createPayoutMetrics(deps: MetricsDeps): PayoutMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  let dbUp = 0;
  const snapshot = perScrape(async (): Promise<DbSnapshot | null> => {
    try {
      const { rows } = await deps.db.query<Omit<DbSnapshot, 'backlog' | 'wall'>>(SNAPSHOT_SQL, [LIVE_STATUSES]);
      // Both only query; the metrics need nothing else of a pool.
      const db = deps.db as Db;
      const [backlog, wall] = await Promise.all([readPayoutBacklog(db), readBalanceWall(db)]);
      dbUp = 1;
      return rows[0] ? { ...rows[0], backlog, wall } : null;
    } catch {
      dbUp = 0;
      return null;
    }
  });
  /** A collect() that sets its metric from this scrape's snapshot, or leaves it as it was when the
   * read fails. */
  const fromDb = <M>(update: (metric: M, s: DbSnapshot) => void) => async function (this: M): Promise<void> {
    const s = await snapshot();
    if (s) update(this, s);
  };
  /** A metric without labels reads 0 from its creation; this one stays absent until a first read. */
  const absentUntilRead = (metric: Gauge | Counter) => metric.remove({});
  const totals = (s: DbSnapshot, metric: DbSnapshot['totals'][number]['metric']) => s.totals.filter((t) => t.metric === metric);
  const sum = <T>(items: T[], of: (item: T) => number) => items.reduce((n, item) => n + of(item), 0);

  new Gauge({
    name: 'payouts_metrics_db_up', help: 'Whether this scrape read the database (1) or not (0: the database-derived series keep their last values)', registers: [registry],
    async collect() { await snapshot(); this.set(dbUp); },
  });
  new Gauge({
    name: 'payouts_by_status', help: 'Payouts in each status; for the terminal ones (settled, cancelled, rerouted, offline) every payout that ever reached it', labelNames: ['status'], registers: [registry],
    collect: fromDb((g: Gauge<'status'>, s: DbSnapshot) => {
      const counts = countsByStatus(s);
      for (const status of PAYOUT_STATUSES) g.set({ status }, counts.get(status)?.count ?? 0);
    }),
  });
  new Gauge({
    name: 'payouts_amount_paise_by_status', help: 'Sum of the payouts\' amounts in paise in each status (terminal ones cumulative, as payouts_by_status)', labelNames: ['status'], registers: [registry],
    collect: fromDb((g: Gauge<'status'>, s: DbSnapshot) => {
      const counts = countsByStatus(s);
      for (const status of PAYOUT_STATUSES) g.set({ status }, counts.get(status)?.paise ?? 0);
    }),
  });
  absentUntilRead(new Gauge({
    name: 'payouts_oldest_processing_age_seconds', help: 'Seconds since the oldest `processing` payout was claimed; 0 when none is processing', registers: [registry],
    collect: fromDb((g: Gauge, s: DbSnapshot) => g.set(s.oldest_processing ?? 0)),
  }));
  absentUntilRead(new Gauge({
    name: 'payouts_oldest_accepted_age_seconds', help: 'Seconds since the oldest accepted-but-not-settled payout was accepted; 0 when none waits for settlement', registers: [registry],
    collect: fromDb((g: Gauge, s: DbSnapshot) => g.set(s.oldest_accepted ?? 0)),
  }));
  absentUntilRead(new Counter({
    name: 'payouts_lost_claims_total', help: 'Payout runs whose claim matched no row (another run or a human had moved the payout on)', registers: [registry],
    collect: fromDb((c: Counter, s: DbSnapshot) => setCounter(c, {}, sum(totals(s, 'lost_claim'), (t) => t.count))),
  }));
  new Counter({
    name: 'payouts_attempt_outcomes_total',
    help: 'payout_attempts rows by outcome: accepted, rejected, unknown (answers to a transfer request); recovered, not_found, failed_after_accept (resolver and settlement evidence); settled; not_sent (a claim released unsent)',
    labelNames: ['outcome'], registers: [registry],
    collect: fromDb((c: Counter<'outcome'>, s: DbSnapshot) => {
      const byOutcome = new Map(totals(s, 'attempt_outcome').map((t) => [t.label, t.count]));
      for (const outcome of new Set<string>([...PAYOUT_ATTEMPT_OUTCOMES, ...byOutcome.keys()])) setCounter(c, { outcome }, byOutcome.get(outcome) ?? 0);
    }),
  });
  absentUntilRead(new Counter({
    name: 'payouts_transfers_sent_total', help: 'Transfer requests sent to the provider (attempts answered accepted, rejected or unknown)', registers: [registry],
    collect: fromDb((c: Counter, s: DbSnapshot) => setCounter(c, {}, sum(totals(s, 'attempt_outcome').filter((t) => SENT_OUTCOMES.has(t.label)), (t) => t.count))),
  }));
  new Gauge({
    name: 'payouts_recon_exceptions_open', help: 'Open reconciliation exceptions by class and severity', labelNames: ['class', 'severity'], registers: [registry],
    collect: fromDb((g: Gauge<'class' | 'severity'>, s: DbSnapshot) => {
      for (const klass of CLASSES) for (const severity of SEVERITIES) {
        g.set({ class: klass, severity }, sum(s.exceptions.filter((e) => e.class === klass && e.severity === severity), (e) => e.count));
      }
    }),
  });
  new Gauge({
    name: 'payouts_recon_exceptions_open_by_reason', help: 'Open reconciliation exceptions by reason code (src/recon/reasons.ts)', labelNames: ['reason'], registers: [registry],
    collect: fromDb((g: Gauge<'reason'>, s: DbSnapshot) => {
      for (const reason of new Set<string>([...REASONS, ...s.exceptions.map((e) => e.reason)])) g.set({ reason }, sum(s.exceptions.filter((e) => e.reason === reason), (e) => e.count));
    }),
  });
  absentUntilRead(new Gauge({
    name: 'payouts_transfers_paused', help: 'The kill switch for direct transfers: 1 while paused', registers: [registry],
    collect: fromDb((g: Gauge, s: DbSnapshot) => g.set(s.paused ? 1 : 0)),
  }));
  absentUntilRead(new Gauge({
    name: 'payouts_transfers_paused_seconds', help: 'Seconds the kill switch has been on; 0 while transfers run', registers: [registry],
    collect: fromDb((g: Gauge, s: DbSnapshot) => g.set(s.paused ? s.paused_for : 0)),
  }));

  new Gauge({
    name: 'payouts_offline_owed_paise', help: 'The open offline ledger (owed by hand, not yet paid by a settlement) in paise, signed, by the age of its lines', labelNames: ['age'], registers: [registry],
    collect: fromDb((g: Gauge<'age'>, s: DbSnapshot) => { for (const age of OFFLINE_AGE_BUCKETS) g.set({ age }, Number(s.offline_owed.find((o) => o.bucket === age)?.paise ?? 0)); }),
  });
  new Gauge({
    name: 'payouts_offline_owed_lines', help: 'Lines of the open offline ledger by the age of the line', labelNames: ['age'], registers: [registry],
    collect: fromDb((g: Gauge<'age'>, s: DbSnapshot) => { for (const age of OFFLINE_AGE_BUCKETS) g.set({ age }, Number(s.offline_owed.find((o) => o.bucket === age)?.count ?? 0)); }),
  });
  absentUntilRead(new Gauge({
    name: 'payouts_refund_hints_unread', help: 'Refunds announced by a webhook and not yet read from Razorpay (moneyin/refundHints.ts): while one waits, nothing leaves for its order', registers: [registry],
    collect: fromDb((g: Gauge, s: DbSnapshot) => g.set(s.refund_hints_unread)),
  }));
  absentUntilRead(new Gauge({
    name: 'payouts_refund_hint_oldest_age_seconds', help: 'Seconds since the oldest unread refund hint arrived; 0 when none waits', registers: [registry],
    collect: fromDb((g: Gauge, s: DbSnapshot) => g.set(s.oldest_refund_hint ?? 0)),
  }));
  absentUntilRead(new Gauge({
    name: 'payouts_offline_owed_oldest_age_seconds', help: 'Seconds since the oldest open offline line the platform owes a vendor was written; 0 when none', registers: [registry],
    collect: fromDb((g: Gauge, s: DbSnapshot) => g.set(s.oldest_offline_owed ?? 0)),
  }));
  absentUntilRead(new Gauge({
    name: 'payouts_settlement_batches_open', help: 'Settlement batches with lines not yet recorded paid or failed', registers: [registry],
    collect: fromDb((g: Gauge, s: DbSnapshot) => g.set(s.settlement_open_batches)),
  }));
  absentUntilRead(new Gauge({
    name: 'payouts_settlement_paid_without_debit', help: 'Settlement lines recorded paid more than two days ago with no bank debit of their UTR and amount imported', registers: [registry],
    collect: fromDb((g: Gauge, s: DbSnapshot) => g.set(s.settlement_paid_without_debit)),
  }));

  new Gauge({
    name: 'payouts_backlog', help: 'Direct-transfer payouts waiting on Razorpay by call class and state: write due (pending/failed, backoff over), claimed (not yet sent), in_flight (sent, no answer); read unknown (answer lost, awaiting the resolver\'s listing), awaiting_settlement (accepted, settlement polls)',
    labelNames: ['class', 'state'], registers: [registry],
    collect: fromDb((g: Gauge<'class' | 'state'>, s: DbSnapshot) => { for (const b of backlogSeries(s.backlog)) g.set({ class: b.class, state: b.state }, b.count); }),
  });
  absentUntilRead(new Gauge({
    name: 'payouts_balance_wall_up', help: 'The balance wall: 1 while direct transfers wait because the platform balance is short (an insufficient-balance rejection), 0 otherwise', registers: [registry],
    collect: fromDb((g: Gauge, s: DbSnapshot) => g.set(s.wall ? 1 : 0)),
  }));
  absentUntilRead(new Gauge({
    name: 'payouts_balance_wall_needed_paise', help: 'While the balance wall is up, what the waiting direct transfers add up to in paise (the balance finance must put in); 0 when it is down', registers: [registry],
    collect: fromDb((g: Gauge, s: DbSnapshot) => g.set(s.wall?.neededPaise ?? 0)),
  }));
  if (deps.budget) {
    const budget = deps.budget;
    absentUntilRead(new Gauge({
      name: 'payouts_backlog_eta_seconds', help: 'Seconds to send every direct transfer still to be requested (write due and claimed) at the configured RAZORPAY_WRITE_RPS', registers: [registry],
      collect: fromDb((g: Gauge, s: DbSnapshot) => g.set(backlogEtaSeconds(s.backlog, budget.RAZORPAY_WRITE_RPS))),
    }));
    new Gauge({ name: 'payouts_backlog_eta_alert_seconds', help: 'The configured bound on payouts_backlog_eta_seconds (PAYOUT_BACKLOG_ETA_ALERT_SECONDS)', registers: [registry] })
      .set(budget.PAYOUT_BACKLOG_ETA_ALERT_SECONDS);
    const rps = new Gauge({ name: 'payouts_provider_budget_rps', help: 'The configured Razorpay budget in calls per second by call class (RAZORPAY_WRITE_RPS, RAZORPAY_READ_RPS)', labelNames: ['class'], registers: [registry] });
    rps.set({ class: 'write' }, budget.RAZORPAY_WRITE_RPS);
    rps.set({ class: 'read' }, budget.RAZORPAY_READ_RPS);
  }
  new Counter({
    name: 'payouts_provider_calls_total', help: 'Razorpay calls this process made, by endpoint and outcome: ok, rejected (4xx with a code), rate_limited (429), in_progress (409), server_error, timeout, connection, no_response, contract_error',
    labelNames: ['endpoint', 'outcome'], registers: [registry],
    collect() {
      const calls = providerCallCounts();
      // Every endpoint's 429s from the start, so rate() and the alert see a 0 before the first one.
      for (const endpoint of PROVIDER_ENDPOINTS) if (!calls.some((c) => c.endpoint === endpoint && c.outcome === 'rate_limited')) setCounter(this, { endpoint, outcome: 'rate_limited' }, 0);
      for (const c of calls) setCounter(this, { endpoint: c.endpoint, outcome: c.outcome }, c.count);
    },
  });

  if (deps.schedules?.ids.length) {
    const watch = deps.schedules;
    const schedules = perScrape(async () => (await watch.look()).map(readSchedule));
    const perSchedule = (name: string, help: string, value: (r: ScheduleReading) => number | undefined) => new Gauge({
      name, help, labelNames: ['schedule'], registers: [registry],
      async collect() {
        for (const r of await schedules()) {
          const v = value(r);
          if (v === undefined) this.remove({ schedule: r.id });
          else this.set({ schedule: r.id }, v);
        }
      },
    });
    perSchedule('payouts_schedule_found', 'Whether this process could describe the Temporal Schedule (0: it is missing, or Temporal did not answer)', (r) => (r.found ? 1 : 0));
    perSchedule('payouts_schedule_last_run_age_seconds', 'Seconds since the Schedule last started its workflow (since it was created, if it never has)', (r) => r.lastRunAgeSeconds);
    perSchedule('payouts_schedule_interval_seconds', 'The Schedule\'s cadence: its interval, or the gap between its next two calendar times', (r) => r.intervalSeconds);
    perSchedule('payouts_schedule_paused', 'Whether the Schedule is paused in Temporal', (r) => (r.paused === undefined ? undefined : r.paused ? 1 : 0));
  }

  const sdkUrl = deps.sdkMetricsUrl;
  const sdkUp = sdkUrl ? new Gauge({ name: 'payouts_sdk_metrics_up', help: '1 when this scrape read the Temporal SDK exporter (its temporal_* series follow)', registers: [registry] }) : null;

  return {
    registry,
    contentType: registry.contentType,
    async render() {
      const sdk = sdkUrl ? await readSdkMetrics(sdkUrl()) : null;
      sdkUp?.set(sdk === null ? 0 : 1);
      const own = await registry.metrics();
      return sdk ? `${own}${own.endsWith('\n') ? '' : '\n'}${sdk}` : own;
    },
  };
}

function countsByStatus(s: DbSnapshot): Map<string, { count: number; paise: number }> {
  const out = new Map<string, { count: number; paise: number }>();
  for (const r of s.live) out.set(r.status, { count: r.count, paise: Number(r.paise) });
  for (const t of s.totals) if (t.metric === 'terminal_status') out.set(t.label, { count: t.count, paise: t.paise });
  return out;
}

/** A counter whose running total lives in the database: set it to that total. */
function setCounter<T extends string>(counter: Counter<T>, labels: Partial<Record<T, string>>, value: number): void {
  counter.remove(labels);
  counter.inc(labels, value);
}

async function readSdkMetrics(url: string | null): Promise<string | null> {
  if (!url) return null;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(SDK_SCRAPE_TIMEOUT_MS) });
    return res.ok ? await res.text() : null;
  } catch {
    return null;
  }
}

/** The API's own webhook numbers, counted in-process (each API process its own). */
export interface WebhookMetrics {
  /** One answer of POST /webhooks/razorpay: its status and how long the reply took. */
  replied(statusCode: number, seconds: number): void;
  /** One event that had already been processed (answered 2xx with `duplicate: true`). */
  duplicate(): void;
  /** One signed event answered 2xx but not applied, and why (src/webhooks/quarantine.ts). */
  setAside(reason: SetAsideReason): void;
}

export function webhookMetrics(registry: Registry): WebhookMetrics {
  const reply = new Histogram({
    name: 'payouts_webhook_reply_seconds', help: 'Time to answer a Razorpay webhook (Razorpay waits 5 s), by status class of the answer',
    labelNames: ['status_class'], buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5], registers: [registry],
  });
  const duplicates = new Counter({ name: 'payouts_webhook_duplicates_total', help: 'Webhooks whose event id had already been processed (acknowledged, nothing done)', registers: [registry] });
  const setAside = new Counter({
    name: 'payouts_webhook_set_aside_total', help: 'Signed webhooks answered 2xx but not applied: refused by our schema (quarantined) or outside the replay window, by reason',
    labelNames: ['reason'], registers: [registry],
  });
  // Series exist from the start, so rate() and alerts see a 0 before the first webhook.
  for (const statusClass of ['2xx', '4xx', '5xx']) reply.zero({ status_class: statusClass });
  for (const reason of SET_ASIDE_REASONS) setAside.inc({ reason }, 0);
  return {
    replied(statusCode, seconds) { reply.observe({ status_class: `${Math.floor(statusCode / 100)}xx` }, seconds); },
    duplicate() { duplicates.inc(); },
    setAside(reason) { setAside.inc({ reason }); },
  };
}
