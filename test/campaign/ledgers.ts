/** Reading the two ledgers the checker judges by: PostgreSQL (our books) and the sandbox (the
 * provider's), and the quiesce probe: what is still moving. */
import type { Pool } from 'pg';
import type { Topology } from '../../src/devstack/topologyTypes';
import type { DbLedger, ProviderLedger } from './checker';

const n = (v: string | number) => Number(v);

export async function readDbLedger(db: Pool, orderIds: string[]): Promise<DbLedger> {
  const q = async <R extends Record<string, unknown>>(sql: string) => (await db.query<R>(sql, [orderIds])).rows;
  const [orders, payouts, splits, ledger, open, obligations, refunds, members, paidLines, outside, clawbacks, reversalLines, batchMembers] = await Promise.all([
    q<{ id: string; status: string; vendor_id: string; vendor_net_paise: string; subsidy_paise: string; commission_paise: string; total_paise: string }>(
      'SELECT id, status, vendor_id, vendor_net_paise, subsidy_paise, commission_paise, total_paise FROM orders WHERE id = ANY($1)'),
    q<{ order_id: string; status: string; amount_paise: string; provider_transfer_id: string | null; linked_account_id: string; last_code: string | null }>(
      'SELECT order_id, status, amount_paise, provider_transfer_id, linked_account_id, last_code FROM payouts WHERE order_id = ANY($1)'),
    q<{ order_id: string; status: string; amount_paise: string; provider_transfer_id: string | null; linked_account_id: string }>(
      'SELECT order_id, status, amount_paise, provider_transfer_id, linked_account_id FROM split_transfers WHERE order_id = ANY($1)'),
    q<{ order_id: string; route: string; amount_paise: string }>('SELECT order_id, route, amount_paise FROM offline_ledger WHERE order_id = ANY($1)'),
    q<{ order_id: string }>('SELECT order_id FROM offline_ledger_open WHERE order_id = ANY($1)'),
    q<{ order_id: string; amount_paise: string }>('SELECT order_id, amount_paise FROM vendor_obligations WHERE order_id = ANY($1)'),
    q<{ order_id: string | null; payment_id: string; status: string; gateway_refund_id: string | null }>(
      'SELECT order_id, payment_id, status, gateway_refund_id FROM refunds WHERE order_id = ANY($1)'),
    q<{ order_id: string; reference: string; status: string; vendor_id: string; amount_paise: string }>(
      `SELECT o.order_id, l.reference, l.status, l.vendor_id, m.amount_paise FROM settlement_line_members m
         JOIN settlement_lines l ON l.id = m.line_id JOIN offline_ledger o ON o.id = m.ledger_id
        WHERE m.active AND o.order_id = ANY($1)`),
    q<{ reference: string; vendor_id: string; amount_paise: string; utr: string; members_paise: string }>(
      `SELECT l.reference, l.vendor_id, l.amount_paise, l.utr,
              (SELECT coalesce(sum(m.amount_paise), 0) FROM settlement_line_members m WHERE m.line_id = l.id AND m.active) AS members_paise
         FROM settlement_lines l WHERE l.status = 'paid' AND l.vendor_id IN (SELECT vendor_id FROM orders WHERE id = ANY($1))`),
    q<{ id: string; order_id: string; action: string; clawback_paise: string | null; status: string }>(
      'SELECT id, order_id, action, clawback_paise, status FROM outside_refunds WHERE order_id = ANY($1)'),
    q<{ order_id: string; amount_paise: string }>(
      `SELECT clawback_order_id AS order_id, sum(amount_paise) AS amount_paise FROM offline_ledger WHERE clawback_order_id = ANY($1) GROUP BY 1`),
    q<{ order_id: string; reversal_id: string; reversed_paise: string; owed_paise: string; open: boolean; paid_by: string | null }>(
      `SELECT r.split_order_id AS order_id, r.id AS reversal_id, r.amount_paise AS reversed_paise, l.amount_paise AS owed_paise,
              EXISTS (SELECT 1 FROM offline_ledger_open x WHERE x.id = l.id) AS open,
              (SELECT sl.reference FROM settlement_line_members m JOIN settlement_lines sl ON sl.id = m.line_id WHERE m.ledger_id = l.id AND m.active AND sl.status = 'paid') AS paid_by
         FROM transfer_reversals r JOIN offline_ledger l ON l.transfer_reversal_id = r.id WHERE r.split_order_id = ANY($1)`),
    q<{ order_id: string; batch_id: string; batch_status: string; status: string | null; amount_paise: string | null; provider_transfer_id: string | null; linked_account_id: string | null }>(
      `SELECT m.order_id, b.id AS batch_id, b.status AS batch_status, p.status, p.amount_paise, p.provider_transfer_id, p.linked_account_id
         FROM payout_batch_orders m JOIN payout_batches b ON b.id = m.batch_id LEFT JOIN payouts p ON p.batch_id = b.id
        WHERE b.id IN (SELECT batch_id FROM payout_batch_orders WHERE order_id = ANY($1))`),
  ]);
  const batchReversals = await q<{ id: string; transfer_id: string; batch_id: string; amount_paise: string }>(
    `SELECT id, transfer_id, batch_id, amount_paise FROM transfer_reversals
      WHERE batch_id IN (SELECT batch_id FROM payout_batch_orders WHERE order_id = ANY($1))`);
  const batches: DbLedger['batches'] = new Map();
  for (const r of batchMembers) {
    const batch = batches.get(r.batch_id) ?? { status: r.batch_status, members: [], payout: r.status ? { status: r.status, amountPaise: n(r.amount_paise!), providerTransferId: r.provider_transfer_id, linkedAccountId: r.linked_account_id! } : null };
    batch.members.push(r.order_id);
    batches.set(r.batch_id, batch);
  }
  const reversalsByOrder = new Map<string, DbLedger['reversalLines'] extends Map<string, infer V> ? V : never>();
  for (const r of reversalLines) {
    reversalsByOrder.set(r.order_id, [...(reversalsByOrder.get(r.order_id) ?? []), { reversalId: r.reversal_id, reversedPaise: n(r.reversed_paise), owedPaise: n(r.owed_paise), open: r.open, paidBy: r.paid_by }]);
  }
  return {
    orders: new Map(orders.map((r) => [r.id, { status: r.status, vendorId: r.vendor_id, vendorNetPaise: n(r.vendor_net_paise), subsidyPaise: n(r.subsidy_paise), commissionPaise: n(r.commission_paise), totalPaise: n(r.total_paise) }])),
    payouts: new Map(payouts.map((r) => [r.order_id, { status: r.status, amountPaise: n(r.amount_paise), providerTransferId: r.provider_transfer_id, linkedAccountId: r.linked_account_id, lastCode: r.last_code }])),
    splits: new Map(splits.map((r) => [r.order_id, { status: r.status, amountPaise: n(r.amount_paise), providerTransferId: r.provider_transfer_id, linkedAccountId: r.linked_account_id }])),
    ledger: new Map(ledger.map((r) => [r.order_id, { route: r.route, amountPaise: n(r.amount_paise) }])),
    openLedger: new Set(open.map((r) => r.order_id)),
    obligations: new Map(obligations.map((r) => [r.order_id, n(r.amount_paise)])),
    refunds: refunds.map((r) => ({ orderId: r.order_id, paymentId: r.payment_id, status: r.status, gatewayRefundId: r.gateway_refund_id })),
    settlementMembers: members.map((r) => ({ orderId: r.order_id, reference: r.reference, status: r.status, vendorId: r.vendor_id, amountPaise: n(r.amount_paise) })),
    outsideRefunds: outside.map((r) => ({ id: r.id, orderId: r.order_id, action: r.action, clawbackPaise: r.clawback_paise === null ? null : n(r.clawback_paise), status: r.status })),
    clawbacks: new Map(clawbacks.map((r) => [r.order_id, n(r.amount_paise)])),
    paidSettlementLines: paidLines.map((r) => ({ reference: r.reference, vendorId: r.vendor_id, amountPaise: n(r.amount_paise), utr: r.utr, membersPaise: n(r.members_paise) })),
    reversalLines: reversalsByOrder,
    batchOf: new Map(batchMembers.map((r) => [r.order_id, r.batch_id])),
    batches,
    batchReversals: batchReversals.map((r) => ({ id: r.id, transferId: r.transfer_id, batchId: r.batch_id, amountPaise: n(r.amount_paise) })),
  };
}

