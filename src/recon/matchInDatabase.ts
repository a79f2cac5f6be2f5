/** Matching in the database: the rules of the pure engine (`reconcile.ts`, the specification the unit
 * tests pin) as set-based SQL, so a window of a million gateway rows is matched without loading it
 * into memory. Each statement below names the function of reconcile.ts it implements;
 * test/integration/recon.matchInDatabase.test.ts runs both on the same seeded random worlds (every
 * reason code among them) and requires the same exceptions, field for field, and the same matched count.
 *
 * What stays in TypeScript is the domain knowledge that is not matching: severities and next actions
 * (reasons.ts, handed over as a catalogue when the exceptions are saved) and the working-day calendar
 * (domain/calendar.ts, handed over as a table of due dates for the days the window judges). Exception
 * keys are `reason|reference`, as `draft()` builds them. Amounts are bigint paise throughout. */
import type { Tx } from '../db/pool';
import { addDays, datesBetween, istDayBounds, settlementDueDate } from '../domain/calendar';
import { bankCreditDueDate } from './reconcile';
import { CAPTURE_LOOKBACK_DAYS, type FoundExceptionsWindow } from './repository';
import { offlineDebitsSql } from './offlineDebits';
import { payoutDischargeSql, splitDischargeSql } from './ledgerInstruments';

export interface MatchWindow extends FoundExceptionsWindow { asOf: string; holidays: ReadonlySet<string> }

/** Due dates of every day a rule of the window can look up (captures reach back CAPTURE_LOOKBACK_DAYS). */
function calendarRows(window: MatchWindow): Array<{ day: string; settlement_due: string; bank_credit_due: string }> {
  return datesBetween(addDays(window.from, -CAPTURE_LOOKBACK_DAYS), window.to).map((day) => ({
    day, settlement_due: settlementDueDate(day, window.holidays), bank_credit_due: bankCreditDueDate(day, window.holidays),
  }));
}

/** IST date of a timestamptz (IST has no daylight saving), as istDateOf. */
const istDay = (column: string) => `((${column} AT TIME ZONE 'UTC') + interval '5 hours 30 minutes')::date`;

const FOUND_COLUMNS = 'key, reason, class, day, entity_id, settlement_id, order_id, bank_line_id, expected_paise, actual_paise, details';
/** A later statement's finding of a key replaces an earlier one's, as the engine's last-wins de-duplication. */
const LATER_WINS = `ON CONFLICT (key) DO UPDATE SET reason = EXCLUDED.reason, class = EXCLUDED.class, day = EXCLUDED.day, entity_id = EXCLUDED.entity_id,
  settlement_id = EXCLUDED.settlement_id, order_id = EXCLUDED.order_id, bank_line_id = EXCLUDED.bank_line_id, expected_paise = EXCLUDED.expected_paise,
  actual_paise = EXCLUDED.actual_paise, details = EXCLUDED.details`;

/** The rows the engine reads (loadReconInput's `rows`): the window's, plus every other stored payment
 * row of the window's payment entities (a payment settled in parts), narrowed to what matching reads. */
const MATCH_ROWS_TABLE = `
  CREATE TEMPORARY TABLE recon_match_rows (id bigint NOT NULL, entity_id text NOT NULL, settlement_id text, type text NOT NULL,
    amount_paise bigint NOT NULL, fee_paise bigint NOT NULL, tax_paise bigint NOT NULL, credit_paise bigint NOT NULL, debit_paise bigint NOT NULL,
    on_hold boolean NOT NULL, settled boolean NOT NULL, recon_day date NOT NULL, payment_id text, order_id text, order_receipt text,
    note_transaction_id text, note_refund_request_id text, in_window boolean NOT NULL) ON COMMIT DROP`;
