/** A paid order's obligations, written by the rails (issue 36, step 2): in the transaction that marks
 * the order paid, and again wherever its rail changes (it joins or leaves a batch, ops pay it
 * offline, its route changes at fire time, its split fails). The same rules as the model's builder
 * (model.ts), in SQL, so the two agree (railAgreement.ts):
 *  - its net by the offline-ledger line every paid order writes (`order:<id>`), on the rail that pays
 *    it now: employer direct, a split that has not failed, a settlement run (paid offline or rerouted),
 *    its batch's transfer, its own transfer, or else a settlement run;
 *  - a cash order's customer share kept at the counter (`cash:<id>`), paid there and then;
 *  - an employer-direct order's net, paid by the employer there and then.
 * Idempotent: a second write of the same order changes at most the rail. */
import type { Tx } from '../db/pool';

type Queryable = Pick<Tx, 'query'>;

export async function oweOrders(tx: Queryable, orderIds: readonly string[]): Promise<void> {
  if (orderIds.length === 0) return;
  const { rows: written } = await tx.query<{ source: string; rail: string }>(
    `WITH line AS (
       SELECT l.order_id, l.vendor_id, l.employer_id, l.amount_paise, l.route, o.customer_share_paise,
              CASE WHEN EXISTS (SELECT 1 FROM vendor_obligations v WHERE v.order_id = l.order_id) THEN 'employer_direct'
                   WHEN EXISTS (SELECT 1 FROM split_transfers s WHERE s.order_id = l.order_id AND s.status <> 'failed') THEN 'split'
                   WHEN p.status IN ('offline', 'rerouted') THEN 'settlement_run'
                   WHEN p.id IS NOT NULL AND EXISTS (SELECT 1 FROM payout_batch_orders m WHERE m.order_id = l.order_id) THEN 'batch_transfer'
                   WHEN p.id IS NOT NULL THEN 'transfer'
                   ELSE 'settlement_run' END AS rail
         FROM offline_ledger l
         JOIN orders o ON o.id = l.order_id AND o.status = 'paid'
         LEFT JOIN payouts p ON p.order_id = l.order_id
        WHERE l.order_id = ANY($1::text[]))
     INSERT INTO ledger_obligations (source, vendor_id, employer_id, order_id, cause, amount_paise, rail)
     SELECT 'order:' || order_id, vendor_id, employer_id, order_id, 'order_net', amount_paise, rail FROM line WHERE amount_paise <> 0
     UNION ALL
     SELECT 'cash:' || order_id, vendor_id, employer_id, order_id, 'cash_kept', customer_share_paise, 'cash_kept' FROM line WHERE route = 'cash' AND customer_share_paise > 0
     ON CONFLICT (source) DO UPDATE SET rail = EXCLUDED.rail WHERE ledger_obligations.rail <> EXCLUDED.rail
     RETURNING source, rail`,
    [orderIds],
  );
  // Paid at once, outside our instruments: at the counter, and by the employer (only when written
  // or moved to that rail just now: an order's webhook pays for one statement, not three).
  const at = (rail: string) => written.filter((w) => w.rail === rail).map((w) => w.source);
  if (at('cash_kept').length > 0) await payAtOnce(tx, 'cash_kept', at('cash_kept'));
  if (at('employer_direct').length > 0) await payAtOnce(tx, 'employer_direct', at('employer_direct'));
}

/** One paid discharge per obligation, named by its order, unless one is already written. */
async function payAtOnce(tx: Queryable, kind: 'cash_kept' | 'employer_direct', sources: string[]): Promise<void> {
  await tx.query(
    `WITH due AS (
       SELECT o.id, o.vendor_id, o.order_id, o.amount_paise FROM ledger_obligations o
        WHERE o.source = ANY($1::text[])
          AND NOT EXISTS (SELECT 1 FROM ledger_discharge_items i WHERE i.obligation_id = o.id AND i.active)),
     paid AS (
       INSERT INTO ledger_discharges (vendor_id, kind, instrument, amount_paise, state)
       SELECT vendor_id, $2, order_id, amount_paise, 'paid' FROM due
       ON CONFLICT (kind, instrument) DO NOTHING RETURNING id, instrument)
     INSERT INTO ledger_discharge_items (discharge_id, obligation_id, amount_paise)
     SELECT paid.id, due.id, due.amount_paise FROM paid JOIN due ON due.order_id = paid.instrument`,
    [sources, kind],
  );
}

/** The order is no longer paid (held on its capture, in the transaction that marked it paid): it
 * owes nothing until ops decide. Nothing of ours has paid it yet. */
export async function forgetOrderObligations(tx: Queryable, orderId: string): Promise<void> {
  await tx.query(
    `WITH gone AS (
       DELETE FROM ledger_discharge_items i USING ledger_obligations o
        WHERE o.id = i.obligation_id AND o.order_id = $1 AND o.cause IN ('order_net', 'cash_kept') RETURNING i.discharge_id)
     DELETE FROM ledger_discharges d USING gone WHERE d.id = gone.discharge_id AND d.kind IN ('cash_kept', 'employer_direct')`,
    [orderId],
  );
  await tx.query(`DELETE FROM ledger_obligations WHERE order_id = $1 AND cause IN ('order_net', 'cash_kept')`, [orderId]);
}
