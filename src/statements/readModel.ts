/** The statement's reads from PostgreSQL, one statement each: a vendor's paid orders of a period with
 * what the ledger says of each (the obligation it stands for, its rail, the instrument that pays it,
 * the settlement line or Razorpay settlement behind that instrument), its refund clawbacks recorded
 * in the period, and the vendors finance picks from. statementLines.ts decides the rest. */
import type { Db } from '../db/pool';
import { istDayBounds } from '../domain/calendar';
import type { DischargeKind, DischargeState, Rail } from '../ledger/model';
import type { Statement, StatementPeriod } from './contract';
import { buildStatement, type StatementRow } from './statementLines';

type Queryable = Pick<Db, 'query'>;

/** [start of `from`, end of `to`) in IST, as UTC instants. */
const periodBounds = (period: StatementPeriod): [Date, Date] => [istDayBounds(period.from).start, istDayBounds(period.to).end];

export interface VendorRef { id: string; name: string }

export async function findVendor(db: Queryable, vendorId: string): Promise<VendorRef | null> {
  const { rows } = await db.query<VendorRef>('SELECT id, name FROM vendors WHERE id = $1', [vendorId]);
  return rows[0] ?? null;
}

// The obligation `f` stands for: its one active discharge `d`, the settlement line `sl` that is that
// discharge, and Razorpay's settlement `g` of the transfer or split that is (recon's transfer row
// names the settlement; the settlement's own UTR wins over the row's copy: a UTR can arrive later).
const DISCHARGE = `LEFT JOIN LATERAL (
    SELECT d.kind, d.state, d.provider_ref, d.instrument FROM ledger_discharge_items i JOIN ledger_discharges d ON d.id = i.discharge_id
     WHERE i.obligation_id = f.id AND i.active) d ON true
  LEFT JOIN settlement_lines sl ON d.kind = 'settlement_line' AND sl.reference = d.instrument
  LEFT JOIN LATERAL (
    SELECT r.settlement_id, COALESCE(st.utr, r.settlement_utr) AS utr
      FROM recon_rows r LEFT JOIN settlements st ON st.id = r.settlement_id
     WHERE d.kind IN ('order_transfer', 'batch_transfer', 'split') AND r.type = 'transfer' AND r.entity_id = d.provider_ref AND r.settlement_id IS NOT NULL
     ORDER BY r.settled_at DESC NULLS LAST, r.id DESC LIMIT 1) g ON true`;

const LEDGER_COLUMNS = `f.rail AS owed_rail, d.kind AS discharge_kind, d.state AS discharge_state, d.provider_ref,
  sl.batch_id, sl.reference, sl.status AS line_status, sl.utr AS line_utr, to_char(sl.paid_on, 'YYYY-MM-DD') AS line_paid_on,
  g.settlement_id, g.utr AS settlement_utr`;

interface Row {
  kind: 'order' | 'refund_clawback'; order_id: string; at: Date; employer_id: string;
  payment_method: string | null; total_paise: number | null; subsidy_paise: number | null; customer_share_paise: number | null;
  commission_paise: number | null; vendor_net_paise: number | null;
  route: string | null; refund_id: string | null;
  owed_rail: Rail | null; owed_paise: number | null; discharge_kind: DischargeKind | null; discharge_state: DischargeState | null; provider_ref: string | null;
  cash_kept_paise: number | null;
  payout_status: string | null; external_reference: string | null; payout_batch_id: string | null;
  batch_id: string | null; reference: string | null; line_status: string | null; line_utr: string | null; line_paid_on: string | null;
  settlement_id: string | null; settlement_utr: string | null;
}

/** Every line of the vendor's statement for the period, as rows (orders by `paid_at`, clawbacks and
 * returned clawbacks by when they were recorded, both in IST days). An order's line stands for its
 * net's obligation, or, once a reversal took back the transfer that paid it, for what the latest
 * reversal made owed again (that is what is still to be paid, on the rail ops chose); the line
 * accounts the order's net either way. */
