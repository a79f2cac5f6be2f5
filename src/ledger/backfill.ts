/** The ledger built from today's rail tables (issue 36, step 1): read every rail's rows, build the
 * obligations and discharges (model.ts), and write them in ONE transaction that first empties the
 * ledger, so a rebuild is the ledger as of one snapshot and the database's constraints (one active
 * discharge per obligation, a discharge's amount = what it pays) are checked on all of it at commit.
 * Every rail writes its part of the ledger as it moves (step 2): a rebuild first reads what they
 * wrote and says where it differs from what their rows say (railAgreement.ts), then writes the
 * whole ledger from the rows. */
import { inTransaction, type Db, type Tx } from '../db/pool';
import { buildLedger, type Ledger, type RailRows } from './model';
import { railDisagreements, type RecordedDischarge, type RecordedObligation } from './railAgreement';

type Queryable = Pick<Tx, 'query'>;

/** Everything the model reads, as of the transaction's snapshot. */
export async function readRailRows(db: Queryable): Promise<RailRows> {
  const q = async <T>(sql: string): Promise<T[]> => (await db.query(sql)).rows as T[];
  const big = (v: string | number | null) => BigInt(v ?? 0);
  // One after another: one transaction is one connection, which runs one query at a time.
  const [orderLines, otherLines, payouts, members, splits, employerDirect, reversals, settlementLines] = await inSequence([
    () => q<{ id: string; order_id: string; vendor_id: string; employer_id: string; amount_paise: string; route: string; payment_method: string; customer_share_paise: string }>(
      `SELECT l.id::text, l.order_id, l.vendor_id, l.employer_id, l.amount_paise, l.route, o.payment_method, o.customer_share_paise
         FROM offline_ledger l JOIN orders o ON o.id = l.order_id WHERE o.status = 'paid' ORDER BY l.id`),
    () => q<{ id: string; vendor_id: string; employer_id: string; order_id: string | null; amount_paise: string; route: string;
        taken_back_by: string | null; taken_back_reason: string | null; returned_by: string | null; returned_reason: string | null }>(
      `SELECT l.id::text, l.vendor_id, l.employer_id, COALESCE(l.clawback_order_id, r.order_id) AS order_id, l.amount_paise, l.route, l.taken_back_by, l.taken_back_reason,
              c.taken_back_by AS returned_by, c.taken_back_reason AS returned_reason
         FROM offline_ledger l LEFT JOIN transfer_reversals r ON r.id = l.transfer_reversal_id LEFT JOIN offline_ledger c ON c.id = l.returns_clawback_id
        WHERE l.order_id IS NULL ORDER BY l.id`),
    () => q<{ id: string; order_id: string | null; batch_id: string | null; vendor_id: string; status: string; amount_paise: string; provider_transfer_id: string | null;
        external_reference: string | null; idempotency_key: string; cancel_actor: string | null; cancel_reason: string | null; failed: string[] | null }>(
      `SELECT p.id::text, p.order_id, p.batch_id, p.vendor_id, p.status, p.amount_paise, p.provider_transfer_id, p.external_reference, p.idempotency_key,
              c.actor AS cancel_actor, c.reason AS cancel_reason,
              (SELECT array_agg(DISTINCT a.provider_transfer_id) FROM payout_attempts a
                WHERE a.payout_id = p.id AND a.outcome = 'failed_after_accept' AND a.provider_transfer_id IS NOT NULL) AS failed
         FROM payouts p
         LEFT JOIN orders o ON o.id = p.order_id
         LEFT JOIN LATERAL (SELECT actor, reason FROM review_actions WHERE payout_id = p.id AND action = 'cancel' ORDER BY id DESC LIMIT 1) c ON true
        WHERE p.batch_id IS NOT NULL OR o.status = 'paid' ORDER BY p.created_at, p.id`),
    () => q<{ order_id: string; batch_id: string; amount_paise: string }>(
      `SELECT m.order_id, m.batch_id, m.amount_paise FROM payout_batch_orders m ORDER BY m.batch_id, m.order_id`),
    () => q<{ order_id: string; vendor_id: string; amount_paise: string; status: string; provider_transfer_id: string | null }>(
      `SELECT s.order_id, s.vendor_id, s.amount_paise, s.status, s.provider_transfer_id FROM split_transfers s JOIN orders o ON o.id = s.order_id WHERE o.status = 'paid'`),
    () => q<{ order_id: string; vendor_id: string }>(
      `SELECT v.order_id, v.vendor_id FROM vendor_obligations v JOIN orders o ON o.id = v.order_id WHERE o.status = 'paid'`),
    () => q<{ id: string; transfer_id: string; payout_id: string | null; amount_paise: string; transfer_amount_paise: string; owed_paise: string }>(
      `SELECT id, transfer_id, payout_id::text, amount_paise, transfer_amount_paise, owed_paise FROM transfer_reversals WHERE payout_id IS NOT NULL ORDER BY recorded_at, id`),
    () => q<{ id: string; vendor_id: string; reference: string; amount_paise: string; status: string; utr: string | null; members: string[] }>(
      `SELECT sl.id::text, sl.vendor_id, sl.reference, sl.amount_paise, sl.status, sl.utr,
              COALESCE(array_agg(m.ledger_id::text ORDER BY m.ledger_id) FILTER (WHERE m.active), '{}') AS members
         FROM settlement_lines sl LEFT JOIN settlement_line_members m ON m.line_id = sl.id
        GROUP BY sl.id ORDER BY sl.id`),
  ] as const);
  return {
    orderLines: orderLines.map((r) => ({ ledgerId: r.id, orderId: r.order_id, vendorId: r.vendor_id, employerId: r.employer_id, amountPaise: big(r.amount_paise), route: r.route, paymentMethod: r.payment_method, customerSharePaise: big(r.customer_share_paise) })),
    otherLines: otherLines.map((r) => ({
      ledgerId: r.id, vendorId: r.vendor_id, employerId: r.employer_id, orderId: r.order_id, amountPaise: big(r.amount_paise), route: r.route,
      takenBack: r.taken_back_by ? { actor: r.taken_back_by, reason: r.taken_back_reason ?? '' } : null,
      returnedBy: r.returned_by ? { actor: r.returned_by, reason: r.returned_reason ?? '' } : null,
    })),
    payouts: payouts.map((r) => ({
      id: r.id, orderId: r.order_id, batchId: r.batch_id, vendorId: r.vendor_id, status: r.status, amountPaise: big(r.amount_paise),
      providerTransferId: r.provider_transfer_id, externalReference: r.external_reference, idempotencyKey: r.idempotency_key,
      cancelledBy: r.cancel_actor ? { actor: r.cancel_actor, reason: r.cancel_reason ?? '' } : null,
      failedTransferIds: r.failed ?? [],
    })),
    members: members.map((r) => ({ orderId: r.order_id, batchId: r.batch_id, amountPaise: big(r.amount_paise) })),
    splits: splits.map((r) => ({ orderId: r.order_id, vendorId: r.vendor_id, amountPaise: big(r.amount_paise), status: r.status, providerTransferId: r.provider_transfer_id })),
    employerDirect: employerDirect.map((r) => ({ orderId: r.order_id, vendorId: r.vendor_id })),
    reversals: reversals.map((r) => ({ id: r.id, transferId: r.transfer_id, payoutId: r.payout_id, amountPaise: big(r.amount_paise), transferAmountPaise: big(r.transfer_amount_paise), owedPaise: big(r.owed_paise) })),
    settlementLines: settlementLines.map((r) => ({ id: r.id, vendorId: r.vendor_id, reference: r.reference, amountPaise: big(r.amount_paise), status: r.status, utr: r.utr, memberLedgerIds: r.members })),
  };
}

