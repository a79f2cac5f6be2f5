/** The SQL matcher (matchInDatabase.ts) against its specification, the pure engine (reconcile.ts,
 * pinned by test/unit/recon.reconcile.test.ts): random worlds (seeded, so a failure names its seed)
 * of orders, top-ups, payments, refunds, payouts, splits, gateway rows over and around the window,
 * settlements and bank lines are written to PostgreSQL; the engine judges what loadReconInput loads
 * and the SQL judges the tables, and both must find the same exceptions, field for field, and the
 * same matched count. */
import type { Db } from '../../src/db/pool';
import { addDays, istDayBounds } from '../../src/domain/calendar';
import { matchWindowInDatabase } from '../../src/recon/matchInDatabase';
import type { ExceptionDraft } from '../../src/recon/model';
import { reconcile } from '../../src/recon/reconcile';
import { loadReconInput } from '../../src/recon/inputLoader';
import { createFoundExceptionsTable } from '../../src/recon/repository';
import { isolatedPool } from '../support/db';

let db: Db;
beforeAll(async () => {
  ({ db } = await isolatedPool());
  await db.query(`INSERT INTO employers (id, name) VALUES ('emp-1', 'Acme')`);
  await db.query(`INSERT INTO vendors (id, name) VALUES ('ven-1', 'Dosa Point')`);
  await db.query(`INSERT INTO wallets (owner_kind, owner_id) VALUES ('employer', 'emp-1')`);
});
afterAll(async () => {
  await db.end();
});

/** mulberry32: small, seeded, good enough to pick cases. */
function random(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));
  const chance = (p: number) => next() < p;
  const pick = <T>(xs: readonly T[]): T => xs[int(0, xs.length - 1)]!;
  const hex = (n: number) => Array.from({ length: n }, () => int(0, 15).toString(16)).join('');
  return { int, chance, pick, uuid: () => `${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}` };
}

const FROM = '2026-11-02';
const TO = '2026-11-06';
const DAYS = Array.from({ length: 16 }, (_, i) => addDays('2026-10-27', i)); // 10-27 … 11-11
const at = (day: string, minutes: number) => new Date(istDayBounds(day).start.getTime() + minutes * 60_000).toISOString();

interface World { asOf: string; holidays: Set<string>; statements: Array<[string, unknown[]]> }

