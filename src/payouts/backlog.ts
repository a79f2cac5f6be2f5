/** The provider backlog (issue 22): the direct-transfer payouts that still need Razorpay, by the call
 * class whose budget they wait on, and how long the write class takes to drain at the configured
 * rate. Read by the metrics at scrape (payouts_backlog, payouts_backlog_eta_seconds) and by the ops
 * counters (API and console).
 *
 * write: `due` (pending or failed, its backoff over), `claimed` (processing, its request not yet
 *        sent: it waits for the rate-limited money-moving call), `in_flight` (sent, no answer yet);
 * read:  `unknown` (its answer was lost: it waits for the resolver's listing), `awaiting_settlement`
 *        (accepted: settlement polls until the provider settles it).
 * The ETA counts what still needs a transfer request (due and claimed); in-flight requests have left. */
import type { Config } from '../config/config';
import type { Db, Tx } from '../db/pool';
import { formatRupees } from '../domain/money';
import { readBalanceWall, type BalanceWall } from './balanceWall';
import { waitingForWindowSql } from './captureWindow';

export interface PayoutBacklog {
  write: { due: number; claimed: number; inFlight: number };
  read: { unknown: number; awaitingSettlement: number };
}

export type BacklogClass = 'write' | 'read';

/** The backlog as labelled series, every one present (0 when empty), in a fixed order. */
export function backlogSeries(b: PayoutBacklog): Array<{ class: BacklogClass; state: string; count: number }> {
  return [
    { class: 'write', state: 'due', count: b.write.due },
    { class: 'write', state: 'claimed', count: b.write.claimed },
    { class: 'write', state: 'in_flight', count: b.write.inFlight },
    { class: 'read', state: 'unknown', count: b.read.unknown },
    { class: 'read', state: 'awaiting_settlement', count: b.read.awaitingSettlement },
  ];
}

/** Seconds to send every transfer still to be requested at `writeRps`, rounded up (0 when none). */
export function backlogEtaSeconds(b: PayoutBacklog, writeRps: number): number {
  if (!(writeRps > 0)) throw new RangeError(`the write budget must be a positive rate, got ${writeRps}`);
  return Math.ceil((b.write.due + b.write.claimed) / writeRps);
}

/** One scan of the open payouts through the partial index payouts_open_by_age (its predicate is this
 * WHERE), so it costs the open backlog, not history. Whether the current claim's answer was lost is
 * one probe of payout_attempts_one_outcome_per_claim, asked of processing payouts only. */
/** A payout (as `p`) due for its send now: pending or failed, its backoff over, and not a batched
 * order's payout waiting for the once-more look's window (captureListing.ts: it joins a batch after
 * minutes, and sends nothing itself). The one predicate the backlog, the outbox drainer's pacing and
 * the sweep's balance probe share: counted, such payouts held the drainer's starts back (bench:day at
 * 10,000 orders: 935 orders asked alone by the once-more look, their payouts not started in time). */
export const DUE_FOR_SEND_SQL = `p.status IN ('pending', 'failed') AND (p.next_attempt_at IS NULL OR p.next_attempt_at <= now())
  AND NOT ${waitingForWindowSql('p')}`;

export const PAYOUT_BACKLOG_SQL = `
SELECT count(*) FILTER (WHERE ${DUE_FOR_SEND_SQL})::int AS write_due,
       count(*) FILTER (WHERE p.status = 'processing' AND NOT u.lost AND p.request_sent_at IS NULL)::int AS write_claimed,
       count(*) FILTER (WHERE p.status = 'processing' AND NOT u.lost AND p.request_sent_at IS NOT NULL)::int AS write_in_flight,
       count(*) FILTER (WHERE p.status = 'processing' AND u.lost)::int AS read_unknown,
       count(*) FILTER (WHERE p.status = 'accepted')::int AS read_awaiting_settlement
FROM payouts p
CROSS JOIN LATERAL (SELECT CASE WHEN p.status = 'processing' THEN EXISTS (
  SELECT 1 FROM payout_attempts a WHERE a.payout_id = p.id AND a.attempt_no = p.attempts AND a.outcome = 'unknown') ELSE false END AS lost) u
WHERE p.status IN ('pending', 'failed', 'processing', 'accepted')`;

export async function readPayoutBacklog(q: Db | Tx): Promise<PayoutBacklog> {
  const { rows } = await q.query<{ write_due: number; write_claimed: number; write_in_flight: number; read_unknown: number; read_awaiting_settlement: number }>(PAYOUT_BACKLOG_SQL);
  const r = rows[0];
  return {
    write: { due: r?.write_due ?? 0, claimed: r?.write_claimed ?? 0, inFlight: r?.write_in_flight ?? 0 },
    read: { unknown: r?.read_unknown ?? 0, awaitingSettlement: r?.read_awaiting_settlement ?? 0 },
  };
}

/** The configured provider budget and the ETA's alert bound (src/config/razorpayKnobs.ts). */
export type ProviderBudget = Pick<Config, 'RAZORPAY_WRITE_RPS' | 'RAZORPAY_READ_RPS' | 'PAYOUT_BACKLOG_ETA_ALERT_SECONDS'>;

/** What ops see beside the counters: the backlog, its ETA against the bound, the budget, and the
 * balance wall with the amount finance must put in (in rupees for people, paise for programs). */
export interface BacklogReport extends PayoutBacklog {
  etaSeconds: number;
  etaAlertSeconds: number;
  overEtaBound: boolean;
  budgetRps: Record<BacklogClass, number>;
  balanceWall: (Omit<BalanceWall, 'neededPaise'> & { needed: { paise: number; rupees: string } }) | null;
}

export function backlogReport(backlog: PayoutBacklog, wall: BalanceWall | null, budget: ProviderBudget): BacklogReport {
  const etaSeconds = backlogEtaSeconds(backlog, budget.RAZORPAY_WRITE_RPS);
  const balanceWall = wall
    ? { since: wall.since, code: wall.code, nextProbeAt: wall.nextProbeAt, probePayoutId: wall.probePayoutId, waitingPayouts: wall.waitingPayouts,
        needed: { paise: wall.neededPaise, rupees: formatRupees(wall.neededPaise) } }
    : null;
  return {
    ...backlog, etaSeconds, etaAlertSeconds: budget.PAYOUT_BACKLOG_ETA_ALERT_SECONDS, overEtaBound: etaSeconds > budget.PAYOUT_BACKLOG_ETA_ALERT_SECONDS,
    budgetRps: { write: budget.RAZORPAY_WRITE_RPS, read: budget.RAZORPAY_READ_RPS }, balanceWall,
  };
}

export async function readBacklogReport(db: Db, budget: ProviderBudget): Promise<BacklogReport> {
  const [backlog, wall] = await Promise.all([readPayoutBacklog(db), readBalanceWall(db)]);
  return backlogReport(backlog, wall, budget);
}
