/** What one window needs for the pure engine (reconcile.ts), loaded from PostgreSQL: the
 * specification path, which the SQL matcher (matchInDatabase.ts) is checked against, and the way a
 * test reads what recon would see. */
import type { Db } from '../db/pool';
import { addDays, istDateOf, istDayBounds } from '../domain/calendar';
import { payoutDischargeSql, splitDischargeSql } from './ledgerInstruments';
import type { AppMoneyIn, AppObligation, AppPayment, AppRefund, AppReversal, AppTransfer, BankLine, GatewayRow, ReconInput, SettlementRecord } from './model';
import { CAPTURE_LOOKBACK_DAYS } from './repository';

interface RowRecord {
  entity_id: string; settlement_id: string | null; type: GatewayRow['type']; amount_paise: number; fee_paise: number; tax_paise: number;
  credit_paise: number; debit_paise: number; on_hold: boolean; settled: boolean; recon_day: string; payment_id: string | null;
  order_id: string | null; order_receipt: string | null; note_transaction_id: string | null; note_refund_request_id: string | null;
}

function toGatewayRow(r: RowRecord): GatewayRow {
  return {
    entityId: r.entity_id, settlementId: r.settlement_id, type: r.type, amountPaise: r.amount_paise, feePaise: r.fee_paise, taxPaise: r.tax_paise,
    creditPaise: r.credit_paise, debitPaise: r.debit_paise, onHold: r.on_hold, settled: r.settled, reconDay: r.recon_day,
    paymentId: r.payment_id, gatewayOrderId: r.order_id, orderReceipt: r.order_receipt,
    noteTransactionId: r.type === 'transfer' ? r.note_transaction_id : null, noteRefundRequestId: r.type === 'refund' ? r.note_refund_request_id : null,
  };
}

const PAYMENT_COLUMNS = `id, order_id, gateway_order_id, amount_paise, fee_paise, tax_paise, captured_at`;
function toAppPayment(r: { id: string; order_id: string | null; gateway_order_id: string; amount_paise: number; fee_paise: number | null; tax_paise: number | null; captured_at: Date | null }): AppPayment {
  return { id: r.id, orderId: r.order_id, gatewayOrderId: r.gateway_order_id, amountPaise: r.amount_paise, feePaise: r.fee_paise, taxPaise: r.tax_paise, capturedAt: r.captured_at };
}

/** Everything the engine needs for [from, to]; see ReconInput. Rows come in the order they were
 * reported (day, then storage order) and bank lines in storage order: the engine's "first row" and
 * "first line" are those, as in matchInDatabase.ts. */