/** One random world, as the INSERTs that make it. */
function world(seed: number): World {
  const r = random(seed);
  const statements: Array<[string, unknown[]]> = [];
  const sql = (text: string, ...params: unknown[]) => statements.push([text, params]);
  const order = (id: string, gatewayOrderId: string | null, amount: number, paid?: { at: string; paymentId: string | null }) =>
    sql(`INSERT INTO orders (id, client_reference, employer_id, vendor_id, employee_id, total_paise, subsidy_paise, customer_share_paise, commission_bps,
           commission_paise, vendor_net_paise, payment_method, status, gateway_order_id, paid_at, paid_payment_id)
         VALUES ($1, $1, 'emp-1', 'ven-1', 'e-1', $2, 0, $2, 0, 0, $2, 'online', $3, $4, $5, $6)`,
    id, amount, paid ? 'paid' : 'pending', gatewayOrderId, paid?.at ?? null, paid?.paymentId ?? null);
  const settlements = Array.from({ length: r.int(1, 4) }, (_, i) => ({ id: `setl_${i}`, day: r.pick(DAYS.slice(3, 13)), total: 0 }));
  const rows: Array<Record<string, unknown>> = [];
  const row = (fields: Record<string, unknown>) => {
    const s = fields.settled === false ? null : 'settlement_id' in fields ? settlements.find((x) => x.id === fields.settlement_id) ?? null : r.pick(settlements);
    const day = s && r.chance(0.85) ? s.day : r.pick(DAYS);
    const full = { settlement_id: s?.id ?? null, on_hold: false, settled: s !== null, recon_day: day, payment_id: null, order_id: null, order_receipt: null,
      note_transaction_id: null, note_refund_request_id: null, fee_paise: 0, tax_paise: 0, credit_paise: 0, debit_paise: 0, ...fields };
    if (full.settlement_id === null && fields.settled !== false) full.settled = false;
    if (s && full.settled) s.total += Number(full.credit_paise) - Number(full.debit_paise);
    rows.push(full);
  };

  const paymentIds: string[] = [];
  for (let i = 0, n = r.int(2, 14); i < n; i++) {
    const id = `pay_${i}`;
    const amount = r.pick([10_000, 25_000, 40_000]);
    const fee = amount / 50;
    const tax = Math.round((fee * 18) / 118);
    const gatewayOrderId = `order_${i}`;
    const side = r.pick(['order', 'order', 'order', 'topup', 'none'] as const);
    const ours = side === 'order' ? `ord-${i}` : side === 'topup' ? `top-${i}` : null;
    if (side === 'order') order(ours!, r.chance(0.8) ? gatewayOrderId : null, amount);
    if (side === 'topup') sql(`INSERT INTO wallet_topups (id, owner_kind, owner_id, amount_paise, gateway_order_id) VALUES ($1, 'employer', 'emp-1', $2, $3)`, ours, amount, r.chance(0.8) ? gatewayOrderId : null);
    const captureDay = r.pick(DAYS.slice(0, 13));
    if (r.chance(0.8)) {
      sql(`INSERT INTO payments (id, gateway_order_id, order_id, amount_paise, status, fee_paise, tax_paise, captured_at, raw) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, '{}')`,
        id, gatewayOrderId, side === 'order' && r.chance(0.7) ? ours : null, r.chance(0.85) ? amount : amount - 500, r.pick(['captured', 'captured', 'refunded', 'authorized']),
        r.chance(0.15) ? null : r.chance(0.85) ? fee : fee + 1, r.chance(0.15) ? null : r.chance(0.9) ? tax : tax - 1, r.chance(0.9) ? at(captureDay, r.pick([5, 600, 1435])) : null);
      paymentIds.push(id);
    }
    const receipt = ours && r.chance(0.6) ? ours : null;
    const common = { entity_id: id, type: 'payment', amount_paise: amount, fee_paise: fee, tax_paise: tax, order_id: r.chance(0.9) ? gatewayOrderId : null, order_receipt: receipt };
    const shape = r.pick(['whole', 'whole', 'whole', 'parts', 'held', 'held-then-settled', 'none'] as const);
    if (shape === 'whole') row({ ...common, credit_paise: r.chance(0.9) ? amount - fee : amount - fee + 100 });
    if (shape === 'parts') {
      const first = r.int(1, amount - fee - 1);
      row({ ...common, settlement_id: 'setl_0', credit_paise: first });
      if (r.chance(0.7)) row({ ...common, settlement_id: r.chance(0.5) ? 'setl_1' : null, credit_paise: amount - fee - first });
    }
    if (shape === 'held' || shape === 'held-then-settled') row({ ...common, settled: false, on_hold: true, credit_paise: 0 });
    if (shape === 'held-then-settled') row({ ...common, credit_paise: amount - fee });
  }

  for (let i = 0, n = r.int(0, 5); i < n; i++) {
    const id = `rfnd_${i}`;
    const amount = r.pick([1_000, 2_000]);
    const ourId = `rf-${i}`;
    const how = r.pick(['by-id', 'by-note', 'by-note-taken', 'none'] as const);
    if (how !== 'none') {
      sql(`INSERT INTO refunds (id, payment_id, amount_paise, reason, gateway_refund_id, status) VALUES ($1, 'pay_x', $2, $1, $3, 'processed')`,
        ourId, r.chance(0.8) ? amount : amount + 100, how === 'by-id' ? id : how === 'by-note-taken' ? `rfnd_other_${i}` : null);
    }
    row({ entity_id: id, type: 'refund', amount_paise: amount, debit_paise: amount, payment_id: r.pick(['pay_0', null]), note_refund_request_id: how === 'by-id' || r.chance(0.2) ? null : ourId });
  }

  /** What the ledger says pays the order: its net, discharged by the payout's or split's instrument. */
  const discharge = (orderId: string, amount: number, d: { kind: string; instrument: string; providerRef: string | null; state: 'in_flight' | 'paid'; payoutId: string | null }) =>
    sql(`WITH o AS (INSERT INTO ledger_obligations (source, vendor_id, order_id, cause, amount_paise, rail) VALUES ('order:' || $1, 'ven-1', $1, 'order_net', $2, $3) RETURNING id),
          d AS (INSERT INTO ledger_discharges (vendor_id, kind, instrument, provider_ref, amount_paise, state, payout_id) VALUES ('ven-1', $4, $5, $6, $2, $7, $8) RETURNING id)
         INSERT INTO ledger_discharge_items (discharge_id, obligation_id, amount_paise) SELECT d.id, o.id, $2 FROM d, o`,
    orderId, amount, d.kind === 'split' ? 'split' : 'transfer', d.kind, d.instrument, d.providerRef, d.state, d.payoutId);

  for (let i = 0, n = r.int(0, 6); i < n; i++) {
    const id = `trf_${i}`;
    const amount = r.pick([5_000, 8_000]);
    const orderId = `ordt-${i}`;
    const how = r.pick(['payout-by-id', 'payout-by-note', 'split-by-id', 'split-by-payment', 'none'] as const);
    let paymentId: string | null = null;
    let note: string | null = null;
    const ourAmount = r.chance(0.8) ? amount : amount + 100;
    if (how.startsWith('payout')) {
      order(orderId, null, 50_000);
      const payoutId = r.uuid();
      note = how === 'payout-by-note' ? payoutId : r.chance(0.3) ? r.uuid() : null;
      const status = r.pick(['processing', 'accepted', 'settled', 'settled', 'failed', 'review', 'cancelled']);
      const transferId = how === 'payout-by-id' ? id : r.pick([null, null, `trf_other_${i}`]);
      sql(`INSERT INTO payouts (id, order_id, vendor_id, linked_account_id, amount_paise, status, idempotency_key, provider_transfer_id)
           VALUES ($1, $2, 'ven-1', 'acc_x', $3, $4, $5, $6)`,
        payoutId, orderId, ourAmount, status, `k-${i}-key`, transferId);
      // Mostly as the rails write it (in flight, then paid by the transfer it names; none once it paid
      // nothing), sometimes not (a drift, an external transfer): recon judges by the ledger either way.
      const live = ['processing', 'accepted', 'settled'].includes(status) ? r.chance(0.85) : r.chance(0.15);
      const ledgerRef = r.chance(0.8) ? transferId : r.pick([null, id]);
      if (live && r.chance(0.1)) discharge(orderId, ourAmount, { kind: 'external_transfer', instrument: `payout:${payoutId}`, providerRef: 'NEFT-1', state: 'paid', payoutId });
      else if (live) discharge(orderId, ourAmount, { kind: 'order_transfer', instrument: ledgerRef ?? `key:k-${i}-key`, providerRef: ledgerRef, state: status === 'settled' && ledgerRef ? 'paid' : 'in_flight', payoutId });
    } else if (how.startsWith('split')) {
      paymentId = `pays_${i}`;
      order(orderId, `order_s${i}`, 50_000, { at: at(r.pick(DAYS.slice(4, 10)), 600), paymentId });
      sql(`INSERT INTO payments (id, gateway_order_id, order_id, amount_paise, status, raw) VALUES ($1, $2, $3, 50000, 'captured', '{}')`, paymentId, `order_s${i}`, orderId);
      const status = r.pick(['expected', 'processed', 'failed']);
      const transferId = how === 'split-by-id' ? id : null;
      sql(`INSERT INTO split_transfers (order_id, vendor_id, linked_account_id, amount_paise, gateway_order_id, provider_transfer_id, status, processed_after_final)
           VALUES ($1, 'ven-1', 'acc_x', $2, $3, $4, $5, $6)`,
        orderId, ourAmount, `order_s${i}`, transferId, status, r.chance(0.2));
      if (status === 'failed' ? r.chance(0.15) : r.chance(0.85)) {
        discharge(orderId, ourAmount, { kind: 'split', instrument: transferId ?? `split:${orderId}`, providerRef: transferId, state: status === 'expected' ? 'in_flight' : 'paid', payoutId: null });
      }
    }
    row({ entity_id: id, type: 'transfer', amount_paise: amount, fee_paise: 10, tax_paise: 2, debit_paise: amount + 10, payment_id: paymentId, note_transaction_id: note });
  }

  // Reversals: of a transfer of ours (its transfer row matched on the reversal we recorded), recorded
  // with its amount or another, or never recorded (reversal-not-in-app).
  for (let i = 0, n = r.int(0, 4); i < n; i++) {
    const transferId = `trf_r${i}`;
    const reversalId = `rvrsl_${i}`;
    const amount = r.pick([2_000, 8_000]);
    const how = r.pick(['known', 'known', 'other-amount', 'unknown'] as const);
    const orderId = `ordr-${i}`;
    if (how !== 'unknown') {
      order(orderId, null, 50_000);
      const payoutId = r.uuid();
      sql(`INSERT INTO payouts (id, order_id, vendor_id, linked_account_id, amount_paise, status, idempotency_key, provider_transfer_id)
           VALUES ($1, $2, 'ven-1', 'acc_x', 8000, $3, $4, $5)`, payoutId, orderId, r.pick(['parked', 'settled', 'cancelled']), `kr-${i}-key`, r.chance(0.5) ? transferId : null);
      sql(`INSERT INTO transfer_reversals (id, transfer_id, payout_id, order_id, vendor_id, amount_paise, transfer_amount_paise, made_by, owed_paise, reversed_at, evidence)
           VALUES ($1, $2, $3, $4, 'ven-1', $5, 8000, 'outside', $5, now(), '{}')`, reversalId, transferId, payoutId, orderId, how === 'known' ? amount : amount === 8_000 ? 2_000 : 8_000);
    }
    if (r.chance(0.7)) row({ entity_id: transferId, type: 'transfer', amount_paise: r.chance(0.85) ? 8_000 : 7_900, fee_paise: 10, tax_paise: 2, debit_paise: 8_010 });
    row({ entity_id: reversalId, type: 'reversal', amount_paise: amount, credit_paise: amount, payment_id: r.pick([null, 'pay_0']) });
  }

  for (let i = 0, n = r.int(0, 2); i < n; i++) {
    const credit = r.chance(0.5);
    row({ entity_id: `adj_${i}`, type: 'adjustment', amount_paise: 700, credit_paise: credit ? 700 : 0, debit_paise: credit ? 0 : 700 });
  }

  for (let n = 0, count = r.int(0, 3); n < count; n++) {
    const status = r.pick(['rejected', 'failed', 'processed'] as const);
    const when = at(r.pick(DAYS), r.pick([5, 900, 1430]));
    sql(`INSERT INTO refunds (id, payment_id, order_id, amount_paise, reason, status, rejected_at, updated_at, last_code) VALUES ($1, 'pay_y', NULL, 3000, $1, $2, $3, $4, $5)`,
      `rfo-${n}`, status, status === 'rejected' ? when : null, when, r.pick([null, 'BAD_REQUEST_ERROR']));
  }

  for (const s of settlements) {
    const amount = r.chance(0.85) ? s.total : s.total + 300;
    const utr = r.chance(0.85) ? `UTR${s.id.toUpperCase()}` : null;
    if (amount > 0 || r.chance(0.5)) {
      sql(`INSERT INTO settlements (id, amount_paise, status, utr, utr_normalised, settled_day, created_at, raw) VALUES ($1, $2, 'processed', $3, $3, $4, now(), '{}')`, s.id, amount, utr, s.day);
    }
    const line = r.pick(['exact', 'exact', 'other-amount', 'none'] as const);
    if (utr && line !== 'none' && amount > 300) {
      sql(`INSERT INTO bank_statement_lines (import_id, line_no, utr, utr_normalised, amount_paise, value_date) VALUES (1, 1, $1, $1, $2, $3)`,
        utr, line === 'exact' ? amount : amount - 300, r.chance(0.8) ? s.day : addDays(s.day, 1));
    }
  }
  if (r.chance(0.4)) sql(`INSERT INTO bank_statement_lines (import_id, line_no, utr, utr_normalised, amount_paise, value_date) VALUES (1, 2, 'STRAY', 'STRAY', 999, $1)`, r.pick(DAYS));

  for (const row of rows) {
    sql(`INSERT INTO recon_rows (entity_id, settlement_id, type, amount_paise, fee_paise, tax_paise, credit_paise, debit_paise, on_hold, settled, recon_day,
           created_at, payment_id, order_id, order_receipt, note_transaction_id, note_refund_request_id, raw)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, now(), $12, $13, $14, $15, $16, '{}') ON CONFLICT DO NOTHING`,
      row.entity_id, row.settlement_id, row.type, row.amount_paise, row.fee_paise, row.tax_paise, row.credit_paise, row.debit_paise, row.on_hold, row.settled,
      row.recon_day, row.payment_id, row.order_id, row.order_receipt, row.note_transaction_id, row.note_refund_request_id);
  }
  const holidays = new Set(r.chance(0.3) ? [r.pick(DAYS)] : []);
  return { asOf: r.pick(DAYS.slice(5)), holidays, statements };
}

