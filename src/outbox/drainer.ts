/** The outbox drainer, run by the worker process: claims due rows of `payouts_outbox` in small
 * batches (`FOR UPDATE SKIP LOCKED`, so two drainers never take the same row), starts each payout
 * workflow idempotently by its id (`payout-<orderId>`, USE_EXISTING + ALLOW_DUPLICATE_FAILED_ONLY;
 * a closed run counts as done), deletes the rows that started and gives the others a backoff.
 *
 * The claim is a lease, not a held transaction: one statement moves the batch's next_attempt_at
 * forward by CLAIM_LEASE_MS and commits, so no connection is held while Temporal answers, and a
 * drainer that dies mid-batch only delays its rows until the lease runs out. Each start is cut off
 * well inside the lease, so a row is never started by two drainers at once. It wakes on NOTIFY
 * `payouts_outbox` and polls every `pollMs` besides (a lost notification or connection costs at
 * most that). The payout sweep stays the backstop for anything older than the outbox.
 *
 * Pacing (issue 22 item 1): with `pacing`, a pass starts runs only while the payouts handed to
 * Temporal that have not sent their transfer (see PACED_WAITING_SQL) number fewer than
 * RAZORPAY_WRITE_RPS × OUTBOX_START_AHEAD_SECONDS, so a burst of captures waits as outbox rows, not
 * as thousands of runs competing with the API for the cores. Count and claim run under one advisory
 * lock, so drainers in several workers share one cap. */
import { idAttributes, inSpan, underTraceparent } from '../observability/tracing';
import type { PoolClient } from 'pg';
import { connectionLoss, inTransaction, type Db } from '../db/pool';
import { logger } from '../logger';
import { DUE_FOR_SEND_SQL } from '../payouts/backlog';
import type { PayoutStarter } from '../payouts/starter';
import { OUTBOX_CHANNEL, outboxRetryDelayMs, type OutboxRow } from './outbox';
import { withTimeout } from '../withTimeout';

export const CLAIM_LEASE_MS = 30_000;
export const START_TIMEOUT_MS = 10_000;

export interface DrainerOptions {
  db: Db;
  /** The Temporal-backed starter (temporalPayoutStarter), or a test's. */
  payoutStarter: PayoutStarter;
  batchSize?: number;
  pollMs?: number;
  startTimeoutMs?: number;
  /** false: no LISTEN connection, poll only. */
  listen?: boolean;
  /** Start no more runs than the provider's write budget can serve this far ahead. */
  pacing?: StartPacing;
}

export interface StartPacing { writeRps: number; aheadSeconds: number }

/** The pacing every production drainer runs with: the write budget, OUTBOX_START_AHEAD_SECONDS ahead. */
export const startPacingFrom = (config: { RAZORPAY_WRITE_RPS: number; OUTBOX_START_AHEAD_SECONDS: number }): StartPacing =>
  ({ writeRps: config.RAZORPAY_WRITE_RPS, aheadSeconds: config.OUTBOX_START_AHEAD_SECONDS });

/** How many payouts may wait in Temporal for the write budget: a buffer of `aheadSeconds` of sending. */
export const startAheadCap = (p: StartPacing): number => Math.max(1, Math.ceil(p.writeRps * p.aheadSeconds));

/** Payouts handed to Temporal that have not sent their transfer yet: open and due (or claimed and
 * unsent) with no outbox row left, plus the outbox rows under a drainer's or writer's first lease
 * (attempts 0, not yet due: being started right now). A row whose start failed (attempts > 0) is
 * not in Temporal. */
export const PACED_WAITING_SQL = `
SELECT (SELECT count(*) FROM payouts p
         WHERE ((${DUE_FOR_SEND_SQL})
                OR (p.status = 'processing' AND p.request_sent_at IS NULL))
           AND NOT EXISTS (SELECT 1 FROM payouts_outbox o WHERE o.order_id = p.order_id))
     + (SELECT count(*) FROM payouts_outbox WHERE attempts = 0 AND next_attempt_at > now()) AS waiting`;

/** The drainer's own writes (the lease, the delete, the backoff) commit without waiting for the WAL
 * to reach the disk: each is a hint about an idempotent start (the run's id is the order's, a closed
 * run counts as done), so one lost to a crash costs a start repeated, never a payout. What it saves is
 * an fsync per write beside the API's captures, whose commits do wait (issue 36's cold window). */
async function writeHint<T>(db: Db, work: (tx: Pick<Db, 'query'>) => Promise<T>): Promise<T> {
  return inTransaction(db, async (tx) => {
    await tx.query('SET LOCAL synchronous_commit = off');
    return work(tx);
  });
}

/** One lock for every drainer's count-and-claim (beside settlement's 7_233_104 and migrate's 7_233_001). */
const PACING_LOCK = 7_233_201;

export interface OutboxDrainer {
  /** One pass over everything due now; resolves with the number of rows started. */
  drainNow(): Promise<number>;
  stop(): Promise<void>;
}

interface ClaimedRow { id: number; kind: OutboxRow['kind']; order_id: string; attempts: number; traceparent: string | null }

/** Claims up to `limit` due rows under a lease. Exported for tests. */
export async function claimDue(db: Pick<Db, 'query'>, limit: number, leaseMs: number = CLAIM_LEASE_MS): Promise<OutboxRow[]> {
  const { rows } = await db.query<ClaimedRow>(
    `UPDATE payouts_outbox o SET next_attempt_at = now() + $2 * interval '1 millisecond'
       FROM (SELECT id FROM payouts_outbox WHERE next_attempt_at <= now() ORDER BY next_attempt_at, id LIMIT $1 FOR UPDATE SKIP LOCKED) due
      WHERE o.id = due.id
      RETURNING o.id, o.kind, o.order_id, o.attempts, o.traceparent`,
    [limit, leaseMs],
  );
  return rows.map((r) => ({ id: r.id, kind: r.kind, orderId: r.order_id, attempts: r.attempts, traceparent: r.traceparent }));
}