/** Runs each read after the one before, keeping each result's type. */
async function inSequence<T extends readonly (() => Promise<unknown>)[]>(reads: T): Promise<{ [K in keyof T]: Awaited<ReturnType<T[K]>> }> {
  const out: unknown[] = [];
  for (const read of reads) out.push(await read());
  return out as { [K in keyof T]: Awaited<ReturnType<T[K]>> };
}

export interface BackfillResult {
  obligations: number; discharges: number; items: number; unplaced: string[];
  /** Where the ledger the rails wrote differs from the one their rows say (railAgreement.ts). */
  disagreements: string[];
}

/** The ledger as written, for the rail agreement check. */
export async function readRecordedLedger(db: Queryable): Promise<{ obligations: RecordedObligation[]; discharges: RecordedDischarge[] }> {
  const { rows: obligations } = await db.query<{ source: string; vendor_id: string; cause: RecordedObligation['cause']; amount_paise: string; rail: RecordedObligation['rail'];
    order_id: string | null; batch_id: string | null; payout_id: string | null; reason: string | null; actor: string | null }>(
    'SELECT source, vendor_id, cause, amount_paise, rail, order_id, batch_id, payout_id::text, reason, actor FROM ledger_obligations');
  const { rows: discharges } = await db.query<{ vendor_id: string; kind: RecordedDischarge['kind']; instrument: string; provider_ref: string | null; amount_paise: string;
    state: RecordedDischarge['state'] | 'void'; payout_id: string | null; pays: string[] }>(
    `SELECT d.vendor_id, d.kind, d.instrument, d.provider_ref, d.amount_paise, d.state, d.payout_id::text,
            COALESCE(array_agg(o.source) FILTER (WHERE i.active), '{}') AS pays
       FROM ledger_discharges d LEFT JOIN ledger_discharge_items i ON i.discharge_id = d.id LEFT JOIN ledger_obligations o ON o.id = i.obligation_id
      WHERE d.state <> 'void' GROUP BY d.id`);
  return {
    obligations: obligations.map((r) => ({ source: r.source, vendorId: r.vendor_id, cause: r.cause, amountPaise: BigInt(r.amount_paise), rail: r.rail,
      orderId: r.order_id, batchId: r.batch_id, payoutId: r.payout_id, reason: r.reason, actor: r.actor })),
    discharges: discharges.map((r) => ({ vendorId: r.vendor_id, kind: r.kind, instrument: r.instrument, providerRef: r.provider_ref, amountPaise: BigInt(r.amount_paise),
      state: r.state as RecordedDischarge['state'], payoutId: r.payout_id, pays: r.pays })),
  };
}

