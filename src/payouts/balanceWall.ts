/** The balance wall (issue 22). When the platform balance runs dry, Razorpay rejects every direct
 * transfer with an insufficient-balance code. That is the platform's condition, not a payout's: the
 * first such rejection pauses direct transfers with a reason of its own (beside ops' kill switch, on
 * the same transfer_switch row), gives the payout its attempt back, and alerts finance with what the
 * backlog needs. Razorpay has no balance API for a Route merchant, so the provider is asked with one
 * probe transfer at a time, at most every PAYOUT_BALANCE_PROBE_MS (and at once on ops' resume): an
 * accepted probe takes the wall down and every waiting payout goes on. */
import type { Db, Tx } from '../db/pool';

type Queryable = Db | Tx;

/** Razorpay's answers that mean the merchant's balance cannot carry the transfer now. */
const BALANCE_CODES: ReadonlySet<string> = new Set([
  'BAD_REQUEST_TRANSFER_INSUFFICIENT_BALANCE',
  'BAD_REQUEST_NEGATIVE_BALANCE_BREACHED',
]);

export function isBalanceShortage(code: string): boolean {
  return BALANCE_CODES.has(code);
}

/** The code an attempt held back by the wall records (not sent; no attempt spent). */
export const BALANCE_SHORT = 'BALANCE_SHORT';

export interface BalanceWall {
  since: string;
  code: string;
  /** The earliest the next probe may be claimed, and the payout holding the probe now (if any). */
  nextProbeAt: string | null;
  probePayoutId: string | null;
  /** What the waiting direct transfers add up to: the balance finance must put in. */
  neededPaise: number;
  waitingPayouts: number;
}

/** What the payouts waiting on a direct transfer need, wall or not (pending, failed, processing). */
export async function directTransferBacklog(q: Queryable): Promise<{ neededPaise: number; payouts: number }> {
  const { rows } = await q.query<{ needed: string | null; n: number }>(
    `SELECT sum(amount_paise)::text AS needed, count(*)::int AS n FROM payouts WHERE status IN ('pending', 'failed', 'processing')`);
  return { neededPaise: Number(rows[0]?.needed ?? 0), payouts: rows[0]?.n ?? 0 };
}

export async function readBalanceWall(q: Queryable): Promise<BalanceWall | null> {
  const { rows } = await q.query<{ since: Date | null; code: string | null; probe_at: Date | null; probe_payout: string | null }>(
    'SELECT balance_short_since AS since, balance_short_code AS code, balance_probe_at AS probe_at, balance_probe_payout AS probe_payout FROM transfer_switch WHERE id = 1');
  const row = rows[0];
  if (!row?.since) return null;
  const backlog = await directTransferBacklog(q);
  return {
    since: row.since.toISOString(), code: row.code ?? 'BAD_REQUEST_TRANSFER_INSUFFICIENT_BALANCE',
    nextProbeAt: row.probe_at ? row.probe_at.toISOString() : null, probePayoutId: row.probe_payout,
    neededPaise: backlog.neededPaise, waitingPayouts: backlog.payouts,
  };
}

/** Puts the wall up (or keeps it up) after an insufficient-balance rejection: the next probe waits
 * `probeMs`. Returns true when this rejection put it up. */
export async function raiseBalanceWall(tx: Tx, code: string, probeMs: number): Promise<boolean> {
  const before = await tx.query<{ up: boolean }>('SELECT balance_short_since IS NOT NULL AS up FROM transfer_switch WHERE id = 1 FOR UPDATE');
  await tx.query(
    `UPDATE transfer_switch SET balance_short_since = COALESCE(balance_short_since, now()), balance_short_code = $1,
            balance_probe_at = now() + make_interval(secs => $2::double precision / 1000), balance_probe_payout = NULL
     WHERE id = 1`, [code, probeMs]);
  return before.rows[0]?.up === false;
}

/** A transfer accepted for a request sent while the wall was up (a probe): the balance is back.
 * Returns true when this took the wall down (the caller wakes the waiting payouts after commit). */
export async function lowerBalanceWallOnAcceptance(tx: Tx, payoutId: string): Promise<boolean> {
  const { rowCount } = await tx.query(
    `UPDATE transfer_switch t SET balance_short_since = NULL, balance_short_code = NULL, balance_probe_at = NULL, balance_probe_payout = NULL
     FROM payouts p
     WHERE t.id = 1 AND t.balance_short_since IS NOT NULL AND p.id = $1
       AND (t.balance_probe_payout = p.id OR p.request_sent_at >= t.balance_short_since)`, [payoutId]);
  return rowCount === 1;
}

/** At claim time: may this payout send? `clear` (no wall), `probe` (it holds the probe, taken now if
 * one was due: the UPDATE runs before any FOR SHARE read of the row, so two claims never deadlock,
 * and the one that waits re-reads the row and finds the probe gone), or `wait`. */
export async function balanceGate(tx: Tx, payoutId: string, probeMs: number): Promise<'clear' | 'probe' | 'wait'> {
  const taken = await tx.query(
    `UPDATE transfer_switch SET balance_probe_at = now() + make_interval(secs => $2::double precision / 1000), balance_probe_payout = $1
     WHERE id = 1 AND balance_short_since IS NOT NULL AND NOT paused
       AND (balance_probe_at IS NULL OR balance_probe_at <= now() OR balance_probe_payout = $1)`, [payoutId, probeMs]);
  if (taken.rowCount === 1) return 'probe';
  const { rows } = await tx.query<{ up: boolean }>('SELECT balance_short_since IS NOT NULL AS up FROM transfer_switch WHERE id = 1');
  return rows[0]?.up ? 'wait' : 'clear';
}

/** The send gate's last look, under the claim's transaction: the code to hold this payout back with
 * (ops paused transfers, or the wall is up and this payout is not its probe), or null to send. */
export async function heldBackAtSend(tx: Tx, payoutId: string): Promise<'TRANSFERS_PAUSED' | typeof BALANCE_SHORT | null> {
  const { rows } = await tx.query<{ paused: boolean; balance_short_since: Date | null; balance_probe_payout: string | null }>(
    'SELECT paused, balance_short_since, balance_probe_payout FROM transfer_switch WHERE id = 1 FOR SHARE');
  const sw = rows[0];
  if (!sw) return null;
  if (sw.paused) return 'TRANSFERS_PAUSED';
  return sw.balance_short_since !== null && sw.balance_probe_payout !== payoutId ? BALANCE_SHORT : null;
}

/** Ops' resume asks at once: the next claim may probe now. */
export async function probeBalanceNow(tx: Tx): Promise<void> {
  await tx.query('UPDATE transfer_switch SET balance_probe_at = now(), balance_probe_payout = NULL WHERE id = 1 AND balance_short_since IS NOT NULL');
}

/** Whether the request just answered was its key's first (false: a re-send under a kept key, whose
 * rejection may be the provider replaying what it stored for the first request). */
export async function wasKeysFirstSend(tx: Tx, payoutId: string): Promise<boolean> {
  const { rows } = await tx.query<{ first: boolean }>(
    'SELECT key_first_sent_at IS NULL OR request_sent_at IS NULL OR key_first_sent_at >= request_sent_at AS first FROM payouts WHERE id = $1', [payoutId]);
  return rows[0]?.first ?? true;
}
