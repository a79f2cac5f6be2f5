/** `npm run campaign -- --orders N --seed S [--duration 60s]`: a seeded fault campaign on the
 * production topology (two workers, two APIs, the sandbox as Razorpay, Temporal and PostgreSQL as
 * their own processes). It plans a workload and a fault schedule from the seed, runs both at once,
 * clears the faults and lets the Schedules bring the system to rest, then judges it from the
 * provider's ledger and PostgreSQL, closes the books through recon, prints a table and exits 1 on
 * any violation, with the seed to repeat the run. `--plan-only` prints the plan and its digest. */
import { Client, Connection } from '@temporalio/client';
import path from 'node:path';
import { Pool } from 'pg';
import type { WorkerBuild } from '../../src/devstack/rollingDeploy';
import { startTopology } from '../../src/devstack/topology';
import type { Topology } from '../../src/devstack/topologyTypes';
import { istDateOf } from '../../src/domain/calendar';
import { formatRupees } from '../../src/domain/money';
import { sleep } from './calls';
import { checkOrders, tableByRoute, type CheckResult } from './checker';
import { nondeterminismErrors, prepareDeployBuilds } from './deploy';
import { startFaults } from './faults';
import { writeFindings } from './findings';
import { readDbLedger, readProviderLedger, stillMoving } from './ledgers';
import { planCampaign, planDigest, type CampaignPlan } from './plan';
import { closeTheBooks, type ReconOutcome } from './recon';
import { giveBankDetails, offlineSettler, type OfflineSettlement } from './offline';
import { checkRails, type RailResult } from './railChecker';
import { buildWorld, closeOpenBatches, runWorkload, switchSchedule } from './workload';
import { checkLedger, type LedgerResult } from './ledgerChecker';

/** Shorter clocks than production (seconds, not minutes) so that a run quiesces within minutes;
 * the order between the timeouts is the one config enforces. Faults are sized against them. */
export const CAMPAIGN_TUNING: Readonly<Record<string, string>> = {
  PAYOUT_RETRY_BACKOFF_MS: '500',
  PAYOUT_RETRY_BACKOFF_MAX_MS: '4000',
  PAYOUT_ATTEMPT_CAP: '12',
  PAYOUT_HUMAN_RECHECK_MS: '5000',
  // The balance wall's probe (issue 22): a zero-balance window ends in seconds, not a minute.
  PAYOUT_BALANCE_PROBE_MS: '2000',
  MISSED_WEBHOOK_SWEEP_AGE_MS: '4000',
  MISSED_WEBHOOK_SWEEP_EVERY_MS: '3000',
  UNPAID_ORDER_EXPIRY_MS: '30000',
  LATE_CAPTURE_RECHECK_MS: '3000',
  SPLIT_TRANSFER_POLL_MS: '2000',
  REFUND_RETRY_BACKOFF_MS: '500',
  REFUND_RETRY_BACKOFF_MAX_MS: '4000',
  SETTLEMENT_UTR_REFRESH_MS: '5000',
  // Razorpay's rate limit, enforced by the sandbox (issue 22): within its 5–10/s payouts guidance
  // for writes at the campaign's order rate, and its 429 answered as Razorpay answers it.
  SANDBOX_RATE_LIMIT_WRITE_RPS: '20',
  SANDBOX_RATE_LIMIT_READ_RPS: '40',
};
const GATEWAY_TIMEOUT_MS = 3_000;
const STALE_CLAIM_MS = 8_000;
const WEBHOOK_RETRY_BASE_MS = 50;
/** The sandbox gives an event up after 8 tries: 7 backoffs of base × 2^k. */
const WEBHOOK_RETRY_SPAN_MS = WEBHOOK_RETRY_BASE_MS * (2 ** 7 - 1);

