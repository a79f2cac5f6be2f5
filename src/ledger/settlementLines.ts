/** Settlement lines in the ledger, written by the settlement run (issue 36, step 2): when a run
 * freezes a line, when the bank's answer is recorded (paid with its UTR, failed), and when finance
 * cancels the batch. The model's rule (model.ts): a line frozen in an open batch may still pay (in
 * flight), a paid line paid with its UTR, a failed or cancelled one paid nothing (its members are
 * owed again). A line pays, for each member, the line's own obligation, or for an order the order's
 * net if nothing pays it, else what reversals of the transfer that paid it made owed again.
 * Idempotent. */
import type { Tx } from '../db/pool';
import { logger } from '../logger';
import { oweOfflineLines } from './offlineLines';
import { oweOrders } from './orderObligations';
import { deleteDischarge } from './dischargeRows';

type Queryable = Pick<Tx, 'query'>;

const UNPAID = `NOT EXISTS (SELECT 1 FROM ledger_discharge_items i WHERE i.obligation_id = o.id AND i.active)`;

export async function recordSettlementLinesInLedger(tx: Queryable, lineIds: readonly (number | string)[]): Promise<void> {
  for (const lineId of lineIds) await recordLine(tx, String(lineId));
}

async function recordLine(tx: Queryable, lineId: string): Promise<void> {
  const { rows: [line] } = await tx.query<{ vendor_id: string; reference: string; amount_paise: string; status: string; utr: string | null }>(
    'SELECT vendor_id, reference, amount_paise, status, utr FROM settlement_lines WHERE id = $1', [lineId]);
  if (!line) return;
  const { rows: [current] } = await tx.query<{ id: string }>(
    `SELECT id::text FROM ledger_discharges WHERE kind = 'settlement_line' AND instrument = $1`, [line.reference]);
  if (line.status !== 'open' && line.status !== 'paid') {
    if (current) {
      await deleteDischarge(tx, current.id);
    }
    return;
  }
  const state = line.status === 'paid' ? 'paid' : 'in_flight';
  if (current) {
    await tx.query(
      `UPDATE ledger_discharges SET state = $2, provider_ref = $3 WHERE id = $1 AND (state, provider_ref) IS DISTINCT FROM ($2::text, $3::text)`,
      [current.id, state, line.utr]);
    return;
  }
  const { rows: members } = await tx.query<{ ledger_id: string; order_id: string | null }>(
    'SELECT m.ledger_id::text, l.order_id FROM settlement_line_members m JOIN offline_ledger l ON l.id = m.ledger_id WHERE m.line_id = $1 AND m.active', [lineId]);
  // Owed as the rails write it (a line frozen from rows older than the rails' writes finds it here).
  await oweOrders(tx, members.flatMap((m) => (m.order_id ? [m.order_id] : [])));
  await oweOfflineLines(tx, members.filter((m) => !m.order_id).map((m) => m.ledger_id));
  const { rows: pays } = await tx.query<{ id: string; amount_paise: string }>(
    `WITH members AS (
       SELECT m.ledger_id, l.order_id, b.batch_id FROM settlement_line_members m JOIN offline_ledger l ON l.id = m.ledger_id
         LEFT JOIN payout_batch_orders b ON b.order_id = l.order_id
        WHERE m.line_id = $1 AND m.active)
     SELECT o.id::text, o.amount_paise FROM members m JOIN ledger_obligations o ON o.source = 'line:' || m.ledger_id WHERE m.order_id IS NULL AND ${UNPAID}
     UNION
     SELECT o.id::text, o.amount_paise FROM members m JOIN ledger_obligations o ON o.source = 'order:' || m.order_id WHERE ${UNPAID}
     UNION
     SELECT o.id::text, o.amount_paise FROM members m
       JOIN ledger_obligations n ON n.source = 'order:' || m.order_id
       JOIN ledger_obligations o ON o.cause = 'reversal' AND o.payout_id IS NOT NULL AND (o.order_id = m.order_id OR o.batch_id = m.batch_id)
      WHERE EXISTS (SELECT 1 FROM ledger_discharge_items i WHERE i.obligation_id = n.id AND i.active) AND ${UNPAID}`,
    [lineId]);
  const sum = pays.reduce((t, p) => t + BigInt(p.amount_paise), 0n);
  if (pays.length === 0 || sum !== BigInt(line.amount_paise)) {
    // A line whose bank payment the ledger cannot account for must not go to the bank: its freeze (or
    // the answer recorded for it) does not commit, and says why.
    logger.error({ lineId, reference: line.reference, linePaise: line.amount_paise, owedPaise: sum.toString() }, 'settlement line refused: what it pays in the ledger does not sum to its amount');
    throw new Error(`ledger: settlement line ${line.reference} is ${line.amount_paise} paise, but what it pays in the ledger sums to ${sum}`);
  }
  await tx.query(
    `WITH paying AS (
       INSERT INTO ledger_discharges (vendor_id, kind, instrument, provider_ref, amount_paise, state)
       VALUES ($1, 'settlement_line', $2, $3, $4, $5) RETURNING id)
     INSERT INTO ledger_discharge_items (discharge_id, obligation_id, amount_paise)
     SELECT paying.id, o.id, o.amount_paise FROM paying, ledger_obligations o WHERE o.id = ANY($6::bigint[])`,
    [line.vendor_id, line.reference, line.utr, line.amount_paise, state, pays.map((p) => p.id)]);
}