const WINDOW_ROWS = `
  INSERT INTO recon_match_rows
  SELECT id, entity_id, settlement_id, type, amount_paise, fee_paise, tax_paise, credit_paise, debit_paise, on_hold, settled, recon_day,
         payment_id, order_id, order_receipt, note_transaction_id, note_refund_request_id, true
  FROM recon_rows WHERE recon_day BETWEEN $1 AND $2`;
const OTHER_PARTS = `
  INSERT INTO recon_match_rows
  SELECT r.id, r.entity_id, r.settlement_id, r.type, r.amount_paise, r.fee_paise, r.tax_paise, r.credit_paise, r.debit_paise, r.on_hold, r.settled,
         r.recon_day, r.payment_id, r.order_id, r.order_receipt, r.note_transaction_id, r.note_refund_request_id, false
  FROM recon_rows r
  WHERE r.type = 'payment' AND (r.recon_day < $1 OR r.recon_day > $2)
    AND r.entity_id IN (SELECT entity_id FROM recon_match_rows WHERE type = 'payment')`;

/** judgePayment, once per payment entity with a row in the window. "First" is the earliest row
 * reported (day, then storage order). Returns the window rows matched (those of clean payments). */
const PAYMENTS = `
  WITH g AS (
    -- one sort serves both: the partition's totals, and its first row (DISTINCT ON)
    SELECT DISTINCT ON (entity_id) entity_id, recon_day AS day, settlement_id, amount_paise AS amount, fee_paise AS fee, tax_paise AS tax,
      order_receipt, order_id AS gateway_order_id,
      min(recon_day) FILTER (WHERE on_hold OR NOT settled) OVER entity AS held_day,
      count(*) FILTER (WHERE settled AND NOT on_hold) OVER entity AS settled_parts,
      COALESCE(sum(credit_paise) FILTER (WHERE settled AND NOT on_hold) OVER entity, 0) AS credited
    FROM recon_match_rows WHERE type = 'payment'
    WINDOW entity AS (PARTITION BY entity_id)
    ORDER BY entity_id, recon_day, id
  ),
  judged AS (
    SELECT g.*, p.id AS payment_id, p.amount_paise AS our_amount, p.fee_paise AS our_fee, p.tax_paise AS our_tax,
      -- our receipt first (a top-up id over an order id, as the engine's index), then the gateway order id
      CASE WHEN rt.id IS NOT NULL THEN 'topup' WHEN ro.id IS NOT NULL THEN 'order' WHEN gt.id IS NOT NULL THEN 'topup' WHEN go.id IS NOT NULL THEN 'order' END AS target_kind,
      COALESCE(rt.id, ro.id, gt.id, go.id) AS target_id,
      CASE WHEN rt.id IS NOT NULL OR (ro.id IS NULL AND gt.id IS NOT NULL) THEN p.order_id ELSE COALESCE(ro.id, go.id, p.order_id) END AS order_id,
      g.amount - g.fee AS net
    FROM g
    LEFT JOIN payments p ON p.id = g.entity_id
    LEFT JOIN wallet_topups rt ON rt.id = g.order_receipt
    LEFT JOIN orders ro ON ro.id = g.order_receipt
    LEFT JOIN wallet_topups gt ON gt.gateway_order_id = g.gateway_order_id AND rt.id IS NULL AND ro.id IS NULL
    LEFT JOIN orders go ON go.gateway_order_id = g.gateway_order_id AND rt.id IS NULL AND ro.id IS NULL AND gt.id IS NULL
  ),
  flagged AS (
    SELECT j.*,
      j.payment_id IS NOT NULL AND j.amount <> j.our_amount AS amount_differs,
      j.payment_id IS NOT NULL AND ((j.our_fee IS NOT NULL AND j.our_fee <> j.fee) OR (j.our_tax IS NOT NULL AND j.our_tax <> j.tax)) AS fee_differs
    FROM judged j
  ),
  found AS (
    INSERT INTO recon_found (${FOUND_COLUMNS})
    SELECT d.key, d.reason, d.class, d.day, d.entity_id, d.settlement_id, d.order_id, d.bank_line_id, d.expected_paise, d.actual_paise, d.details
    FROM flagged f CROSS JOIN LATERAL (VALUES
      (f.held_day IS NOT NULL AND f.settled_parts = 0, 'on-hold|' || f.entity_id, 'on-hold', 'expected', f.held_day, f.entity_id, NULL::text, NULL::text, NULL::bigint, NULL::bigint, f.amount, '{}'::jsonb),
      (f.settled_parts > 0 AND f.target_id IS NULL AND f.payment_id IS NULL, 'settled-not-in-app|' || f.entity_id, 'settled-not-in-app', 'unmatched', f.day, f.entity_id, f.settlement_id, NULL, NULL, NULL, f.amount,
        jsonb_build_object('orderReceipt', f.order_receipt, 'gatewayOrderId', f.gateway_order_id)),
      (f.settled_parts > 0 AND f.target_id IS NOT NULL AND f.payment_id IS NULL, 'settled-not-in-app|' || f.entity_id, 'settled-not-in-app', 'unmatched', f.day, f.entity_id, f.settlement_id,
        CASE WHEN f.target_kind = 'order' THEN f.target_id END, NULL, NULL, f.amount,
        CASE WHEN f.target_kind IS NOT NULL THEN jsonb_build_object(f.target_kind, f.target_id, 'note', 'no captured payment recorded') END),
      (f.settled_parts > 0 AND f.amount_differs, 'amount-mismatch|' || f.entity_id, 'amount-mismatch', 'mismatched', f.day, f.entity_id, f.settlement_id, f.order_id, NULL, f.our_amount, f.amount, '{}'),
      (f.settled_parts > 0 AND f.fee_differs, 'fee-mismatch|' || f.entity_id, 'fee-mismatch', 'mismatched', f.day, f.entity_id, f.settlement_id, f.order_id, NULL, f.our_fee, f.fee,
        jsonb_build_object('expectedTaxPaise', f.our_tax, 'actualTaxPaise', f.tax)),
      (f.settled_parts > 0 AND f.payment_id IS NOT NULL AND f.credited < f.net, 'partially-settled|' || f.entity_id, 'partially-settled', 'expected', f.day, f.entity_id, f.settlement_id, f.order_id, NULL,
        f.net, f.credited, jsonb_build_object('parts', f.settled_parts)),
      (f.settled_parts > 0 AND f.payment_id IS NOT NULL AND f.credited > f.net, 'amount-mismatch|' || f.entity_id || '|credit', 'amount-mismatch', 'mismatched', f.day, f.entity_id, f.settlement_id, f.order_id, NULL,
        f.net, f.credited, jsonb_build_object('note', 'credited more than amount − fee'))
    ) AS d(applies, key, reason, class, day, entity_id, settlement_id, order_id, bank_line_id, expected_paise, actual_paise, details)
    -- (a data-modifying WITH runs whether or not the statement reads it)
    -- the entities with a finding first, so that a clean million costs no lateral rows
    WHERE ((f.settled_parts = 0 AND f.held_day IS NOT NULL) OR (f.settled_parts > 0 AND (f.payment_id IS NULL OR f.amount_differs OR f.fee_differs OR f.credited <> f.net)))
      AND d.applies
    RETURNING entity_id
  )
  -- every entity that is not clean has a finding: the window rows of the others are matched
  SELECT ((SELECT count(*) FROM recon_match_rows WHERE type = 'payment' AND in_window)
        - (SELECT count(*) FROM recon_match_rows WHERE type = 'payment' AND in_window AND entity_id IN (SELECT entity_id FROM found)))::bigint AS matched`;