export interface CampaignOptions {
  orders: number;
  seed: number;
  durationMs?: number;
  quiesceDeadlineMs?: number;
  keep?: boolean;
  /** On a self-hosted Temporal cluster, with its services' faults and every engine fault below. */
  cluster?: boolean;
  /** The app's database restored to a point 10–15 s earlier, once (db_rollback). */
  dbRollback?: boolean;
  /** The app's PostgreSQL as a primary with a synchronous replica, failed over once. */
  failover?: boolean;
  /** The workers start as the previous build and are rolled to this checkout's mid-run. */
  rollingDeploy?: boolean;
  log: (line: string) => void;
}

export interface CampaignResult {
  plan: CampaignPlan;
  check: CheckResult;
  rails: RailResult;
  ledger: LedgerResult;
  settlement: OfflineSettlement;
  recon: ReconOutcome | null;
  fired: Record<string, number>;
  quiesceMs: number;
  stillMoving: Record<string, number>;
  problems: string[];
  violations: string[];
  /** On failure: the orders involved, their rows and webhook events (a JSON file beside the logs). */
  findings: string | null;
  stateDir: string;
}

type Engines = Pick<CampaignOptions, 'cluster' | 'dbRollback' | 'failover' | 'rollingDeploy'>;

/** A cluster campaign runs every engine fault a cluster user meets: a replicated PostgreSQL failed
 * over, a database restored to an earlier point, a rolling deploy of a workflow change. */
export function withClusterEngines<T extends Engines>(o: T): T {
  return o.cluster ? { ...o, failover: true, dbRollback: true, rollingDeploy: true } : o;
}

export function campaignPlan(given: Pick<CampaignOptions, 'orders' | 'seed' | 'durationMs' | 'cluster' | 'dbRollback' | 'failover' | 'rollingDeploy'>): CampaignPlan {
  const o = withClusterEngines(given);
  return planCampaign({ seed: o.seed, orders: o.orders, durationMs: o.durationMs, cluster: o.cluster, dbRollback: o.dbRollback, failover: o.failover, rollingDeploy: o.rollingDeploy, gatewayTimeoutMs: GATEWAY_TIMEOUT_MS, staleClaimMs: STALE_CLAIM_MS, webhookRetrySpanMs: WEBHOOK_RETRY_SPAN_MS });
}

export async function runCampaign(given: CampaignOptions): Promise<CampaignResult> {
  const o = withClusterEngines(given);
  const { log } = o;
  const plan = campaignPlan(o);
  log(`campaign seed ${plan.seed}: ${plan.orders.length} orders over ${(plan.durationMs / 1000).toFixed(0)} s, ${plan.faults.length} scheduled faults, plan ${planDigest(plan)}`);
  const builds = o.rollingDeploy ? await prepareDeployBuilds(path.resolve(__dirname, '../..'), log) : null;
  const t = await startTopology({
    durableServers: true,
    ...(o.cluster ? { temporal: 'cluster' as const } : {}),
    ...(o.failover ? { postgres: 'replicated' as const } : {}),
    ...(builds ? { workerBuild: builds.previous } : {}),
    env: { ...CAMPAIGN_TUNING, GATEWAY_TIMEOUT_MS: String(GATEWAY_TIMEOUT_MS), PAYOUT_STALE_CLAIM_MS: String(STALE_CLAIM_MS) },
    sandboxWebhookRetryBaseMs: WEBHOOK_RETRY_BASE_MS,
    log: (line) => log(`topology: ${line}`),
  });
  const db = new Pool({ connectionString: t.databaseUrl, max: 4 });
  db.on('error', () => undefined); // idle clients die with the PostgreSQL restart: the next query reconnects
  const connection = await Connection.connect({ address: t.temporalAddress });
  const temporal = new Client({ connection, namespace: t.namespace });
  try {
    return await runOn(t, db, temporal, plan, o, builds?.current);
  } finally {
    await db.end().catch(() => undefined);
    await connection.close().catch(() => undefined);
    if (o.keep) log(`--keep: the topology stays up (logs in ${t.stateDir}); Ctrl-C stops it`);
    else {
      await t.stop();
      await builds?.remove();
    }
  }
}

