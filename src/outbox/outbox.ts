/** The payouts outbox (migrations/090_outbox.sql): "start the payout workflow for order X", written
 * in the transaction that creates the payout row, so the start can never be lost between a commit
 * and a process that dies after it answered. A webhook leaves the start to the drainer in the worker
 * (./drainer.ts): the row is due at once and the drainer is woken just after the commit
 * (`wakeDrainerSoon`), so the reply carries no Temporal work at all. Other writers (the browser
 * callback, the sweep, a wallet or cash order) try first, right after their commit (`startPayoutAfterCommit`), under a short lease; the drainer
 * takes every row such a try did not finish: failed, or its process gone. */
import type { Db, Tx } from '../db/pool';
import { logger } from '../logger';

/** The LISTEN/NOTIFY channel that wakes the drainer. */
export const OUTBOX_CHANNEL = 'payouts_outbox';

/** How long the writer's own after-commit try holds a fresh row before a drainer may take it. */
export const WRITER_LEASE_MS = 5_000;

/** `traceparent`: the trace the row's writer ran in (the drainer's start continues it). */
export interface OutboxRow { id: number; kind: 'start_payout'; orderId: string; attempts: number; traceparent: string | null }

type Queryable = Pick<Db, 'query'>;

/** The row, as the body of a data-modifying CTE (`WITH start AS (…)`), so that a writer can put it
 * in the statement that writes the payout; it returns the row's `id`. The arguments are the
 * writer's parameter placeholders for the order id, the lease in milliseconds and the traceparent
 * the row continues (none: NULL). */
export function enqueuePayoutStartSql(orderParam: string, leaseMsParam: string, traceparentParam = 'NULL'): string {
  return `INSERT INTO payouts_outbox (kind, order_id, next_attempt_at, traceparent) VALUES ('start_payout', ${orderParam}, now() + ${leaseMsParam}::int * interval '1 millisecond', ${traceparentParam}::text) RETURNING id`;
}

/** The select list item that wakes the drainer at commit (the notification is sent only if the
 * transaction commits). Not for a hot path: to queue a notification at commit PostgreSQL takes one
 * database-wide lock, so transactions that notify commit one at a time (npm run bench:webhooks at
 * 400 captures/s: 240/s answered with a NOTIFY in each, all 400/s without); a hot writer uses {@link wakeDrainerSoon} after its commit instead. */
export const WAKE_DRAINER_SQL = `pg_notify('${OUTBOX_CHANNEL}', '')`;

/** How long a wake waits for others to join it: one NOTIFY per window per pool, whatever the rate. */
export const WAKE_COALESCE_MS = 20;
const pendingWakes = new WeakMap<Queryable, NodeJS.Timeout>();

/** After a commit that made rows due: one NOTIFY, in its own statement, within WAKE_COALESCE_MS,
 * for every caller in that window. Best effort: a lost wake costs the drainer's poll interval. */
export function wakeDrainerSoon(db: Queryable): void {
  if (pendingWakes.has(db)) return;
  const timer = setTimeout(() => {
    pendingWakes.delete(db);
    db.query(`SELECT ${WAKE_DRAINER_SQL}`).catch((err: unknown) => logger.warn({ err }, 'outbox: waking the drainer failed; its poll will find the rows'));
  }, WAKE_COALESCE_MS);
  timer.unref();
  pendingWakes.set(db, timer);
}

/** In the caller's transaction, one statement. `leaseMs` 0: due at once, and the drainer is woken
 * at commit. */
export async function enqueuePayoutStart(tx: Tx, orderId: string, leaseMs: number = WRITER_LEASE_MS): Promise<number> {
  const { rows } = await tx.query<{ id: number }>(
    `WITH start AS (${enqueuePayoutStartSql('$1', '$2')}) SELECT id${leaseMs <= 0 ? `, ${WAKE_DRAINER_SQL}` : ''} FROM start`,
    [orderId, leaseMs],
  );
  return rows[0]!.id;
}

/** Done: the row goes. A row a drainer holds right now is left to it (it deletes it itself). */
export async function completeOutboxRow(db: Queryable, id: number): Promise<void> {
  await db.query('DELETE FROM payouts_outbox WHERE id IN (SELECT id FROM payouts_outbox WHERE id = $1 FOR UPDATE SKIP LOCKED)', [id]);
}

/** Backoff after the n-th failed attempt: 1 s, 2 s, 4 s … capped at 5 min. */
export function outboxRetryDelayMs(attempts: number): number {
  return Math.min(1_000 * 2 ** Math.max(0, Math.min(attempts - 1, 20)), 300_000);
}

/** Not done: counts the attempt when there was one, makes the row due after the backoff (or at
 * once, `attempted: false`, when the writer only hands it over) and wakes the drainer. */
export async function releaseOutboxRow(db: Queryable, id: number, failure: { attempted: boolean; error?: unknown }): Promise<void> {
  const text = failure.error === undefined ? null : String(failure.error instanceof Error ? failure.error.message : failure.error).slice(0, 500);
  await db.query(
    `WITH r AS (
       UPDATE payouts_outbox SET attempts = attempts + $2::int, last_error = coalesce($3, last_error),
              next_attempt_at = now() + CASE WHEN $2::int = 0 THEN interval '0' ELSE least(interval '5 minutes', interval '1 second' * 2 ^ least(attempts, 20)) END
        WHERE id IN (SELECT id FROM payouts_outbox WHERE id = $1 FOR UPDATE SKIP LOCKED)
        RETURNING id)
     SELECT pg_notify($4, '') FROM r`,
    [id, failure.attempted ? 1 : 0, text, OUTBOX_CHANNEL],
  );
}
