/** Writes every rail shares on a discharge row. */
import type { Tx } from '../db/pool';

/** An instrument that paid nothing after all (a transfer rejected or failed, a split failed, a
 * settlement line failed or cancelled): gone with its items, so what it would have paid is open. */
export async function deleteDischarge(tx: Pick<Tx, 'query'>, dischargeId: string): Promise<void> {
  await tx.query('DELETE FROM ledger_discharge_items WHERE discharge_id = $1', [dischargeId]);
  await tx.query('DELETE FROM ledger_discharges WHERE id = $1', [dischargeId]);
}
