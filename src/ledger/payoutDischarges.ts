/** A payout's transfers in the ledger, written by the payout rail (issue 36, step 2): after every
 * change of a payout's status (payouts/repository.ts `transition`, in its transaction), the payout's
 * discharge is made to say what its status says. The same rules as the model's builder (model.ts):
 *  - `processing` or `accepted`: one in-flight discharge (named by the key the request goes out
 *    under, then by the transfer id once the provider names it) paying what the payout owes: the
 *    order's net (a batch's: its members' nets), or after a reversal what the reversal made owed
 *    again. Written with the claim, so it is in the ledger before any request leaves, and the partial
 *    unique index refuses it if another instrument already pays any of it;
 *  - `settled`: that discharge paid; marked paid by ops with a bank reference: an external transfer;
 *  - a transfer reversed: its discharge stays paid (the money reached the vendor), and
 *    `oweTransferReversals` owes exactly what the reversal took;
 *  - any other status: no transfer of ours pays it (a discharge in flight is deleted: it paid nothing);
 *  - cancelled by ops: an adjustment nets what is still open on it, with their reason and name. */
import type { Tx } from '../db/pool';
import { oweOrders } from './orderObligations';
import { deleteDischarge } from './dischargeRows';
import { PROVIDER_TRANSFER_KINDS } from './model';

type Queryable = Pick<Tx, 'query'>;

interface PayoutFacts {
  id: string; order_id: string | null; batch_id: string | null; vendor_id: string; status: string; idempotency_key: string;
  provider_transfer_id: string | null; external_reference: string | null; order_paid: boolean; member: boolean;
  reversed: string[]; failed: string[]; amount_paise: string;
}
interface DischargeRow { id: string; kind: string; instrument: string; state: string }

const LIVE = new Set(['processing', 'accepted', 'settled']);
const TRANSFER_KINDS = [...PROVIDER_TRANSFER_KINDS, 'external_transfer'];

/** What the payout pays ($1 payout, $2 vendor, $3 order, $4 batch): its order's net, or its batch's
 * members' nets, and what reversals of its transfers made owed again. One arm per way in, each by
 * its index (an OR across them would scan every obligation of the vendor). */
const ON_PAYOUT = `
  SELECT o.id, o.source, o.amount_paise, o.employer_id, o.rail, o.cause, o.order_id FROM ledger_obligations o
   WHERE o.order_id = $3 AND o.cause = 'order_net' AND o.vendor_id = $2
  UNION ALL
  SELECT o.id, o.source, o.amount_paise, o.employer_id, o.rail, o.cause, o.order_id FROM payout_batch_orders m
    JOIN ledger_obligations o ON o.order_id = m.order_id AND o.cause = 'order_net' AND o.vendor_id = $2
   WHERE m.batch_id = $4
  UNION ALL
  SELECT o.id, o.source, o.amount_paise, o.employer_id, o.rail, o.cause, o.order_id FROM ledger_obligations o
   WHERE o.payout_id = $1 AND o.cause = 'reversal'`;

/** What the payout still owes: the obligations it pays that no instrument pays yet. */
const OPEN_ON_PAYOUT = `
  SELECT o.* FROM (${ON_PAYOUT}) o
   WHERE NOT EXISTS (SELECT 1 FROM ledger_discharge_items i WHERE i.obligation_id = o.id AND i.active)`;

async function readFacts(tx: Queryable, payoutId: string): Promise<PayoutFacts | null> {
  const { rows } = await tx.query<PayoutFacts>(
    `SELECT p.id::text, p.order_id, p.batch_id, p.vendor_id, p.status, p.idempotency_key, p.provider_transfer_id, p.external_reference, p.amount_paise::text,
            COALESCE(o.status = 'paid', false) AS order_paid,
            EXISTS (SELECT 1 FROM payout_batch_orders m WHERE m.order_id = p.order_id) AS member,
            ARRAY(SELECT DISTINCT r.transfer_id FROM transfer_reversals r WHERE r.payout_id = p.id) AS reversed,
            ARRAY(SELECT DISTINCT a.provider_transfer_id FROM payout_attempts a
                   WHERE a.payout_id = p.id AND a.outcome = 'failed_after_accept' AND a.provider_transfer_id IS NOT NULL) AS failed
       FROM payouts p LEFT JOIN orders o ON o.id = p.order_id WHERE p.id = $1`,
    [payoutId]);
  return rows[0] ?? null;
}