/** Empties the ledger and writes it again from the rails, in one transaction (REPEATABLE READ: every
 * rail read at one instant). The database refuses a ledger that breaks its constraints. */
export async function rebuildLedger(db: Db): Promise<BackfillResult> {
  return inTransaction(db, async (tx) => {
    await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
    // One rebuild at a time, and the lock before the snapshot: LOCK TABLE takes none (PostgreSQL's
    // own advice for REPEATABLE READ), so a second rebuild waits here, then reads after the first.
    // All three: a rail's write to any of them waits for the rebuild, then lands on the new ledger.
    await tx.query('LOCK TABLE ledger_obligations, ledger_discharges, ledger_discharge_items IN SHARE ROW EXCLUSIVE MODE');
    const ledger = buildLedger(await readRailRows(tx));
    const disagreements = railDisagreements(await readRecordedLedger(tx), ledger);
    await tx.query('DELETE FROM ledger_discharge_items');
    await tx.query('DELETE FROM ledger_discharges');
    await tx.query('DELETE FROM ledger_obligations');
    return { ...(await writeLedger(tx, ledger)), unplaced: ledger.unplaced, disagreements };
  });
}

/** Bulk writes (one statement per table, arrays unnested), so a day of orders is three statements. */
async function writeLedger(tx: Tx, ledger: Ledger): Promise<Omit<BackfillResult, 'unplaced' | 'disagreements'>> {
  const o = ledger.obligations;
  const { rows: ids } = await tx.query<{ id: string; source: string }>(
    `INSERT INTO ledger_obligations (source, vendor_id, employer_id, order_id, batch_id, cause, amount_paise, rail, reason, actor, payout_id)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[], $8::text[], $9::text[], $10::text[], $11::uuid[])
     RETURNING id::text, source`,
    [o.map((x) => x.source), o.map((x) => x.vendorId), o.map((x) => x.employerId), o.map((x) => x.orderId), o.map((x) => x.batchId),
      o.map((x) => x.cause), o.map((x) => x.amountPaise.toString()), o.map((x) => x.rail), o.map((x) => x.reason ?? null), o.map((x) => x.actor ?? null),
      o.map((x) => x.payoutId ?? null)],
  );
  const obligationId = new Map(ids.map((r) => [r.source, r.id]));
  const d = ledger.discharges;
  const { rows: written } = await tx.query<{ id: string; kind: string; instrument: string }>(
    `INSERT INTO ledger_discharges (vendor_id, kind, instrument, provider_ref, amount_paise, state, payout_id)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::uuid[])
     RETURNING id::text, kind, instrument`,
    [d.map((x) => x.vendorId), d.map((x) => x.kind), d.map((x) => x.instrument), d.map((x) => x.providerRef), d.map((x) => x.amountPaise.toString()), d.map((x) => x.state),
      d.map((x) => x.payoutId ?? null)],
  );
  const dischargeId = new Map(written.map((r) => [`${r.kind} ${r.instrument}`, r.id]));
  const amountOf = new Map(o.map((x) => [x.source, x.amountPaise]));
  const items = d.flatMap((x) => x.pays.map((source) => [dischargeId.get(`${x.kind} ${x.instrument}`)!, obligationId.get(source)!, amountOf.get(source)!.toString()] as const));
  await tx.query(
    `INSERT INTO ledger_discharge_items (discharge_id, obligation_id, amount_paise)
     SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[])`,
    [items.map((x) => x[0]), items.map((x) => x[1]), items.map((x) => x[2])],
  );
  return { obligations: o.length, discharges: d.length, items: items.length };
}
