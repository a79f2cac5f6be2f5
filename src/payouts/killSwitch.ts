/** The kill switch for direct transfers. While paused, claims leave payouts `pending` and nothing is
 * sent; the offline ledger keeps every order's amount, so finance could settle offline instead. */
import { inTransaction, type Db } from '../db/pool';

export interface TransferSwitchState {
  paused: boolean;
  reason: string | null;
  changedBy: string | null;
  changedAt: string;
}

export async function readTransferSwitch(db: Db): Promise<TransferSwitchState> {
  const { rows } = await db.query<{ paused: boolean; reason: string | null; changed_by: string | null; changed_at: Date }>(
    'SELECT paused, reason, changed_by, changed_at FROM transfer_switch WHERE id = 1',
  );
  const row = rows[0]!;
  return { paused: row.paused, reason: row.reason, changedBy: row.changed_by, changedAt: row.changed_at.toISOString() };
}

/** Audited in review_actions in the same transaction; the row lock orders it against claims. */
export async function setTransfersPaused(db: Db, input: { paused: boolean; actor: string; reason: string }): Promise<TransferSwitchState> {
  await inTransaction(db, async (tx) => {
    await tx.query('UPDATE transfer_switch SET paused = $1, reason = $2, changed_by = $3, changed_at = now() WHERE id = 1',
      [input.paused, input.reason, input.actor]);
    await tx.query('INSERT INTO review_actions (payout_id, actor, action, reason) VALUES (NULL, $1, $2, $3)',
      [input.actor, input.paused ? 'pause_transfers' : 'resume_transfers', input.reason]);
  });
  return readTransferSwitch(db);
}