export async function readProviderLedger(t: Topology): Promise<ProviderLedger> {
  const [transfers, refunds, events] = await Promise.all([t.sandbox.transfers(), t.sandbox.refunds(), t.sandbox.webhookEvents()]);
  const delivered = events.filter((e) => e.event.startsWith('refund.') && e.deliveredAt !== null);
  const heardRefundIds = new Set(refunds.filter((r) => delivered.some((e) => e.body.includes(r.id))).map((r) => r.id));
  return { transfers, refunds, heardRefundIds, platformAccountSource: (x) => !x.source.startsWith('pay_') && !x.source.startsWith('order_') };
}

/** What is still moving: a quiet system has none of these (parked payouts wait for a human). */
export async function stillMoving(db: Pool, orderIds: string[], plannedParked: string[]): Promise<Record<string, number>> {
  const { rows } = await db.query<{ what: string; n: string }>(
    `SELECT 'payouts ' || status AS what, count(*) AS n FROM payouts WHERE status IN ('pending', 'processing', 'accepted', 'failed') GROUP BY status
     UNION ALL SELECT 'splits expected', count(*) FROM split_transfers WHERE status = 'expected' HAVING count(*) > 0
     UNION ALL SELECT 'refunds ' || status, count(*) FROM refunds WHERE status IN ('requested', 'pending') GROUP BY status
     UNION ALL SELECT 'outbox rows', count(*) FROM payouts_outbox HAVING count(*) > 0
     UNION ALL SELECT 'orders waiting in a batch', count(*) FROM payouts WHERE status = 'batched' HAVING count(*) > 0
     UNION ALL SELECT 'open batches', count(*) FROM payout_batches WHERE status = 'open' HAVING count(*) > 0
     UNION ALL SELECT 'reverse_all refunds whose reversals the sweep has not recorded', count(*) FROM refunds r
       WHERE r.reverse_all AND r.status = 'processed' AND r.reversals_checked_at IS NULL AND r.order_id = ANY($1)
         AND NOT EXISTS (SELECT 1 FROM split_transfers s WHERE s.order_id = r.order_id) AND NOT EXISTS (SELECT 1 FROM payouts p WHERE p.order_id = r.order_id) HAVING count(*) > 0
     UNION ALL SELECT 'orders ' || status, count(*) FROM orders WHERE id = ANY($1) AND status IN ('pending', 'failed') GROUP BY status
     UNION ALL SELECT 'payouts ' || status || ' (unplanned)', count(*) FROM payouts WHERE status IN ('parked', 'review') AND NOT order_id = ANY($2) GROUP BY status
     UNION ALL SELECT 'paid orders the sweep has not asked about once more', count(*) FROM orders
       WHERE id = ANY($1) AND status = 'paid' AND gateway_order_id IS NOT NULL AND (payment_checked_at IS NULL OR payment_checked_at < paid_at) HAVING count(*) > 0`,
    [orderIds, plannedParked]);
  // A never-paid order is pending until it expires, a payout parked while its account was
  // suspended until ops retries it, a paid order until the sweep has looked for a second capture
  // on it: all movement still to come.
  return Object.fromEntries(rows.map((r) => [r.what, Number(r.n)]));
}
