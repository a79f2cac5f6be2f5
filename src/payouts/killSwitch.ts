/** The kill switch for direct transfers. While paused, claims leave payouts `pending` and no new
 * request is sent; the offline ledger keeps every order's amount, so finance could settle offline
 * instead. A pause cannot call back a request already past the gate — the money-moving activity's last
 * check of the switch, which records `request_sent_at` in the same transaction — so the pause answers
 * with those requests: they may still land. */
import { inTransaction, type Db, type Tx } from '../db/pool';
import { probeBalanceNow, readBalanceWall, type BalanceWall } from './balanceWall';

export interface TransferSwitchState {
  paused: boolean;
  reason: string | null;
  changedBy: string | null;
  changedAt: string;
  /** The balance wall (balanceWall.ts): up while the platform balance is short, with what it needs. */
  balanceWall: BalanceWall | null;
}

/** A payout whose request passed the gate and has no definitive answer yet: `processing` with
 * `request_sent_at` set (a new claim clears it; an answer moves the status on). `outcome` is null
 * while no answer is recorded, `unknown` when the answer was lost (timeout, 5xx) and the resolver
 * has yet to find out: either way the provider may still act on it. */
export interface InFlightRequest {
  orderId: string;
  payoutId: string;
  amountPaise: number;
  linkedAccountId: string;
  claimedAt: string | null;
  requestSentAt: string;
  outcome: 'unknown' | null;
}

/** `count` is exact; `payouts` the oldest requests first, at most IN_FLIGHT_LISTED. */
export interface InFlightRequests {
  count: number;
  payouts: InFlightRequest[];
}

export const IN_FLIGHT_LISTED = 100;

export async function readTransferSwitch(db: Db): Promise<TransferSwitchState> {
  const { rows } = await db.query<{ paused: boolean; reason: string | null; changed_by: string | null; changed_at: Date }>(
    'SELECT paused, reason, changed_by, changed_at FROM transfer_switch WHERE id = 1',
  );
  const row = rows[0]!;
  return { paused: row.paused, reason: row.reason, changedBy: row.changed_by, changedAt: row.changed_at.toISOString(), balanceWall: await readBalanceWall(db) };
}

/** The requests past the gate now (see InFlightRequest). */
export async function requestsPastTheGate(q: Db | Tx, limit = IN_FLIGHT_LISTED): Promise<InFlightRequests> {
  const { rows } = await q.query<{
    order_id: string; id: string; amount_paise: number; linked_account_id: string; claimed_at: Date | null; request_sent_at: Date;
    answered_unknown: boolean; total: number;
  }>(
    `SELECT p.subject_id AS order_id, p.id, p.amount_paise, p.linked_account_id, p.claimed_at, p.request_sent_at,
            EXISTS (SELECT 1 FROM payout_attempts a WHERE a.payout_id = p.id AND a.attempt_no = p.attempts AND a.outcome = 'unknown') AS answered_unknown,
            count(*) OVER () AS total
     FROM payouts p
     WHERE p.status = 'processing' AND p.request_sent_at IS NOT NULL
     ORDER BY p.request_sent_at, p.id
     LIMIT $1`, [limit]);
  return {
    count: rows[0]?.total ?? 0,
    payouts: rows.map((r) => ({
      orderId: r.order_id, payoutId: r.id, amountPaise: r.amount_paise, linkedAccountId: r.linked_account_id,
      claimedAt: r.claimed_at ? r.claimed_at.toISOString() : null, requestSentAt: r.request_sent_at.toISOString(),
      outcome: r.answered_unknown ? 'unknown' : null,
    })),
  };
}

/** Audited in review_actions in the same transaction; the row lock orders it against claims and sends. */
async function switchTransfers(tx: Tx, input: { paused: boolean; actor: string; reason: string }): Promise<void> {
  await tx.query('UPDATE transfer_switch SET paused = $1, reason = $2, changed_by = $3, changed_at = now() WHERE id = 1',
    [input.paused, input.reason, input.actor]);
  await tx.query('INSERT INTO review_actions (payout_id, actor, action, reason) VALUES (NULL, $1, $2, $3)',
    [input.actor, input.paused ? 'pause_transfers' : 'resume_transfers', input.reason]);
  // A resume also asks the provider at once whether the balance is back (the next claim probes).
  if (!input.paused) await probeBalanceNow(tx);
}

export async function setTransfersPaused(db: Db, input: { paused: boolean; actor: string; reason: string }): Promise<TransferSwitchState> {
  await inTransaction(db, (tx) => switchTransfers(tx, input));
  return readTransferSwitch(db);
}

/** Pauses, and says which requests were past the gate at that moment. The snapshot is exact: the
 * UPDATE of the switch row waits for every send gate holding it FOR SHARE to commit (their
 * request_sent_at is then visible to the next statement), and every gate after it waits for this
 * commit and finds the switch paused. */
export async function pauseTransfers(db: Db, input: { actor: string; reason: string }): Promise<TransferSwitchState & { inFlight: InFlightRequests }> {
  const inFlight = await inTransaction(db, async (tx) => {
    await switchTransfers(tx, { ...input, paused: true });
    return requestsPastTheGate(tx);
  });
  return { ...(await readTransferSwitch(db)), inFlight };
}
