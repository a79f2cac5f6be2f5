/** What an ops cancel does to the clawbacks of the orders the payout paid (issue 36 item 4). A
 * clawback (route `refund_clawback`) is the vendor's share of a refund made outside the app, owed
 * back because the payout's transfer had left; a cancelled payout paid the vendor nothing, so nothing
 * is owed back. Each settlement line stays paid once, for the amount of its bank debit:
 * - not in a settlement line (never frozen, or its line failed or its batch was cancelled): taken
 *   back, kept in the ledger with who and why, out of the open ledger;
 * - in an open line: the bank may be paying that line as its file says, so the cancel is refused
 *   until finance record the bank's answer (paid or failed);
 * - in a paid line: the line is history and keeps its amount; the clawback is taken back and a new
 *   open line (`clawback_returned`) owes the vendor what that line netted off.
 * Called in the cancel's transaction, under the payout's row lock and the freeze lock, so no run
 * freezes a clawback between the check and the take-back. */
import { AppError } from '../appError';
import type { Tx } from '../db/pool';
import { formatRupees } from '../domain/money';
import { netTakenBackClawback, oweOfflineLines } from '../ledger/offlineLines';
import { FREEZE_LOCK } from './repository';

export interface ClawbackInOpenLine { ledgerId: number; refundId: string; orderId: string; clawbackPaise: number; reference: string; batchId: string }

/** The payout's key: its order, or for a batch's own payout the batch id (then `batchId` too). */
type PayoutKey = { orderId: string; batchId?: string | null | undefined };

interface ClawbackRow { id: string; outside_refund_id: string; clawback_order_id: string; amount_paise: string; line_status: string | null; reference: string | null; batch_id: string | null }

/** The payout's own order, or the orders its batch paid. */
async function standingClawbacks(tx: Tx, payout: PayoutKey): Promise<ClawbackRow[]> {
  await tx.query('SELECT pg_advisory_xact_lock($1)', [FREEZE_LOCK]);
  // The orders first, so the clawbacks are read by their index while the freeze lock is held.
  const orderIds = payout.batchId
    ? (await tx.query<{ order_id: string }>('SELECT order_id FROM payout_batch_orders WHERE batch_id = $1', [payout.batchId])).rows.map((r) => r.order_id)
    : [payout.orderId];
  const { rows } = await tx.query<ClawbackRow>(
    `SELECT l.id, l.outside_refund_id, l.clawback_order_id, l.amount_paise, sl.status AS line_status, sl.reference, sl.batch_id
       FROM offline_ledger l
       LEFT JOIN settlement_line_members m ON m.ledger_id = l.id AND m.active
       LEFT JOIN settlement_lines sl ON sl.id = m.line_id
      WHERE l.route = 'refund_clawback' AND l.taken_back_at IS NULL
        AND l.clawback_order_id = ANY($1::text[])
      ORDER BY l.id
      FOR UPDATE OF l`,
    [orderIds],
  );
  return rows;
}

/** The clawbacks a cancel must wait for: frozen in a settlement line the bank has not answered yet. */
export async function clawbacksInOpenLines(tx: Tx, payout: PayoutKey): Promise<ClawbackInOpenLine[]> {
  return (await standingClawbacks(tx, payout)).filter((c) => c.line_status === 'open').map((c) => ({
    ledgerId: Number(c.id), refundId: c.outside_refund_id, orderId: c.clawback_order_id, clawbackPaise: -Number(c.amount_paise), reference: c.reference!, batchId: c.batch_id!,
  }));
}

/** After the cancel's transition: takes back every clawback still standing (none is in an open
 * line: the caller checked in this transaction), returning a paid line's share as a new line. */
export async function takeBackClawbacks(tx: Tx, payout: PayoutKey, decision: { actor: string; reason: string }): Promise<{ takenBack: number; returnedPaise: number }> {
  const standing = await standingClawbacks(tx, payout);
  if (standing.some((c) => c.line_status === 'open')) throw new Error('a clawback is frozen in an open settlement line: check clawbacksInOpenLines before the cancel');
  let returnedPaise = 0;
  for (const c of standing) {
    const paidIn = c.line_status === 'paid' ? c.reference : null;
    await tx.query(
      'UPDATE offline_ledger SET taken_back_at = now(), taken_back_by = $2, taken_back_reason = $3 WHERE id = $1',
      [c.id, decision.actor, `payout cancelled by ops: ${decision.reason}${paidIn ? `; netted off paid settlement line ${paidIn}, returned as a new line` : ''}`],
    );
    // The ledger: taken back before any paid line netted it, an adjustment nets it to nothing.
    await netTakenBackClawback(tx, c.id);
    if (paidIn) {
      const { rows: line } = await tx.query<{ id: string }>(
        `INSERT INTO offline_ledger (order_id, clawback_order_id, returns_clawback_id, employer_id, vendor_id, amount_paise, route)
         SELECT NULL, clawback_order_id, id, employer_id, vendor_id, -amount_paise, 'clawback_returned' FROM offline_ledger WHERE id = $1 RETURNING id`,
        [c.id],
      );
      await oweOfflineLines(tx, line.map((l) => l.id));
      returnedPaise -= Number(c.amount_paise);
    }
  }
  return { takenBack: standing.length, returnedPaise };
}

/** The refusal ops see, naming the line and what finance must record first. */
export function clawbackInOpenLineRefusal(orderId: string, frozen: readonly ClawbackInOpenLine[]): AppError {
  const first = frozen[0]!;
  return new AppError(409, 'clawback_in_open_settlement_line',
    `the vendor's clawback of ${formatRupees(first.clawbackPaise)} (refund ${first.refundId} made outside the app) is netted into settlement line ${first.reference} of batch ${first.batchId}, which the bank may be paying as its file says: `
    + 'cancelling now would leave the vendor charged for money it never kept. Ask finance to record that line paid (UTR) or failed (the bank\'s reason), then cancel again: '
    + 'a failed line\'s clawback is taken back; a paid line stays as the bank paid it, and the clawback is owed to the vendor in a new line the next settlement run pays',
    { orderId, lines: frozen.map((f) => ({ reference: f.reference, batchId: f.batchId, refundId: f.refundId, orderId: f.orderId, clawbackPaise: f.clawbackPaise })) });
}