/** The engine's loop over the window's refund, transfer, reversal and adjustment rows: a refund by
 * the gateway id, else by our refund id in its notes; a transfer we recorded a reversal of, matched
 * on its own amount; else a transfer by its id (split over payout), else a payout by the id in its
 * notes, else a split not yet given its id via the source payment's order (findTransfer,
 * weConsiderPaidBy); a reversal by Razorpay's reversal id. Returns the rows matched. */
const OTHER_ROWS = `
  WITH refund_rows AS (
    -- A refund made outside the app (the Dashboard) is known once recorded in outside_refunds: what it
    -- meant for the vendor was raised then (refund-outside-app), not again as refund-not-in-app.
    SELECT r.*, COALESCE(byg.id, byr.id, o.id) AS refund_id, COALESCE(byg.amount_paise, byr.amount_paise, o.amount_paise) AS our_amount
    FROM recon_match_rows r
    LEFT JOIN refunds byg ON byg.gateway_refund_id = r.entity_id
    LEFT JOIN refunds byr ON byg.id IS NULL AND byr.id = r.note_refund_request_id AND (byr.gateway_refund_id IS NULL OR byr.gateway_refund_id = r.entity_id)
    LEFT JOIN outside_refunds o ON byg.id IS NULL AND byr.id IS NULL AND o.id = r.entity_id
    WHERE r.type = 'refund' AND r.in_window
  ),
  transfer_rows AS (
    SELECT r.*,
      CASE WHEN rv.transfer_id IS NOT NULL THEN 'reversed' WHEN s.order_id IS NOT NULL THEN 'split' WHEN p.id IS NOT NULL THEN 'payout' WHEN np.id IS NOT NULL THEN 'payout' WHEN ps.order_id IS NOT NULL THEN 'split' END AS kind,
      COALESCE(rv.transfer_id, s.order_id, p.id::text, np.id::text, ps.order_id) AS transfer_id,
      COALESCE(rv.order_id, s.order_id, p.order_id, np.order_id, ps.order_id) AS our_order_id,
      COALESCE(rv.transfer_amount_paise, s.amount_paise, p.amount_paise, np.amount_paise, ps.amount_paise) AS our_amount,
      COALESCE(s.status, p.status, np.status, ps.status) AS our_status,
      COALESCE(s.provider_transfer_id, p.provider_transfer_id, np.provider_transfer_id, ps.provider_transfer_id) AS our_transfer_id,
      COALESCE(pd.state, sd.state) AS ledger_state, COALESCE(pd.provider_ref, sd.provider_ref) AS ledger_transfer_id
    FROM recon_match_rows r
    -- a transfer of ours reversed since: it paid, and each reversal is a row of its own
    LEFT JOIN (SELECT DISTINCT ON (transfer_id) transfer_id, order_id, transfer_amount_paise FROM transfer_reversals ORDER BY transfer_id, id) rv
      ON rv.transfer_id = r.entity_id
    LEFT JOIN split_transfers s ON rv.transfer_id IS NULL AND s.provider_transfer_id = r.entity_id
    LEFT JOIN payouts p ON rv.transfer_id IS NULL AND p.provider_transfer_id = r.entity_id AND s.order_id IS NULL
    -- payouts.id is a uuid; the note is compared as its text (the engine's string key)
    LEFT JOIN payouts np ON rv.transfer_id IS NULL AND s.order_id IS NULL AND p.id IS NULL
      AND np.id = CASE WHEN r.note_transaction_id ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN r.note_transaction_id::uuid END
      AND (np.provider_transfer_id IS NULL OR np.provider_transfer_id = r.entity_id)
    LEFT JOIN payments sp ON rv.transfer_id IS NULL AND s.order_id IS NULL AND p.id IS NULL AND np.id IS NULL AND sp.id = r.payment_id
    LEFT JOIN split_transfers ps ON ps.order_id = sp.order_id AND ps.provider_transfer_id IS NULL
    -- what the ledger says pays by it (ledgerInstruments.ts)
    LEFT JOIN LATERAL (${payoutDischargeSql('COALESCE(p.id, np.id)')}) pd ON true
    LEFT JOIN LATERAL (${splitDischargeSql('COALESCE(s.order_id, ps.order_id)')}) sd ON true
    WHERE r.type = 'transfer' AND r.in_window
  ),
  judged_transfers AS (
    SELECT t.*, CASE WHEN t.kind = 'reversed' THEN true
                     ELSE t.ledger_state IS NOT NULL AND (t.ledger_transfer_id IS NULL OR t.ledger_transfer_id = t.entity_id) END AS paid_by_it
    FROM transfer_rows t
  ),
  reversal_rows AS (
    SELECT r.*, v.id AS reversal_id, v.amount_paise AS our_amount, v.order_id AS our_order_id, v.transfer_id AS our_transfer_id
    FROM recon_match_rows r
    LEFT JOIN transfer_reversals v ON v.id = r.entity_id
    WHERE r.type = 'reversal' AND r.in_window
  ),
  findings AS (
    SELECT r.recon_day AS at_day, r.id AS at_id, d.* FROM refund_rows r CROSS JOIN LATERAL (VALUES
      (r.refund_id IS NULL, 'refund-not-in-app|' || r.entity_id, 'refund-not-in-app', 'unmatched', NULL::text, NULL::bigint, jsonb_build_object('paymentId', r.payment_id)),
      (r.refund_id IS NOT NULL AND r.our_amount <> r.amount_paise, 'amount-mismatch|' || r.entity_id, 'amount-mismatch', 'mismatched', NULL, r.our_amount, jsonb_build_object('refundId', r.refund_id))
    ) AS d(applies, key, reason, class, order_id, expected_paise, details)
    WHERE r.refund_id IS NULL OR r.our_amount <> r.amount_paise
    UNION ALL
    SELECT t.recon_day, t.id, d.* FROM judged_transfers t CROSS JOIN LATERAL (VALUES
      (t.kind IS NULL, 'transfer-not-in-app|' || t.entity_id, 'transfer-not-in-app', 'unmatched', NULL::text, NULL::bigint, jsonb_build_object('sourcePaymentId', t.payment_id)),
      (t.kind IS NOT NULL AND NOT t.paid_by_it, 'transfer-not-in-app|' || t.entity_id, 'transfer-not-in-app', 'unmatched', t.our_order_id, t.our_amount,
        CASE WHEN t.kind IS NOT NULL THEN jsonb_build_object(t.kind, t.transfer_id, 'ourStatus', t.our_status) END),
      (t.kind IS NOT NULL AND t.paid_by_it AND t.our_amount <> t.amount_paise, 'amount-mismatch|' || t.entity_id, 'amount-mismatch', 'mismatched', t.our_order_id, t.our_amount,
        CASE WHEN t.kind IS NOT NULL THEN jsonb_build_object(t.kind, t.transfer_id) END)
    ) AS d(applies, key, reason, class, order_id, expected_paise, details)
    WHERE t.kind IS NULL OR NOT t.paid_by_it OR t.our_amount <> t.amount_paise
    UNION ALL
    SELECT v.recon_day, v.id, d.* FROM reversal_rows v CROSS JOIN LATERAL (VALUES
      (v.reversal_id IS NULL, 'reversal-not-in-app|' || v.entity_id, 'reversal-not-in-app', 'unmatched', NULL::text, NULL::bigint, jsonb_build_object('sourcePaymentId', v.payment_id)),
      (v.reversal_id IS NOT NULL AND v.our_amount <> v.amount_paise, 'amount-mismatch|' || v.entity_id, 'amount-mismatch', 'mismatched', v.our_order_id, v.our_amount,
        jsonb_build_object('transferId', v.our_transfer_id))
    ) AS d(applies, key, reason, class, order_id, expected_paise, details)
    WHERE v.reversal_id IS NULL OR v.our_amount <> v.amount_paise
  ),
  found AS (
    INSERT INTO recon_found (${FOUND_COLUMNS})
    SELECT DISTINCT ON (f.key) f.key, f.reason, f.class, r.recon_day, r.entity_id, r.settlement_id, f.order_id, NULL::bigint, f.expected_paise,
      CASE WHEN r.type = 'adjustment' THEN r.credit_paise - r.debit_paise ELSE r.amount_paise END, f.details
    FROM (
      SELECT at_id, at_day, key, reason, class, order_id, expected_paise, details FROM findings WHERE applies
      UNION ALL
      SELECT id, recon_day, 'adjustment|' || entity_id || '|' || COALESCE(settlement_id, ''), 'adjustment', 'unmatched', NULL, NULL, '{}'::jsonb
      FROM recon_match_rows WHERE type = 'adjustment' AND in_window
    ) f JOIN recon_match_rows r ON r.id = f.at_id
    ORDER BY f.key, f.at_day DESC, f.at_id DESC
    ${LATER_WINS}
  )
  SELECT ((SELECT count(*) FROM refund_rows WHERE refund_id IS NOT NULL AND our_amount = amount_paise)
        + (SELECT count(*) FROM judged_transfers WHERE kind IS NOT NULL AND paid_by_it AND our_amount = amount_paise)
        + (SELECT count(*) FROM reversal_rows WHERE reversal_id IS NOT NULL AND our_amount = amount_paise))::bigint AS matched`;