/** The common step of a transfer the ledger already has in flight: the provider named it
 * (`accepted`) or it settled, and no reversal or failure of the payout's transfers is to be weighed.
 * One statement moves its discharge, as the rules below would; false when they must decide. */
async function followTransfer(tx: Queryable, payoutId: string): Promise<boolean> {
  const { rowCount } = await tx.query(
    `UPDATE ledger_discharges d SET instrument = p.provider_transfer_id, provider_ref = p.provider_transfer_id,
            state = CASE WHEN p.status = 'settled' THEN 'paid' ELSE 'in_flight' END
       FROM payouts p
      WHERE p.id = $1 AND p.status IN ('accepted', 'settled') AND p.provider_transfer_id IS NOT NULL
        AND d.id = (SELECT max(x.id) FROM ledger_discharges x WHERE x.payout_id = p.id AND x.kind = ANY($2::text[]) AND x.state <> 'void')
        AND d.kind = CASE WHEN p.batch_id IS NULL THEN 'order_transfer' ELSE 'batch_transfer' END
        AND d.state = 'in_flight' AND d.instrument IN (p.provider_transfer_id, 'key:' || p.idempotency_key)
        AND NOT EXISTS (SELECT 1 FROM transfer_reversals r WHERE r.payout_id = p.id)
        AND NOT EXISTS (SELECT 1 FROM payout_attempts a WHERE a.payout_id = p.id AND a.outcome = 'failed_after_accept')`,
    [payoutId, TRANSFER_KINDS]);
  return rowCount === 1;
}

const namesDischarge = async (tx: Queryable, transferId: string): Promise<boolean> =>
  ((await tx.query(`SELECT 1 FROM ledger_discharges WHERE kind = ANY($2::text[]) AND instrument = $1`, [transferId, TRANSFER_KINDS])).rowCount ?? 0) > 0;

/** Makes the payout's discharge say what its status says. Idempotent. `to`: the status the caller
 * just moved it to, when known (the common accepted and settled steps then take one statement). */