/** Claims what the cap leaves room for, under the pacing lock. Exported for tests. */
export async function claimPaced(db: Db, limit: number, cap: number, leaseMs: number = CLAIM_LEASE_MS): Promise<{ rows: OutboxRow[]; waiting: number }> {
  return writeHint(db, async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [PACING_LOCK]);
    const waiting = Number((await tx.query<{ waiting: string }>(PACED_WAITING_SQL)).rows[0]!.waiting);
    const room = Math.min(limit, cap - waiting);
    return { rows: room > 0 ? await claimDue(tx, room, leaseMs) : [], waiting };
  });
}

export function startOutboxDrainer(opts: DrainerOptions): OutboxDrainer {
  const { db, payoutStarter } = opts;
  const batchSize = opts.batchSize ?? 20;
  const pollMs = opts.pollMs ?? 1_000;
  const startTimeoutMs = opts.startTimeoutMs ?? START_TIMEOUT_MS;
  const cap = opts.pacing ? startAheadCap(opts.pacing) : null;
  let stopped = false;
  let running: Promise<number> | undefined;
  let again = false;
  let pollTimer: NodeJS.Timeout | undefined;
  let listener: PoolClient | undefined;
  let relistenTimer: NodeJS.Timeout | undefined;

  async function processBatch(batch: OutboxRow[]): Promise<number> {
    const outcomes = await Promise.all(batch.map(async (row) => {
      try {
        // In the trace of the request that wrote the row: the workflow start carries it into the run.
        await underTraceparent(row.traceparent, () => inSpan('outbox: start the payout run', { attributes: idAttributes({ orderId: row.orderId }) },
          () => withTimeout(payoutStarter.startPayout(row.orderId), startTimeoutMs)));
        return { row, ok: true as const };
      } catch (err) {
        return { row, ok: false as const, err };
      }
    }));
    const done = outcomes.filter((o) => o.ok).map((o) => o.row.id);
    if (done.length > 0) await writeHint(db, (tx) => tx.query('DELETE FROM payouts_outbox WHERE id = ANY($1::bigint[])', [done]));
    for (const o of outcomes) {
      if (o.ok) continue;
      const attempts = o.row.attempts + 1;
      const delayMs = outboxRetryDelayMs(attempts);
      logger.warn({ err: o.err, orderId: o.row.orderId, attempts, retryInMs: delayMs }, 'outbox: payout start failed; retrying later (the payout sweep is the backstop)');
      await writeHint(db, (tx) => tx.query(
        `UPDATE payouts_outbox SET attempts = $2, next_attempt_at = now() + $3 * interval '1 millisecond', last_error = $4 WHERE id = $1`,
        [o.row.id, attempts, delayMs, String(o.err instanceof Error ? o.err.message : o.err).slice(0, 500)],
      ));
    }
    return done.length;
  }

  async function drainAll(): Promise<number> {
    let started = 0;
    while (!stopped) {
      // Paced: a short batch means the cap is reached; the next poll or wake looks again.
      const batch = cap === null ? await writeHint(db, (tx) => claimDue(tx, batchSize)) : (await claimPaced(db, batchSize, cap)).rows;
      if (batch.length === 0) break;
      started += await processBatch(batch);
      if (batch.length < batchSize) break;
    }
    return started;
  }

  /** One pass at a time; a wake during a pass runs one more pass after it. */
  function drainNow(): Promise<number> {
    if (running) { again = true; return running; }
    running = (async () => {
      let total = 0;
      try {
        do {
          again = false;
          total += await drainAll();
        } while (again && !stopped);
      } catch (err) {
        logger.error({ err }, 'outbox drain pass failed; the next poll tries again');
      } finally {
        running = undefined;
      }
      return total;
    })();
    return running;
  }

  function schedulePoll(): void {
    if (stopped) return;
    pollTimer = setTimeout(() => { void drainNow().finally(schedulePoll); }, pollMs);
  }

  async function listen(): Promise<void> {
    if (stopped || opts.listen === false) return;
    try {
      const client = await db.connect();
      client.on('notification', () => { void drainNow(); });
      client.on('error', (err) => {
        logger.warn(connectionLoss(err), 'outbox LISTEN connection lost; polling until it is back');
        client.release(err);
        if (listener === client) listener = undefined;
        if (!stopped) relistenTimer = setTimeout(() => { void listen(); }, pollMs);
      });
      await client.query(`LISTEN ${OUTBOX_CHANNEL}`);
      if (stopped) { client.release(); return; }
      listener = client;
    } catch (err) {
      logger.warn({ err }, 'outbox LISTEN failed; polling');
      if (!stopped) relistenTimer = setTimeout(() => { void listen(); }, pollMs);
    }
  }

  void listen().then(() => drainNow());
  schedulePoll();

  return {
    drainNow,
    async stop() {
      stopped = true;
      clearTimeout(pollTimer);
      clearTimeout(relistenTimer);
      await running;
      if (listener) {
        const client = listener;
        listener = undefined;
        try { await client.query(`UNLISTEN ${OUTBOX_CHANNEL}`); client.release(); } catch (err) { client.release(err as Error); }
      }
    },
  };
}