export async function loadReconInput(db: Db, window: { from: string; to: string; asOf: string; holidays: ReadonlySet<string> }): Promise<ReconInput> {
  const { from, to } = window;
  const rows = (await db.query<RowRecord>(
    `WITH w AS (SELECT * FROM recon_rows WHERE recon_day BETWEEN $1 AND $2),
          more AS (SELECT r.* FROM recon_rows r WHERE r.type = 'payment' AND r.recon_day NOT BETWEEN $1 AND $2
                     AND r.entity_id IN (SELECT entity_id FROM w WHERE type = 'payment'))
     SELECT entity_id, settlement_id, type, amount_paise, fee_paise, tax_paise, credit_paise, debit_paise, on_hold, settled,
            to_char(recon_day, 'YYYY-MM-DD') AS recon_day, payment_id, order_id, order_receipt,
            note_transaction_id, note_refund_request_id
     FROM (SELECT * FROM w UNION ALL SELECT * FROM more) r ORDER BY recon_day, id`,
    [from, to],
  )).rows.map(toGatewayRow);

  const paymentRows = rows.filter((r) => r.type === 'payment');
  const receipts = [...new Set(paymentRows.map((r) => r.orderReceipt).filter((x): x is string => !!x))];
  const gatewayOrderIds = [...new Set(paymentRows.map((r) => r.gatewayOrderId).filter((x): x is string => !!x))];
  const moneyIn: AppMoneyIn[] = (await db.query<{ kind: 'order' | 'topup'; id: string; gateway_order_id: string | null; amount_paise: number }>(
    `SELECT 'order' AS kind, id, gateway_order_id, customer_share_paise AS amount_paise FROM orders WHERE id = ANY($1) OR gateway_order_id = ANY($2)
     UNION ALL
     SELECT 'topup', id, gateway_order_id, amount_paise FROM wallet_topups WHERE id = ANY($1) OR gateway_order_id = ANY($2)`,
    [receipts, gatewayOrderIds],
  )).rows.map((r) => ({ kind: r.kind, id: r.id, gatewayOrderId: r.gateway_order_id, amountPaise: r.amount_paise }));

  const paymentIds = [...new Set([...paymentRows.map((r) => r.entityId), ...rows.map((r) => r.paymentId).filter((x): x is string => !!x)])];
  const payments = (await db.query(`SELECT ${PAYMENT_COLUMNS} FROM payments WHERE id = ANY($1)`, [paymentIds])).rows.map(toAppPayment);

  const refundRows = rows.filter((r) => r.type === 'refund');
  const refundIds = refundRows.map((r) => r.entityId);
  const refundRequestIds = refundRows.map((r) => r.noteRefundRequestId).filter((x): x is string => !!x);
  const refunds: AppRefund[] = (await db.query<{ id: string; gateway_refund_id: string | null; amount_paise: number }>(
    `SELECT id, gateway_refund_id, amount_paise FROM refunds WHERE gateway_refund_id = ANY($1) OR id = ANY($2)`, [refundIds, refundRequestIds],
  )).rows.map((r) => ({ id: r.id, gatewayRefundId: r.gateway_refund_id, amountPaise: r.amount_paise }));

  const transferRows = rows.filter((r) => r.type === 'transfer');
  const transferIds = transferRows.map((r) => r.entityId);
  const noteIds = transferRows.map((r) => r.noteTransactionId).filter((x): x is string => !!x);
  const sourceOrderIds = payments.filter((p) => transferRows.some((t) => t.paymentId === p.id)).map((p) => p.orderId).filter((x): x is string => !!x);
  const transfers: AppTransfer[] = (await db.query<{
    kind: 'payout' | 'split'; id: string; order_id: string; provider_transfer_id: string | null; amount_paise: number; status: string;
    ledger_state: 'in_flight' | 'paid' | null; ledger_transfer_id: string | null;
  }>(
    `SELECT 'payout' AS kind, p.id::text AS id, p.subject_id AS order_id, p.provider_transfer_id, p.amount_paise, p.status,
            d.state AS ledger_state, d.provider_ref AS ledger_transfer_id
       FROM payouts p LEFT JOIN LATERAL (${payoutDischargeSql('p.id')}) d ON true
      WHERE p.provider_transfer_id = ANY($1) OR p.id::text = ANY($2)
     UNION ALL
     SELECT 'split', s.order_id, s.order_id, s.provider_transfer_id, s.amount_paise, s.status, d.state, d.provider_ref
       FROM split_transfers s LEFT JOIN LATERAL (${splitDischargeSql('s.order_id')}) d ON true
      WHERE s.provider_transfer_id = ANY($1) OR s.order_id = ANY($3)`,
    [transferIds, noteIds, sourceOrderIds],
  )).rows.map((r) => ({
    kind: r.kind, id: r.id, orderId: r.order_id, providerTransferId: r.provider_transfer_id, amountPaise: r.amount_paise, status: r.status,
    ledger: r.ledger_state === null ? null : { state: r.ledger_state, transferId: r.ledger_transfer_id },
  }));

  const reversalIds = rows.filter((r) => r.type === 'reversal').map((r) => r.entityId);
  const reversals: AppReversal[] = (await db.query<{ id: string; transfer_id: string; order_id: string; amount_paise: number; transfer_amount_paise: number }>(
    `SELECT id, transfer_id, order_id, amount_paise, transfer_amount_paise FROM transfer_reversals WHERE id = ANY($1) OR transfer_id = ANY($2) ORDER BY transfer_id, id`,
    [reversalIds, transferIds],
  )).rows.map((r) => ({ id: r.id, transferId: r.transfer_id, orderId: r.order_id, amountPaise: r.amount_paise, transferAmountPaise: r.transfer_amount_paise }));

  const settlementSelect = `SELECT id, amount_paise, utr_normalised, to_char(settled_day, 'YYYY-MM-DD') AS settled_day FROM settlements`;
  const toSettlement = (r: { id: string; amount_paise: number; utr_normalised: string | null; settled_day: string }): SettlementRecord =>
    ({ id: r.id, amountPaise: r.amount_paise, utrNormalised: r.utr_normalised, settledDay: r.settled_day });
  const settlements = (await db.query(`${settlementSelect} WHERE settled_day BETWEEN $1 AND $2`, [from, to])).rows.map(toSettlement);
  const settlementUtrs = settlements.map((s) => s.utrNormalised).filter((x): x is string => !!x);
  const bankLines: BankLine[] = (await db.query<{ id: number; utr_normalised: string; amount_paise: number; value_date: string }>(
    `SELECT id, utr_normalised, amount_paise, to_char(value_date, 'YYYY-MM-DD') AS value_date FROM bank_statement_lines
     WHERE value_date BETWEEN $1 AND $2 OR utr_normalised = ANY($3) ORDER BY id`,
    [from, to, settlementUtrs],
  )).rows.map((r) => ({ id: r.id, utrNormalised: r.utr_normalised, amountPaise: r.amount_paise, valueDate: r.value_date }));
  const settlementsForBankLines = (await db.query(`${settlementSelect} WHERE utr_normalised = ANY($1)`, [[...new Set(bankLines.map((l) => l.utrNormalised))]])).rows.map(toSettlement);

  const captures = (await db.query(
    `SELECT ${PAYMENT_COLUMNS} FROM payments WHERE status IN ('captured', 'refunded') AND captured_at >= $1 AND captured_at < $2`,
    [istDayBounds(addDays(from, -CAPTURE_LOOKBACK_DAYS)).start, istDayBounds(to).end],
  )).rows.map(toAppPayment);
  const states = (await db.query<{ entity_id: string; settled: boolean; held: boolean }>(
    `SELECT entity_id, bool_or(settled AND NOT on_hold) AS settled, bool_or(on_hold) AS held FROM recon_rows
     WHERE type = 'payment' AND entity_id = ANY($1) GROUP BY entity_id`,
    [captures.map((c) => c.id)],
  )).rows;

  // What we owe for the window's days: refunds that ended refused or failed, splits paid those days
  // that are not processed yet (judged against their due date) or processed after being owed offline.
  const { start, end } = { start: istDayBounds(from).start, end: istDayBounds(to).end };
  const owed: AppObligation[] = (await db.query<{ kind: 'refund' | 'split'; id: string; order_id: string | null; payment_id: string | null; amount_paise: number; status: string; at: Date; code: string | null; after_final: boolean }>(
    `SELECT 'refund' AS kind, id, order_id, payment_id, amount_paise, status, COALESCE(rejected_at, updated_at) AS at, last_code AS code, false AS after_final
       FROM refunds WHERE status IN ('rejected', 'failed') AND COALESCE(rejected_at, updated_at) >= $1 AND COALESCE(rejected_at, updated_at) < $2
     UNION ALL
     SELECT 'split', s.order_id, s.order_id, o.paid_payment_id, s.amount_paise, s.status, o.paid_at, s.last_code, s.processed_after_final
       FROM split_transfers s JOIN orders o ON o.id = s.order_id
      WHERE (s.status = 'expected' OR s.processed_after_final) AND o.paid_at >= $1 AND o.paid_at < $2`,
    [start, end],
  )).rows.map((r) => ({ kind: r.kind, id: r.id, orderId: r.order_id, paymentId: r.payment_id, amountPaise: r.amount_paise, status: r.status, day: istDateOf(r.at), code: r.code, processedAfterFinal: r.after_final }));

  return {
    ...window, rows, moneyIn, payments, refunds, transfers, reversals, settlements, bankLines, settlementsForBankLines, captures, owed,
    settledPaymentIds: new Set(states.filter((s) => s.settled).map((s) => s.entity_id)),
    heldPaymentIds: new Set(states.filter((s) => s.held && !s.settled).map((s) => s.entity_id)),
  };
}
