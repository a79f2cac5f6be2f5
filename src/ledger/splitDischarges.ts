/** An order's Route split in the ledger, written by the split rail (issue 36, step 2): when money in
 * writes the split (the capture) and whenever a check of the provider changes what the split row says
 * (moneyin/splitTransfers.ts `recordCheck`). The model's rule (model.ts): a split that has not failed
 * pays the order's net, in flight while `expected`, paid once `processed` (and still paid when
 * reversed later: the reversal is owed again on its own line); a failed split paid nothing, and the
 * net goes to a settlement run. Idempotent. */
import type { Tx } from '../db/pool';
import { deleteDischarge } from './dischargeRows';

type Queryable = Pick<Tx, 'query'>;

export async function recordSplitInLedger(tx: Queryable, orderId: string): Promise<void> {
  const { rows: [split] } = await tx.query<{ vendor_id: string; status: string; provider_transfer_id: string | null }>(
    `SELECT s.vendor_id, s.status, s.provider_transfer_id FROM split_transfers s JOIN orders o ON o.id = s.order_id AND o.status = 'paid' WHERE s.order_id = $1`, [orderId]);
  if (!split) return;
  const { rows: [current] } = await tx.query<{ id: string }>(
    `SELECT d.id::text FROM ledger_discharges d JOIN ledger_discharge_items i ON i.discharge_id = d.id JOIN ledger_obligations o ON o.id = i.obligation_id
      WHERE d.kind = 'split' AND o.source = $1 AND i.active`, [`order:${orderId}`]);
  if (split.status === 'failed') {
    if (current) {
      await deleteDischarge(tx, current.id);
    }
    return;
  }
  const instrument = split.provider_transfer_id ?? `split:${orderId}`;
  const state = split.status === 'expected' ? 'in_flight' : 'paid';
  if (current) {
    await tx.query(
      `UPDATE ledger_discharges SET instrument = $2, provider_ref = $3, state = $4
        WHERE id = $1 AND (instrument, provider_ref, state) IS DISTINCT FROM ($2::text, $3::text, $4::text)`,
      [current.id, instrument, split.provider_transfer_id, state]);
    return;
  }
  await tx.query(
    `WITH due AS (
       SELECT o.id, o.amount_paise FROM ledger_obligations o
        WHERE o.source = $1 AND NOT EXISTS (SELECT 1 FROM ledger_discharge_items i WHERE i.obligation_id = o.id AND i.active)),
     paying AS (
       INSERT INTO ledger_discharges (vendor_id, kind, instrument, provider_ref, amount_paise, state)
       SELECT $2::text, 'split', $3::text, $4::text, amount_paise, $5::text FROM due RETURNING id)
     INSERT INTO ledger_discharge_items (discharge_id, obligation_id, amount_paise)
     SELECT paying.id, due.id, due.amount_paise FROM paying, due`,
    [`order:${orderId}`, split.vendor_id, instrument, split.provider_transfer_id, state]);
}