/** judgeSettlements: a window settlement whose amount is not the sum of its rows (credit − debit). */
const SETTLEMENT_SUMS = `
  INSERT INTO recon_found (${FOUND_COLUMNS})
  SELECT 'settlement-sum-mismatch|' || s.id, 'settlement-sum-mismatch', 'mismatched', s.settled_day, NULL, s.id, NULL, NULL, COALESCE(x.total, 0), s.amount_paise, '{}'
  FROM settlements s
  LEFT JOIN (SELECT settlement_id, sum(credit_paise - debit_paise) AS total FROM recon_match_rows WHERE settlement_id IS NOT NULL AND settled GROUP BY settlement_id) x
    ON x.settlement_id = s.id
  WHERE s.settled_day BETWEEN $1 AND $2 AND COALESCE(x.total, 0) <> s.amount_paise
  ${LATER_WINS}`;

/** judgeBank: every window settlement needs a bank credit with its UTR and amount (a credit with the
 * UTR and another amount is a mismatch, naming the first such line); every credit valued in the
 * window needs a settlement (any day) with its UTR and amount. Returns the settlements matched. */
const BANK = `
  WITH s AS (
    SELECT s.id, s.amount_paise, s.utr_normalised, s.settled_day, cal.bank_credit_due,
      EXISTS (SELECT 1 FROM bank_statement_lines l WHERE l.utr_normalised = s.utr_normalised AND l.amount_paise = s.amount_paise) AS credited,
      (SELECT l FROM bank_statement_lines l WHERE l.utr_normalised = s.utr_normalised ORDER BY l.id LIMIT 1) AS same_utr
    FROM settlements s JOIN recon_calendar cal ON cal.day = s.settled_day
    WHERE s.settled_day BETWEEN $1 AND $2
  ),
  found AS (
    INSERT INTO recon_found (${FOUND_COLUMNS})
    SELECT 'settlement-without-bank-credit|' || s.id, 'settlement-without-bank-credit',
      CASE WHEN (s.same_utr).id IS NOT NULL THEN 'mismatched' WHEN $3 <= s.bank_credit_due THEN 'expected' ELSE 'unmatched' END,
      s.settled_day, NULL, s.id, NULL, (s.same_utr).id, s.amount_paise, (s.same_utr).amount_paise, jsonb_build_object('utr', s.utr_normalised)
    FROM s WHERE NOT s.credited
    UNION ALL
    SELECT 'unmatched-bank-credit|' || l.id, 'unmatched-bank-credit', 'unmatched', l.value_date, NULL, NULL, NULL, l.id, NULL, l.amount_paise,
      jsonb_build_object('utr', l.utr_normalised)
    FROM bank_statement_lines l
    WHERE l.value_date BETWEEN $1 AND $2
      AND NOT EXISTS (SELECT 1 FROM settlements x WHERE x.utr_normalised = l.utr_normalised AND x.amount_paise = l.amount_paise)
    ${LATER_WINS}
  )
  SELECT (SELECT count(*) FROM s WHERE credited)::bigint AS matched`;