async function runOn(t: Topology, db: Pool, temporal: Client, plan: CampaignPlan, o: CampaignOptions, deployTo?: WorkerBuild): Promise<CampaignResult> {
  const { log } = o;
  const campaignStart = new Date();
  const world = await buildWorld(t, plan, log);
  await giveBankDetails(t, world);
  const settler = offlineSettler(t, world, plan.seed, log);
  const campaignDay = istDateOf(campaignStart);
  const startedAt = Date.now();
  const faults = startFaults(t, plan, world, temporal, startedAt, log, deployTo);
  const switchProblems: string[] = [];
  const tenth = Math.max(1, Math.floor(plan.orders.length / 10));
  // Finance settles the offline ledger at its planned times while the orders and faults go on.
  const rounds = (async () => {
    for (const round of plan.settlements) {
      await sleep(Math.max(0, startedAt + round.atMs - Date.now()));
      await settler.settle({ from: campaignDay, failOne: round.failOne, why: round.why, ...(round.cancelAfterDownload ? { cancelAfterDownload: true } : {}) });
    }
  })();
  // Admin switches one pair's payout schedule at planned times while its orders come and go.
  const switches = (async () => {
    for (const s of plan.scheduleSwitches) {
      await sleep(Math.max(0, startedAt + s.atMs - Date.now()));
      await switchSchedule(t, world, s.to).then(() => log(`admin: the switching pair now pays ${s.to}`), (err: unknown) => switchProblems.push(`schedule switch to ${s.to}: ${String(err)}`));
    }
  })();
  const histories = await runWorkload(t, plan, world, startedAt, (done) => {
    if (done % tenth === 0 || done === plan.orders.length) log(`workload: ${done}/${plan.orders.length} orders taken down their routes (${((Date.now() - startedAt) / 1000).toFixed(0)} s)`);
  });
  await faults.done;
  await rounds;
  await switches;
  log(`workload and faults done after ${((Date.now() - startedAt) / 1000).toFixed(1)} s; clearing faults and quiescing`);

  // Quiesce: faults cleared, the Schedules (sweeps) and ops' retries left to bring everything to rest.
  const quiesceStart = Date.now();
  await faults.clearAll();
  const orderIds = histories.map((h) => h.orderId).filter((id): id is string => id !== null);
  // Planned to wait for a person: parked or in review, and a Dashboard refund that may hold its payout.
  const plannedParked = histories.filter((h) => h.orderId && ((h.planned.expect.transfers === 'direct' && (h.planned.expect.payout !== 'settled' || h.planned.expect.refundedOutside))
    || (h.planned.expect.transfers === 'batched' && h.planned.expect.refundedOutside === 'before_batch_paid'))).map((h) => h.orderId!);
  const deadline = quiesceStart + (o.quiesceDeadlineMs ?? 180_000 + plan.orders.length * 300);
  let moving: Record<string, number> = {};
  let lastReport = 0;
  for (;;) {
    await closeOpenBatches(t, world).catch((err: unknown) => log(`quiesce: could not close the open batches yet: ${String(err)}`));
    moving = await stillMoving(db, orderIds, plannedParked).catch((err: unknown) => ({ [`unreadable: ${String(err)}`]: 1 }));
    if (Object.keys(moving).length === 0) break;
    if (Date.now() > deadline) {
      log(`quiesce: deadline passed with ${JSON.stringify(moving)} still moving`);
      break;
    }
    if (Date.now() - lastReport > 5_000) {
      lastReport = Date.now();
      log(`quiesce: ${((Date.now() - quiesceStart) / 1000).toFixed(0)} s, still moving: ${Object.entries(moving).map(([k, v]) => `${v} ${k}`).join(', ')}`);
    }
    await sleep(500);
  }
  // Late duplicates and hints still in the sandbox's queue land before the ledgers are read.
  await t.sandbox.drainWebhooks(30_000).catch(() => undefined);
  await faults.stopOps();
  const quiesceMs = Date.now() - quiesceStart;
  log(`quiesced in ${(quiesceMs / 1000).toFixed(1)} s`);

  // The last round, once quiet: what the rounds failed or could not reach yet is paid now.
  await settler.settle({ from: campaignDay, failOne: false, why: 'after the system came to rest' });
  const dbLedger = await readDbLedger(db, orderIds);
  const provider = await readProviderLedger(t);
  const check = checkOrders(histories, world, dbLedger, provider);
  const rails = checkRails(check.verdicts, dbLedger, settler.state);
  const ledger = await checkLedger(db, histories, world, dbLedger, provider, settler.state)
    .catch((err: unknown): LedgerResult => ({ violations: [`the ledger check could not run: ${String(err)}`], vendors: 0, transferDischarges: 0, mismatches: 0, probes: [] }));
  const problems = [...faults.problems, ...settler.state.problems, ...switchProblems, ...t.processes().filter((p) => !p.running).map((p) => `${p.name} is not running at the end`),
    ...(await nondeterminismErrors(t.stateDir)).map((line) => `nondeterminism error in a worker's log: ${line}`)];
  let recon: ReconOutcome | null = null;
  const reconProblems: string[] = [];
  try {
    await settler.importDebits();
    recon = await closeTheBooks(t, plan, histories, campaignStart, log);
  } catch (err) {
    reconProblems.push(`recon could not run: ${err instanceof Error ? err.message : String(err)}`);
  }
  const fired = { ...(await t.sandbox.faultsFired()), ...faults.fired };
  const violations = [
    ...check.violations,
    ...rails.violations,
    ...ledger.violations,
    ...(recon?.exceptions ?? []).filter((e) => e.reason === 'ledger-drift').map((e) => `recon raised ledger-drift on ${e.entityId ?? '?'}: the ledger as written differs from the rails' rows`),
    ...Object.entries(moving).map(([k, v]) => `still moving at the quiesce deadline: ${v} ${k}`),
    ...(recon?.violations ?? []),
    ...reconProblems,
    ...problems,
  ];
  let findings: string | null = null;
  if (violations.length > 0) {
    findings = await writeFindings(t, db, check.verdicts, { seed: plan.seed, orders: plan.orders.length, violations, recon, fired }).catch((err: unknown) => `not written: ${String(err)}`);
  }
  return { plan, check, rails, ledger, settlement: settler.state, recon, fired, quiesceMs, stillMoving: moving, problems, violations, findings, stateDir: t.stateDir };
}