export async function recordPayoutInLedger(tx: Queryable, payoutId: string, to?: string): Promise<void> {
  if ((to === 'accepted' || to === 'settled') && await followTransfer(tx, payoutId)) return;
  const p = await readFacts(tx, payoutId);
  if (!p || (p.order_id && !p.order_paid)) return; // an order not paid (held on its capture) owes nothing yet
  await keepRails(tx, p);
  const named = p.provider_transfer_id && !p.failed.includes(p.provider_transfer_id) ? p.provider_transfer_id : null;
  // A batch member's own row sends nothing: its batch's payout carries the transfer that pays it.
  if (p.member && !named && !p.external_reference) return;

  // Ordered by the column, not by the text the select list makes of it ("999" sorts after "1000").
  const { rows: latest } = await tx.query<DischargeRow>(
    `SELECT d.id::text AS id, d.kind, d.instrument, d.state FROM ledger_discharges d
      WHERE d.payout_id = $1 AND d.kind = ANY($2::text[]) AND d.state <> 'void' ORDER BY d.id DESC LIMIT 1`, [p.id, TRANSFER_KINDS]);
  let current: DischargeRow | null = latest[0] ?? null;
  // The in-flight discharge is the reversed transfer's when it names it, or (the payout no longer
  // live) when no discharge names that transfer yet: once one does, an in-flight discharge is a
  // retry's, sent after the reversal, and it paid nothing.
  const ofReversed = current !== null && named !== null && p.reversed.includes(named) && current.state === 'in_flight'
    && (current.instrument === named || (!LIVE.has(p.status) && !(await namesDischarge(tx, named))));
  if (current && named && ofReversed) {
    // Its transfer was reversed: it paid (the vendor had the money), and stays paid.
    await tx.query(`UPDATE ledger_discharges SET instrument = $2, provider_ref = $2, state = 'paid' WHERE id = $1`, [current.id, named]);
    current = null;
  } else if (current && p.reversed.includes(current.instrument)) {
    current = null; // a reversed transfer's discharge, done with
  }

  const kind = p.batch_id ? 'batch_transfer' : 'order_transfer';
  const live = named && !p.reversed.includes(named) ? named : null;
  const desired = !LIVE.has(p.status) ? null
    : p.status === 'settled' && !live && p.external_reference
      ? { kind: 'external_transfer', instrument: `payout:${p.id}:${p.idempotency_key}`, ref: p.external_reference, state: 'paid' }
      : { kind, instrument: live ?? `key:${p.idempotency_key}`, ref: live, state: p.status === 'settled' ? 'paid' : 'in_flight' };

  if (current && (!desired || desired.kind !== current.kind)) {
    // Not paying after all (rejected, failed, given back, or paid another way): it paid nothing.
    await deleteDischarge(tx, current.id);
    current = null;
  }
  if (current && desired) {
    await tx.query(
      `UPDATE ledger_discharges SET instrument = $2, provider_ref = $3, state = $4
        WHERE id = $1 AND (instrument, provider_ref, state) IS DISTINCT FROM ($2::text, $3::text, $4::text)`,
      [current.id, desired.instrument, desired.ref, desired.state]);
  } else if (desired) {
    const { rows: [paying] } = await tx.query<{ amount_paise: string }>(
      `WITH due AS (${OPEN_ON_PAYOUT}),
       paying AS (
         INSERT INTO ledger_discharges (vendor_id, kind, instrument, provider_ref, amount_paise, state, payout_id)
         SELECT $2::text, $5::text, $6::text, $7::text, sum(amount_paise), $8::text, $1::uuid FROM due HAVING count(*) > 0 RETURNING id, amount_paise),
       items AS (
         INSERT INTO ledger_discharge_items (discharge_id, obligation_id, amount_paise)
         SELECT paying.id, due.id, due.amount_paise FROM paying, due)
       SELECT amount_paise::text FROM paying`,
      [p.id, p.vendor_id, p.order_id, p.batch_id, desired.kind, desired.instrument, desired.ref, desired.state]);
    // The claim's discharge must pay exactly what its transfer carries: an instrument that paid part
    // of it since the claim's check (another transaction) leaves less here, and the claim must not
    // commit; its retry meets the claim's check, which then names that instrument.
    if (p.status === 'processing' && paying?.amount_paise !== p.amount_paise) {
      throw new Error(`ledger: the claim of payout ${p.id} pays ${paying?.amount_paise ?? 'nothing'} paise, its transfer carries ${p.amount_paise}`);
    }
  }
  if (p.status === 'cancelled' && !p.member) await netCancelled(tx, p);
}

/** Statuses a payout passes through on every transfer (after its claim): none changes the rail of
 * what it owes, so they skip that write (the webhook path shares these cores). */
const RAIL_KEEPING = new Set(['accepted', 'settled', 'failed']);

/** Statuses in which what the payout owes is owed by a settlement run: ops chose to pay it offline,
 * or at fire time the vendor had no linked account or the pair left platform transfers (rerouted). */
const OWED_OFFLINE = new Set(['offline', 'rerouted']);

/** The rail of what the payout owes follows its status: its order's (or members') net, and what
 * reversals of its transfers made owed again. The claim also makes sure the net is owed. */
async function keepRails(tx: Queryable, p: PayoutFacts): Promise<void> {
  if (RAIL_KEEPING.has(p.status)) return;
  // A batch's members' own rows take the batch's final status (offline or rerouted: owed by a
  // settlement run); the claim makes sure each member's net is owed before the transfer pays it.
  if (p.order_id || OWED_OFFLINE.has(p.status) || p.status === 'processing') await owePaid(tx, { orderId: p.order_id, batchId: p.batch_id });
  if (OWED_OFFLINE.has(p.status)) await tx.query(`UPDATE ledger_obligations SET rail = $2 WHERE payout_id = $1 AND cause = 'reversal' AND rail <> $2`, [p.id, reversalRail(p)]);
}