/** judgeCaptures: a capture of the window (by capture day or due day) with no settled or held row
 * anywhere in the store; expected until its T+2 due date. $4/$5: the instants captures are read in. */
const CAPTURES = `
  INSERT INTO recon_found (${FOUND_COLUMNS})
  SELECT 'captured-not-settled|' || p.id, 'captured-not-settled', CASE WHEN $3 <= cal.settlement_due THEN 'expected' ELSE 'unmatched' END,
    cal.day, p.id, NULL, p.order_id, NULL, p.amount_paise, NULL,
    jsonb_build_object('captureDay', to_char(cal.day, 'YYYY-MM-DD'), 'dueDay', to_char(cal.settlement_due, 'YYYY-MM-DD'))
  FROM payments p JOIN recon_calendar cal ON cal.day = ${istDay('p.captured_at')}
  WHERE p.status IN ('captured', 'refunded') AND p.captured_at >= $4 AND p.captured_at < $5
    AND (cal.day BETWEEN $1 AND $2 OR cal.settlement_due BETWEEN $1 AND $2)
    -- the window's rows answer for most captures at hash-join cost; the store, by index, for the rest
    AND NOT EXISTS (SELECT 1 FROM recon_match_rows m WHERE m.type = 'payment' AND m.entity_id = p.id AND (m.settled OR m.on_hold))
    AND NOT EXISTS (SELECT 1 FROM recon_rows r WHERE r.type = 'payment' AND r.entity_id = p.id AND (r.settled OR r.on_hold))
  ${LATER_WINS}`;