// ---------------------------------------------------------------------------------------------
// Output

/** "adjustment, on-hold, captured-not-settled ×3": each reason once, with how many were planted. */
function plantedReasons(plan: CampaignPlan): string {
  const counts = new Map<string, number>();
  for (const p of plan.planted) counts.set(p.reason, (counts.get(p.reason) ?? 0) + 1);
  return [...counts].map(([reason, n]) => (n > 1 ? `${reason} ×${n}` : reason)).join(', ');
}

function table(headers: string[], rows: Array<Array<string | number>>): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells: Array<string | number>) => cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]!) : String(c).padStart(widths[i]!))).join('  ');
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function report(r: CampaignResult, opts: { orders: number; seed: number; durationMs?: number; cluster?: boolean; dbRollback?: boolean; failover?: boolean; rollingDeploy?: boolean }): string {
  const rows = tableByRoute(r.check.verdicts);
  const totals = rows.reduce((s, x) => ({ orders: s.orders + x.orders, transfers: s.transfers + x.transfers, duplicates: s.duplicates + x.duplicates, lost: s.lost + x.lost, stuck: s.stuck + x.stuck, parked: s.parked + x.parked, disagreements: s.disagreements + x.disagreements }),
    { orders: 0, transfers: 0, duplicates: 0, lost: 0, stuck: 0, parked: 0, disagreements: 0 });
  const paid = r.check.verdicts.filter((v) => v.liveTransfers > 0).reduce((s, v) => s + (v.history.vendorNetPaise ?? 0), 0);
  const out = [
    '',
    `by route (orders placed, live transfers at the provider, duplicates, lost, stuck, parked, orders whose books disagree):`,
    table(['route', 'orders', 'transfers', 'duplicates', 'lost', 'stuck', 'parked', 'disagreements'], [
      ...rows.map((x) => [x.route, x.orders, x.transfers, x.duplicates, x.lost, x.stuck, x.parked, x.disagreements]),
      ['total', totals.orders, totals.transfers, totals.duplicates, totals.lost, totals.stuck, totals.parked, totals.disagreements],
    ]),
    `unattributed transfers at the provider: ${r.check.unattributed.length}; paid to vendors by transfer: ${formatRupees(paid)}`,
    `batches (hourly pair; a batched order's transfer above is its batch's): ${r.check.batches.count} batch(es) of ${r.check.batches.orders} order(s), paid by ${r.check.batches.liveTransfers} live transfer(s)`,
    `schedule switches: ${r.plan.scheduleSwitches.length}; batch transfers reversed from the Dashboard: ${r.check.batches.reversed ?? 0} (${r.check.batches.reversedUnheard ?? 0} unheard by our rows); Dashboard refunds of batched orders: ${r.check.batches.refundedBefore ?? 0} before the batch paid, ${r.check.batches.refundedAfter ?? 0} after`,
    `settlement batches cancelled after their bank file was downloaded: ${r.settlement.cancelsRefused ?? 0} cancel(s) refused (409), ${r.settlement.cancelled?.length ?? 0} line(s) cancelled as never submitted`,
    `ledger (obligations, discharges): ${r.ledger.vendors} vendor(s) tied to the provider's transfers and the bank debits, ${r.ledger.transferDischarges} transfer discharge(s) matched, ${r.ledger.mismatches} mismatch(es); constraints probed: ${r.ledger.probes.join(', ') || 'none'}`,
    `offline rail: ${r.settlement.rounds} settlement round(s), ${r.settlement.paid.length} line(s) paid (${r.settlement.failed.length} failed and paid again later), ${r.rails.paidOfflineOrders} order(s) paid by settlement (${formatRupees(r.rails.paidOfflinePaise)}), ${r.rails.carriedForwardOrders} carried forward`,
    '',
    'faults that fired (counted, not planned):',
    table(['fault', 'count'], Object.entries(r.fired).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, v])),
    '',
    `time to quiesce: ${(r.quiesceMs / 1000).toFixed(1)} s`,
    r.recon
      ? `recon ${r.recon.window.from}…${r.recon.window.to}: ${r.recon.settlements} settlement(s), ${r.recon.matched} matched, ${r.recon.exceptions.length} open exception(s), ${r.plan.planted.length - r.recon.missing.length} of ${r.plan.planted.length} planted raised (${plantedReasons(r.plan)}), ${r.recon.exceptions.filter((e) => e.planted).length - (r.plan.planted.length - r.recon.missing.length)} expected (Dashboard refunds after the payout, reversals whose webhook was lost), ${r.recon.exceptions.filter((e) => !e.planted).length} unexpected`
      : 'recon: did not run',
    '',
  ];
  if (r.violations.length === 0) {
    out.push(`PASS: seed ${r.plan.seed}, ${r.plan.orders.length} orders: every vendor paid exactly once, by transfer or by settlement, never both; the books close`);
  } else {
    out.push(`FAIL: ${r.violations.length} violation(s):`);
    for (const v of r.violations.slice(0, 100)) out.push(`  - ${v}`);
    if (r.violations.length > 100) out.push(`  … and ${r.violations.length - 100} more`);
    out.push(`the orders involved, their rows and webhook events: ${r.findings}; every process's log: ${r.stateDir}`);
    const again = `npm run campaign -- --orders ${opts.orders} --seed ${opts.seed}${opts.durationMs ? ` --duration ${opts.durationMs}ms` : ''}${opts.cluster ? ' --cluster' : `${opts.failover ? ' --failover' : ''}${opts.rollingDeploy ? ' --rolling-deploy' : ''}${opts.dbRollback ? ' --db-rollback' : ''}`}`;
    out.push(`repeat with: ${again}`);
  }
  return out.join('\n');
}

