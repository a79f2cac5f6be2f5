/** The statement's reads from PostgreSQL, one statement each: a vendor's paid orders of a period with
 * everything that says how each was paid (the offline ledger line and whether the open offline
 * ledger still lists it, the payout, the split, the obligation, the settlement batch line it is an
 * active member of, Razorpay's settlement of its transfer as recon stored it), its refund clawbacks
 * recorded in the period, and the vendors finance picks from. statementLines.ts decides the rest. */
import type { Db } from '../db/pool';
import { istDayBounds } from '../domain/calendar';
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

// The gateway settlement of a transfer: recon's transfer row (entity = the transfer) names the
// settlement; the settlement's own UTR wins over the row's copy (a UTR can arrive later).
const GATEWAY_SETTLEMENT = `LEFT JOIN LATERAL (
    SELECT r.settlement_id, COALESCE(st.utr, r.settlement_utr) AS utr
      FROM recon_rows r LEFT JOIN settlements st ON st.id = r.settlement_id
     WHERE r.type = 'transfer' AND r.entity_id = COALESCE(p.provider_transfer_id, bp.provider_transfer_id, s.provider_transfer_id) AND r.settlement_id IS NOT NULL
     ORDER BY r.settled_at DESC NULLS LAST, r.id DESC LIMIT 1) g ON true`;

const BATCH_LINE = `LEFT JOIN settlement_line_members m ON m.ledger_id = l.id AND m.active
  LEFT JOIN settlement_lines sl ON sl.id = m.line_id`;

const LEDGER_AND_BATCH_COLUMNS = `l.id AS ledger_id, l.route, l.amount_paise AS ledger_paise,
  EXISTS (SELECT 1 FROM offline_ledger_open v WHERE v.id = l.id) AS ledger_open,
  sl.batch_id, sl.reference, sl.status AS line_status, sl.utr AS line_utr, to_char(sl.paid_on, 'YYYY-MM-DD') AS line_paid_on`;

interface Row {
  kind: 'order' | 'refund_clawback'; order_id: string; at: Date; employer_id: string;
  payment_method: string | null; total_paise: number | null; subsidy_paise: number | null; customer_share_paise: number | null;
  commission_paise: number | null; vendor_net_paise: number | null;
  ledger_id: number | null; route: string | null; ledger_paise: number | null; ledger_open: boolean; refund_id: string | null;
  payout_status: string | null; payout_paise: number | null; payout_transfer_id: string | null; external_reference: string | null; payout_batch_id: string | null;
  split_status: string | null; split_paise: number | null; split_transfer_id: string | null;
  obligation_paise: number | null;
  batch_id: string | null; reference: string | null; line_status: string | null; line_utr: string | null; line_paid_on: string | null;
  settlement_id: string | null; settlement_utr: string | null;
}

/** Every line of the vendor's statement for the period, as rows (orders by `paid_at`, clawbacks and
 * returned clawbacks by when they were recorded, both in IST days). */
export async function readStatementRows(db: Queryable, vendorId: string, period: StatementPeriod): Promise<StatementRow[]> {
  const { rows } = await db.query<Row>(
    `SELECT 'order' AS kind, o.id AS order_id, o.paid_at AS at, o.employer_id,
            o.payment_method, o.total_paise, o.subsidy_paise, o.customer_share_paise, o.commission_paise, o.vendor_net_paise,
            ${LEDGER_AND_BATCH_COLUMNS}, NULL AS refund_id,
            p.status AS payout_status, p.amount_paise AS payout_paise, COALESCE(p.provider_transfer_id, bp.provider_transfer_id) AS payout_transfer_id,
            COALESCE(p.external_reference, bp.external_reference) AS external_reference, bm.batch_id AS payout_batch_id,
            s.status AS split_status, s.amount_paise AS split_paise, s.provider_transfer_id AS split_transfer_id,
            ob.amount_paise AS obligation_paise, g.settlement_id, g.utr AS settlement_utr
       FROM orders o
       LEFT JOIN offline_ledger l ON l.order_id = o.id
       ${BATCH_LINE}
       LEFT JOIN payouts p ON p.order_id = o.id
       -- An order paid by its batch: the batch's own payout holds the transfer.
       LEFT JOIN payout_batch_orders bm ON bm.order_id = o.id
       LEFT JOIN payouts bp ON bp.batch_id = bm.batch_id
       LEFT JOIN split_transfers s ON s.order_id = o.id
       LEFT JOIN vendor_obligations ob ON ob.order_id = o.id
       ${GATEWAY_SETTLEMENT}
      WHERE o.vendor_id = $1 AND o.status = 'paid' AND o.paid_at >= $2 AND o.paid_at < $3
     UNION ALL
     SELECT 'refund_clawback', l.clawback_order_id, l.created_at, l.employer_id,
            NULL, NULL, NULL, NULL, NULL, NULL,
            ${LEDGER_AND_BATCH_COLUMNS}, COALESCE(l.outside_refund_id, returned.outside_refund_id),
            NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
       FROM offline_ledger l
       ${BATCH_LINE}
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
    ledger: r.ledger_id === null ? null : { route: r.route!, amountPaise: r.ledger_paise!, open: r.ledger_open },
    refundId: r.refund_id,
    payout: r.payout_status === null ? null : { status: r.payout_status, amountPaise: r.payout_paise!, transferId: r.payout_transfer_id, externalReference: r.external_reference, batchId: r.payout_batch_id },
    split: r.split_status === null ? null : { status: r.split_status, amountPaise: r.split_paise!, transferId: r.split_transfer_id },
    obligationPaise: r.obligation_paise,
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