/** judgeOwed: refunds that ended refused or failed in the window, splits of the window's paid orders
 * not processed past their due date or processed after being owed offline. $1 = asOf, $2/$3: the
 * window's instants. */
const OWED = `
  WITH owed AS (
    SELECT 'refund' AS kind, id, order_id, payment_id, amount_paise, status, ${istDay('COALESCE(rejected_at, updated_at)')} AS day, last_code AS code, false AS after_final
    FROM refunds WHERE status IN ('rejected', 'failed') AND COALESCE(rejected_at, updated_at) >= $2 AND COALESCE(rejected_at, updated_at) < $3
    UNION ALL
    SELECT 'split', s.order_id, s.order_id, o.paid_payment_id, s.amount_paise, s.status, ${istDay('o.paid_at')}, s.last_code, s.processed_after_final
    FROM split_transfers s JOIN orders o ON o.id = s.order_id
    WHERE (s.status = 'expected' OR s.processed_after_final) AND o.paid_at >= $2 AND o.paid_at < $3
  )
  INSERT INTO recon_found (${FOUND_COLUMNS})
  SELECT x.reason || '|' || o.id, x.reason, x.class, o.day, NULL, NULL, o.order_id, NULL, o.amount_paise, NULL,
    jsonb_build_object(o.kind, o.id, 'paymentId', o.payment_id, 'code', o.code, 'ourStatus', o.status)
  FROM owed o JOIN recon_calendar cal ON cal.day = o.day
  CROSS JOIN LATERAL (SELECT CASE
      WHEN o.kind = 'refund' AND o.status = 'rejected' THEN 'refund-rejected'
      WHEN o.kind = 'refund' AND o.status = 'failed' THEN 'refund-failed'
      WHEN o.kind = 'split' AND o.after_final THEN 'split-paid-after-owed-offline'
      WHEN o.kind = 'split' AND o.status = 'expected' AND cal.settlement_due < $1 THEN 'split-not-processed' END AS reason) r
  CROSS JOIN LATERAL (SELECT r.reason, CASE WHEN r.reason = 'split-paid-after-owed-offline' THEN 'mismatched' ELSE 'unmatched' END AS class) x
  WHERE r.reason IS NOT NULL
  ${LATER_WINS}`;