// ---------------------------------------------------------------------------------------------
// The command

function parseDuration(v: string): number {
  const m = /^(\d+)(ms|s|m)?$/.exec(v.trim());
  if (!m) throw new Error(`not a duration: ${v} (e.g. 90s, 2m, 60000ms)`);
  return Number(m[1]) * (m[2] === 'm' ? 60_000 : m[2] === 'ms' ? 1 : 1_000);
}

async function main(argv: string[]): Promise<number> {
  const { Command, InvalidArgumentError } = await import('commander');
  const int = (v: string) => {
    if (!/^\d+$/.test(v)) throw new InvalidArgumentError('a non-negative integer');
    return Number(v);
  };
  const duration = (v: string) => {
    try { return parseDuration(v); } catch (err) { throw new InvalidArgumentError((err as Error).message); }
  };
  const program = new Command('campaign')
    .description('A seeded fault campaign on the production topology, checked from the provider\'s ledger and PostgreSQL, ending in recon')
    .option('--orders <n>', 'orders in the workload', int, 100)
    .option('--seed <s>', 'the seed (default: a random one, printed)', int)
    .option('--duration <d>', 'how long the workload and its faults last (default: 4 orders/s, at least 60 s)', duration)
    .option('--quiesce-deadline <d>', 'how long the system may take to come to rest after the faults', duration)
    .option('--plan-only', 'print the plan (JSON) and its digest, start nothing')
    .option('--keep', 'leave the topology running at the end')
    .option('--cluster', 'on a self-hosted Temporal cluster (four service processes on PostgreSQL), with SIGKILLs of history and matching and a frontend restart; implies --failover, --rolling-deploy and --db-rollback')
    .option('--failover', 'the app database as a primary with a synchronous streaming replica behind one address, failed over once mid-run')
    .option('--rolling-deploy', 'the workers start as the previous build (this commit without one shipped workflow change) and are replaced one at a time by this one mid-run, with Worker Versioning')
    .option('--db-rollback', 'the app database restored once to a snapshot 10-15 s old, while Temporal and the sandbox keep what happened since')
    .exitOverride();
  program.parse(argv, { from: 'user' });
  const opts = program.opts<{ orders: number; seed?: number; duration?: number; quiesceDeadline?: number; planOnly?: boolean; keep?: boolean; cluster?: boolean; dbRollback?: boolean; failover?: boolean; rollingDeploy?: boolean }>();
  const seed = opts.seed ?? Math.floor(Math.random() * 2 ** 31);
  const engines = withClusterEngines({ cluster: opts.cluster, dbRollback: opts.dbRollback, failover: opts.failover, rollingDeploy: opts.rollingDeploy });
  if (opts.planOnly) {
    const plan = campaignPlan({ orders: opts.orders, seed, durationMs: opts.duration, ...engines });
    process.stdout.write(`${JSON.stringify(plan, null, 2)}\nplan ${planDigest(plan)}\n`);
    return 0;
  }
  const started = Date.now();
  const log = (line: string) => process.stdout.write(`[${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s] ${line}\n`);
  const result = await runCampaign({ orders: opts.orders, seed, durationMs: opts.duration, quiesceDeadlineMs: opts.quiesceDeadline, keep: opts.keep, ...engines, log });
  process.stdout.write(`${report(result, { orders: opts.orders, seed, durationMs: opts.duration, ...engines })}\n`);
  log(`campaign took ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return result.violations.length === 0 ? 0 : 1;
}

if (require.main === module) {
  // Exit once stdout is flushed: a piped --plan-only of 1,000 orders is more than the pipe holds.
  const exit = (code: number) => process.stdout.write('', () => process.exit(code));
  main(process.argv.slice(2)).then(exit, (err: unknown) => {
    const code = (err as { code?: string }).code;
    if (typeof code === 'string' && code.startsWith('commander.')) process.exit(code === 'commander.helpDisplayed' || code === 'commander.version' ? 0 : 2);
    process.stderr.write(`campaign failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exit(2);
  });
}