/** Owes, as the rails would, the nets the payout pays: its order's, or its batch's members'. */
async function owePaid(tx: Queryable, payout: { orderId: string | null; batchId: string | null }): Promise<void> {
  if (payout.orderId) await oweOrders(tx, [payout.orderId]);
  else if (payout.batchId) await oweOrders(tx, (await tx.query<{ order_id: string }>('SELECT order_id FROM payout_batch_orders WHERE batch_id = $1', [payout.batchId])).rows.map((r) => r.order_id));
}

const reversalRail = (p: Pick<PayoutFacts, 'status' | 'batch_id'>): string => (OWED_OFFLINE.has(p.status) ? 'settlement_run' : p.batch_id ? 'batch_transfer' : 'transfer');

/** Ops cancelled the payout: what is still open on it is not owed, by their adjustment (once their
 * decision is recorded: the adjustment names them and their reason). */
async function netCancelled(tx: Queryable, p: PayoutFacts): Promise<void> {
  const source = `cancel:${p.id}`;
  const { rows: decided } = await tx.query<{ actor: string; reason: string }>(
    `SELECT actor, reason FROM review_actions WHERE payout_id = $1 AND action = 'cancel'
        AND NOT EXISTS (SELECT 1 FROM ledger_obligations WHERE source = $2) ORDER BY id DESC LIMIT 1`, [p.id, source]);
  const by = decided[0];
  if (!by) return;
  const { rows: open } = await tx.query<{ id: string; amount_paise: string; employer_id: string | null; rail: string }>(
    `${OPEN_ON_PAYOUT} ORDER BY (o.cause = 'order_net') DESC, o.order_id, o.id`, [p.id, p.vendor_id, p.order_id, p.batch_id]);
  if (open.length === 0) return;
  const netted = open.reduce((t, o) => t + BigInt(o.amount_paise), 0n);
  await tx.query(
    `WITH adjustment AS (
       INSERT INTO ledger_obligations (source, vendor_id, employer_id, order_id, batch_id, cause, amount_paise, rail, reason, actor, payout_id)
       VALUES ($1, $2, $3, $4, $5, 'adjustment', $6, $7, $8, $9, $10) RETURNING id, amount_paise),
     paying AS (
       INSERT INTO ledger_discharges (vendor_id, kind, instrument, amount_paise, state, payout_id)
       VALUES ($2, 'adjustment', $1, 0, 'paid', $10) RETURNING id)
     INSERT INTO ledger_discharge_items (discharge_id, obligation_id, amount_paise)
     SELECT paying.id, o.id, o.amount_paise FROM paying, ledger_obligations o WHERE o.id = ANY($11::bigint[])
     UNION ALL SELECT paying.id, adjustment.id, adjustment.amount_paise FROM paying, adjustment`,
    [source, p.vendor_id, open[0]!.employer_id, p.order_id, p.batch_id, (-netted).toString(), open[0]!.rail, by.reason, by.actor, p.id, open.map((o) => o.id)]);
}

/** What the reversals of a payout's transfer made owed again (the model's rule, oweReversals): for a
 * batch's transfer reversed whole, each member's net again; otherwise each reversal's amount, on the
 * order or the batch. Written when the reversals are recorded; one that a later reversal of the same
 * transfer turns into the whole (and nothing has paid yet) gives way to the members' nets. */