const comparable = (d: Omit<ExceptionDraft, 'severity' | 'nextAction'>) => ({
  key: d.key, reason: d.reason, class: d.class, day: d.day, entityId: d.entityId, settlementId: d.settlementId, orderId: d.orderId,
  bankLineId: d.bankLineId, expectedPaise: d.expectedPaise, actualPaise: d.actualPaise, details: d.details,
});
const byKey = (a: { key: string }, b: { key: string }) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

async function judgeBothWays(w: World) {
  const client = await db.connect();
  try {
    await client.query('BEGIN');
    await client.query(`INSERT INTO bank_statement_imports (id, file_sha256, line_count, lines_added, imported_by) VALUES (1, 'x', 0, 0, 'test')`);
    for (const [text, params] of w.statements) await client.query(text, params);
    const window = { from: FROM, to: TO, asOf: w.asOf, holidays: w.holidays };
    // Both read the uncommitted world through this one connection; the loader only needs query().
    const asDb = { query: client.query.bind(client) } as unknown as Db;
    const spec = reconcile(await loadReconInput(asDb, window));
    await createFoundExceptionsTable(client);
    const sql = await matchWindowInDatabase(client, window);
    const found = (await client.query(
      `SELECT key, reason, class, to_char(day, 'YYYY-MM-DD') AS day, entity_id, settlement_id, order_id, bank_line_id, expected_paise, actual_paise, details FROM recon_found`,
    )).rows.map((f) => comparable({ key: f.key, reason: f.reason, class: f.class, day: f.day, entityId: f.entity_id, settlementId: f.settlement_id, orderId: f.order_id,
      bankLineId: f.bank_line_id, expectedPaise: f.expected_paise, actualPaise: f.actual_paise, details: f.details }));
    return { spec: { exceptions: spec.exceptions.map(comparable).sort(byKey), matched: spec.matched }, sql: { exceptions: found.sort(byKey), matched: sql.matched } };
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
}

const SEEDS = Array.from({ length: 120 }, (_, i) => 1000 + i);

test.each(SEEDS)('when the world of seed %i is judged by the engine and by SQL, then both find the same exceptions and matches', async (seed) => {
  const outcome = await judgeBothWays(world(seed));
  expect(outcome.sql).toEqual(outcome.spec);
});

test('when the worlds are judged, then together they reach every reason the run finds', async () => {
  const reasons = new Set<string>();
  for (const seed of SEEDS) for (const e of (await judgeBothWays(world(seed))).spec.exceptions) reasons.add(e.reason);
  expect([...reasons].sort()).toEqual([
    'adjustment', 'amount-mismatch', 'captured-not-settled', 'fee-mismatch', 'on-hold', 'partially-settled', 'refund-failed', 'refund-not-in-app', 'refund-rejected',
    'reversal-not-in-app', 'settled-not-in-app', 'settlement-sum-mismatch', 'settlement-without-bank-credit', 'split-not-processed', 'split-paid-after-owed-offline',
    'transfer-not-in-app', 'unmatched-bank-credit',
  ]);
});