/** `matched` in all; `gatewayRows`: Razorpay's settlement line items matched to our records;
 * `bankCredits`: settlements matched to a bank statement credit by UTR and amount; `bankDebits`:
 * settlement-run lines matched to a bank statement debit. */
export interface MatchedInDatabase { matched: number; gatewayRows: number; bankCredits: number; bankDebits: number; steps: Record<string, number> }

/** `explain`: each statement runs under EXPLAIN ANALYZE and its plan is handed over (profiling; the
 * matched count is then 0). */
export interface MatchOptions { explain?: (step: string, plan: string) => void }

/** Fills `recon_found` (see repository.withFoundExceptions) with every difference of the window, in
 * the engine's order, and counts the gateway rows and settlements matched. `steps` holds each
 * statement's milliseconds (the bench reports them). */
export async function matchWindowInDatabase(tx: Tx, window: MatchWindow, options: MatchOptions = {}): Promise<MatchedInDatabase> {
  const steps: Record<string, number> = {};
  const matchedBy: Record<string, number> = {};
  const run = async (step: string, sql: string, params: unknown[] = []) => {
    const started = performance.now();
    try {
      if (options.explain) {
        const { rows } = await tx.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, params);
        options.explain(step, rows.map((r) => r['QUERY PLAN']).join('\n'));
        return;
      }
      const { rows } = await tx.query<{ matched?: number }>(sql, params);
      matchedBy[step] = (matchedBy[step] ?? 0) + Number(rows[0]?.matched ?? 0);
    } finally {
      steps[step] = (steps[step] ?? 0) + Math.round(performance.now() - started);
    }
  };
  const days = [window.from, window.to];
  const captureBounds = [istDayBounds(addDays(window.from, -CAPTURE_LOOKBACK_DAYS)).start, istDayBounds(window.to).end];
  const windowBounds = [istDayBounds(window.from).start, istDayBounds(window.to).end];

  await tx.query(`CREATE TEMPORARY TABLE recon_calendar (day date PRIMARY KEY, settlement_due date NOT NULL, bank_credit_due date NOT NULL) ON COMMIT DROP`);
  await tx.query(`INSERT INTO recon_calendar SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(day date, settlement_due date, bank_credit_due date)`, [JSON.stringify(calendarRows(window))]);
  // Sorts and hashes of a million rows stay in memory (this transaction only; a bound all the same).
  await tx.query(`SET LOCAL work_mem = '64MB'`);
  await tx.query(MATCH_ROWS_TABLE);
  await run('rows', WINDOW_ROWS, days);
  await run('rows', OTHER_PARTS, days);
  await tx.query('ANALYZE recon_match_rows');
  await run('payments', PAYMENTS);
  await run('refunds, transfers, adjustments', OTHER_ROWS);
  await run('settlement sums', SETTLEMENT_SUMS, days);
  await run('bank', BANK, [...days, window.asOf]);
  await run('captures', CAPTURES, [...days, window.asOf, captureBounds[0], captureBounds[1]]);
  await run('owed', OWED, [window.asOf, windowBounds[0], windowBounds[1]]);
  await run('offline debits', offlineDebitsSql(FOUND_COLUMNS, LATER_WINS), [...days, window.asOf]);
  const count = (step: string) => matchedBy[step] ?? 0;
  const gatewayRows = count('payments') + count('refunds, transfers, adjustments');
  const bankCredits = count('bank'), bankDebits = count('offline debits');
  return { matched: Object.values(matchedBy).reduce((a, b) => a + b, 0), gatewayRows, bankCredits, bankDebits, steps };
}