export async function readStatementRows(db: Queryable, vendorId: string, period: StatementPeriod): Promise<StatementRow[]> {
  const { rows } = await db.query<Row>(
    `SELECT 'order' AS kind, o.id AS order_id, o.paid_at AS at, o.employer_id,
            o.payment_method, o.total_paise, o.subsidy_paise, o.customer_share_paise, o.commission_paise, o.vendor_net_paise,
            l.route, NULL AS refund_id, n.amount_paise AS owed_paise, ${LEDGER_COLUMNS}, ck.amount_paise AS cash_kept_paise,
            p.status AS payout_status, COALESCE(p.external_reference, bp.external_reference) AS external_reference, bm.batch_id AS payout_batch_id
       FROM orders o
       LEFT JOIN offline_ledger l ON l.order_id = o.id
       LEFT JOIN ledger_obligations n ON n.source = 'order:' || o.id
       LEFT JOIN ledger_obligations ck ON ck.source = 'cash:' || o.id
       LEFT JOIN LATERAL (
         SELECT r.id, r.rail FROM ledger_obligations r
          WHERE r.order_id = o.id AND r.cause = 'reversal' AND r.payout_id IS NOT NULL ORDER BY r.id DESC LIMIT 1) rv ON true
       CROSS JOIN LATERAL (SELECT COALESCE(rv.id, n.id) AS id, COALESCE(rv.rail, n.rail) AS rail) f
       ${DISCHARGE}
       LEFT JOIN payouts p ON p.order_id = o.id
       -- An order paid by its batch: the batch's own payout holds ops' reference.
       LEFT JOIN payout_batch_orders bm ON bm.order_id = o.id
       LEFT JOIN payouts bp ON bp.batch_id = bm.batch_id
      WHERE o.vendor_id = $1 AND o.status = 'paid' AND o.paid_at >= $2 AND o.paid_at < $3
     UNION ALL
     SELECT 'refund_clawback', l.clawback_order_id, l.created_at, l.employer_id,
            NULL, NULL, NULL, NULL, NULL, NULL,
            l.route, COALESCE(l.outside_refund_id, returned.outside_refund_id), f.amount_paise, ${LEDGER_COLUMNS}, NULL,
            NULL, NULL, NULL
       FROM offline_ledger l
       LEFT JOIN ledger_obligations f ON f.source = 'line:' || l.id
       ${DISCHARGE}
       LEFT JOIN offline_ledger returned ON returned.id = l.returns_clawback_id
      -- A clawback ops took back (they cancelled its payout) owes nothing unless a paid line netted it,
      -- and then its clawback_returned line owes it to the vendor again.
      WHERE l.vendor_id = $1 AND l.route IN ('refund_clawback', 'clawback_returned') AND l.created_at >= $2 AND l.created_at < $3
        AND (l.taken_back_at IS NULL OR sl.status = 'paid')`,
    [vendorId, ...periodBounds(period)],
  );
  return rows.map(toStatementRow);
}

function toStatementRow(r: Row): StatementRow {
  return {
    kind: r.kind,
    orderId: r.order_id,
    at: r.at,
    employerId: r.employer_id,
    order: r.kind === 'order'
      ? { paymentMethod: r.payment_method!, totalPaise: r.total_paise!, subsidyPaise: r.subsidy_paise!, customerSharePaise: r.customer_share_paise!, commissionPaise: r.commission_paise!, vendorNetPaise: r.vendor_net_paise! }
      : null,
    route: r.route,
    refundId: r.refund_id,
    owed: r.owed_rail === null || r.owed_paise === null ? null : { rail: r.owed_rail, amountPaise: r.owed_paise },
    discharge: r.discharge_kind === null ? null : { kind: r.discharge_kind, state: r.discharge_state!, providerRef: r.provider_ref },
    cashKeptPaise: r.cash_kept_paise ?? 0,
    payout: r.payout_status === null ? null : { status: r.payout_status, externalReference: r.external_reference, batchId: r.payout_batch_id },
    batchLine: r.batch_id === null ? null : { batchId: r.batch_id, reference: r.reference!, status: r.line_status!, utr: r.line_utr, paidOn: r.line_paid_on },
    gatewaySettlement: r.settlement_id === null ? null : { settlementId: r.settlement_id, utr: r.settlement_utr },
  };
}

/** The vendor's statement, or null when there is no such vendor. */
export async function readVendorStatement(db: Queryable, vendorId: string, period: StatementPeriod, now = new Date()): Promise<Statement | null> {
  const vendor = await findVendor(db, vendorId);
  if (!vendor) return null;
  return buildStatement({ vendor, period, rows: await readStatementRows(db, vendorId, period), generatedAt: now });
}

export interface VendorActivity extends VendorRef { orders: number; vendorNetPaise: number }

/** Every vendor, with its paid orders in the period: what finance picks a statement from. */
export async function listVendorsWithActivity(db: Queryable, period: StatementPeriod): Promise<VendorActivity[]> {
  const { rows } = await db.query<{ id: string; name: string; orders: number; vendor_net_paise: number }>(
    `SELECT v.id, v.name, count(o.id)::int AS orders, COALESCE(sum(o.vendor_net_paise), 0)::bigint AS vendor_net_paise
       FROM vendors v LEFT JOIN orders o ON o.vendor_id = v.id AND o.status = 'paid' AND o.paid_at >= $1 AND o.paid_at < $2
      GROUP BY v.id, v.name ORDER BY v.id`,
    periodBounds(period),
  );
  return rows.map((r) => ({ id: r.id, name: r.name, orders: r.orders, vendorNetPaise: r.vendor_net_paise }));
}