export async function oweTransferReversals(tx: Queryable, payoutId: string, transferId: string): Promise<void> {
  const p = await readFacts(tx, payoutId);
  if (!p) return;
  const { rows: reversals } = await tx.query<{ id: string; owed_paise: string; transfer_amount_paise: string }>(
    `SELECT id, owed_paise, transfer_amount_paise FROM transfer_reversals
      WHERE payout_id = $1 AND transfer_id = $2 AND owed_paise > 0 ORDER BY recorded_at, id`, [payoutId, transferId]);
  const owedInAll = reversals.reduce((t, r) => t + BigInt(r.owed_paise), 0n);
  const { rows: members } = p.batch_id
    ? await tx.query<{ order_id: string; amount_paise: string }>('SELECT order_id, amount_paise FROM payout_batch_orders WHERE batch_id = $1 ORDER BY order_id', [p.batch_id])
    : { rows: [] as { order_id: string; amount_paise: string }[] };
  const whole = p.batch_id && members.length > 0 && reversals.length > 0 && owedInAll === BigInt(reversals[0]!.transfer_amount_paise);
  const owed = whole
    ? members.map((m) => ({ source: `reversal:${transferId}:${m.order_id}`, orderId: m.order_id, batchId: null, amount: m.amount_paise }))
    : reversals.map((r) => ({ source: `reversal:${r.id}`, orderId: p.order_id, batchId: p.batch_id, amount: r.owed_paise }));
  await tx.query(
    `DELETE FROM ledger_obligations o WHERE o.payout_id = $1 AND o.cause = 'reversal' AND NOT (o.source = ANY($2::text[]))
        AND (o.source LIKE 'reversal:' || $3 || ':%' OR o.source = ANY($4::text[]))
        AND NOT EXISTS (SELECT 1 FROM ledger_discharge_items i WHERE i.obligation_id = o.id)`,
    [payoutId, owed.map((x) => x.source), transferId, reversals.map((r) => `reversal:${r.id}`)]);
  await tx.query(
    `INSERT INTO ledger_obligations (source, vendor_id, order_id, batch_id, cause, amount_paise, rail, payout_id)
     SELECT source, $2::text, order_id, batch_id, 'reversal', amount, $3::text, $1::uuid FROM unnest($4::text[], $5::text[], $6::text[], $7::bigint[]) AS x(source, order_id, batch_id, amount)
     ON CONFLICT (source) DO NOTHING`,
    [payoutId, p.vendor_id, reversalRail(p), owed.map((x) => x.source), owed.map((x) => x.orderId), owed.map((x) => x.batchId), owed.map((x) => x.amount)]);
}

/** The claim's check, before any request leaves: why the ledger says no transfer of this payout
 * may go, or null. Another instrument already pays (or may still pay) a net this payout would pay;
 * or nothing is owed on it (its net paid and no reversal made any of it owed again); or what is owed
 * is not the amount the transfer would carry. */
export async function whyNoTransfer(tx: Queryable, payout: { id: string; vendorId: string; orderId: string | null; batchId: string | null; amountPaise: number }): Promise<string | null> {
  const check = async () => (await tx.query<{ source: string | null; kind: string | null; instrument: string | null; state: string | null; due_paise: string; due: number }>(
    `WITH mine AS (${ON_PAYOUT}),
     held AS (
       SELECT m.source, d.kind, d.instrument, d.state FROM mine m
         JOIN ledger_discharge_items i ON i.obligation_id = m.id AND i.active JOIN ledger_discharges d ON d.id = i.discharge_id
        WHERE m.cause = 'order_net' AND d.payout_id IS DISTINCT FROM $1 LIMIT 1)
     SELECT held.source, held.kind, held.instrument, held.state, due.paise::text AS due_paise, due.n::int AS due
       FROM (SELECT COALESCE(sum(m.amount_paise), 0) AS paise, count(*) AS n FROM mine m
              WHERE NOT EXISTS (SELECT 1 FROM ledger_discharge_items i WHERE i.obligation_id = m.id AND i.active)) due
       LEFT JOIN held ON true`,
    [payout.id, payout.vendorId, payout.orderId, payout.batchId])).rows[0]!;
  let found = await check();
  if (found.due === 0 && !found.source) {
    // Nothing written yet for what it pays (a row the rails never owed): owe it as the rails would, and look again.
    await owePaid(tx, payout);
    found = await check();
  }
  const held = found.source ? found : null;
  if (held) return `the ledger shows ${held.source!.replace('order:', 'order ')}'s net ${held.state === 'paid' ? 'paid' : 'being paid'} by ${held.kind!.replace('_', ' ')} ${held.instrument}`;
  if (found.due === 0) return 'the ledger shows nothing owed on it: what it pays is paid, and no reversal made any of it owed again';
  if (BigInt(found.due_paise) !== BigInt(payout.amountPaise)) return `the ledger owes ${found.due_paise} paise on it, not the ${payout.amountPaise} its transfer would carry`;
  return null;
}
