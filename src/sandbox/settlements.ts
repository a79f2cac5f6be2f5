/** Settlements, the recon report and the bank statement.
 * A run for an IST `date` settles: captured payments due by then (T+2 working days from capture:
 * src/domain/calendar.ts), and refunds, processed transfers and adjustments dated on or before it
 * (they are deducted from the next settlement). Net = payments − fee (fee includes tax) − refunds
 * − transfers (amount + fee) ± adjustments. A payment on hold is reported as an `on_hold` row and
 * not settled. Debits that would take the settlement to zero or below roll to the next run
 * (Razorpay's documented partial settlement). Settlements are stamped 10:00 IST on the run date.
 * A run with `utrDelayMs` announces its settlement without a UTR (webhook and API answer `utr: null`)
 * (its report rows too) and the UTR appears on GET /settlements/:id once the sandbox clock has passed
 * the settlement time plus that delay; the bank credit carries the UTR from the start.
 * A reversal credits the platform: it is reported as a `reversal` row (credit = its amount) in the
 * first run on or after its day once its transfer has settled (a reversed transfer, wholly or in
 * part, settles as a processed one does: it debited the balance when processed). The reference
 * lists no reversal row: its shape is ours. */
import { istDateOf, istDayBounds, settlementDueDate } from '../domain/calendar';
import type { SandboxContext } from './context';
import type { PaymentEntity, RefundEntity, ReversalEntity, SettlementEntity, TransferEntity } from './entities';
import { badRequest, idNotFound } from './errors';
import { newId, randomAlphanumeric } from './ids';
import { TrackedSet } from './tracked';

export type ReconRowJson = Record<string, unknown> & { entity_id: string };

export interface BankLine {
  utr: string;
  amount: number;
  valueDate: string;
  narration: string;
}

/** Settlement output kept beside the state: recon rows by IST report date, and bank credits. Rows
 * and lines are only ever appended (the state file writes the new ones). */
export class SettlementBook {
  readonly rowsByDate = new Map<string, ReconRowJson[]>();
  bankLines: BankLine[] = [];
  /** payment ids already reported on hold for a date (reported once per run date). */
  readonly reportedOnHold = new TrackedSet<string>();

  reset(): void {
    this.rowsByDate.clear();
    this.bankLines = [];
    this.reportedOnHold.clear();
  }

  addRow(date: string, row: ReconRowJson): void {
    const rows = this.rowsByDate.get(date) ?? [];
    rows.push(row);
    this.rowsByDate.set(date, rows);
  }
}

const IST_10AM_MS = 10 * 60 * 60 * 1000;
const toSec = (ms: number): number => Math.floor(ms / 1000);

function paymentContext(ctx: SandboxContext, payment: PaymentEntity | undefined): Record<string, unknown> {
  const order = payment?.order_id ? ctx.state.orders.get(payment.order_id) : undefined;
  const card = payment?.card as { network?: string; issuer?: string | null; type?: string } | null | undefined;
  return {
    order_id: payment?.order_id ?? null,
    order_receipt: order?.receipt ?? null,
    method: payment?.method ?? null,
    card_network: card?.network ?? null,
    card_issuer: card?.issuer ?? null,
    card_type: card?.type ?? null,
  };
}

/** The reference's field order (§5.2); adjustments simply lack credit_type. */
const RECON_KEYS = [
  'entity_id', 'type', 'debit', 'credit', 'amount', 'currency', 'fee', 'tax', 'on_hold', 'settled', 'created_at', 'settled_at',
  'settlement_id', 'posted_at', 'credit_type', 'description', 'notes', 'payment_id', 'settlement_utr', 'order_id', 'order_receipt',
  'method', 'card_network', 'card_issuer', 'card_type', 'dispute_id',
];
function ordered(row: Record<string, unknown>): ReconRowJson {
  return Object.fromEntries(RECON_KEYS.filter((k) => k in row).map((k) => [k, row[k]])) as ReconRowJson;
}

function baseRow(entityId: string, type: string, s: { id: string | null; at: number | null; utr: string | null }, onHold: boolean): Record<string, unknown> {
  return { entity_id: entityId, type, settled: s.id !== null, settled_at: s.at, settlement_id: s.id, posted_at: null, on_hold: onHold, settlement_utr: s.utr, dispute_id: null };
}

function paymentRow(ctx: SandboxContext, p: PaymentEntity, s: { id: string | null; at: number | null; utr: string | null }, onHold: boolean): ReconRowJson {
  const fee = p.fee ?? 0;
  return ordered({
    ...baseRow(p.id, 'payment', s, onHold), debit: 0, credit: p.amount - fee, amount: p.amount, currency: p.currency, fee, tax: p.tax ?? 0,
    created_at: p.created_at, credit_type: 'default', description: p.description, notes: JSON.stringify(p.notes), payment_id: null,
    ...paymentContext(ctx, p),
  });
}

function refundRow(ctx: SandboxContext, r: RefundEntity, s: { id: string; at: number; utr: string | null }): ReconRowJson {
  return ordered({
    ...baseRow(r.id, 'refund', s, false), debit: r.amount, credit: 0, amount: r.amount, currency: r.currency, fee: 0, tax: 0,
    created_at: r.created_at, credit_type: 'default', description: null, notes: JSON.stringify(r.notes), payment_id: r.payment_id,
    ...paymentContext(ctx, ctx.state.payments.get(r.payment_id)),
  });
}

/** The payment a payment or order transfer moved money from (none for a direct transfer). */
function sourcePayment(ctx: SandboxContext, t: TransferEntity): PaymentEntity | undefined {
  return t.source.startsWith('pay_')
    ? ctx.state.payments.get(t.source)
    : t.source.startsWith('order_') ? [...ctx.state.payments.values()].find((p) => p.order_id === t.source && p.captured) : undefined;
}

function transferRow(ctx: SandboxContext, t: TransferEntity, s: { id: string; at: number; utr: string | null }): ReconRowJson {
  const payment = sourcePayment(ctx, t);
  return ordered({
    ...baseRow(t.id, 'transfer', s, false), debit: t.amount + t.fees, credit: 0, amount: t.amount, currency: t.currency, fee: t.fees, tax: t.tax ?? 0,
    created_at: t.created_at, credit_type: 'default', description: null, notes: JSON.stringify(t.notes), payment_id: payment?.id ?? null,
    order_id: t.source.startsWith('order_') ? t.source : null, order_receipt: null, method: null, card_network: null, card_issuer: null, card_type: null,
  });
}

/** A reversal gives the platform the amount back (fee and tax 0, as the sandbox charges none). */
function reversalRow(ctx: SandboxContext, r: ReversalEntity, t: TransferEntity | undefined, s: { id: string; at: number; utr: string | null }): ReconRowJson {
  const payment = t ? sourcePayment(ctx, t) : undefined;
  return ordered({
    ...baseRow(r.id, 'reversal', s, false), debit: 0, credit: r.amount, amount: r.amount, currency: r.currency, fee: r.fee, tax: r.tax,
    created_at: r.created_at, credit_type: 'default', description: null, notes: JSON.stringify(r.notes), payment_id: payment?.id ?? null,
    order_id: t?.source.startsWith('order_') ? t.source : null, order_receipt: null, method: null, card_network: null, card_issuer: null, card_type: null,
  });
}

/** A transfer settles once processed, also when reversed since, wholly or in part: it left the balance
 * when processed, and its reversals are credits of their own (as Razorpay reports both). */
const SETTLES: ReadonlySet<TransferEntity['status']> = new Set(['processed', 'partially_reversed', 'reversed']);

/** UTRs the bank has not reported yet, by settlement (the entity objects live in the sandbox state,
 * so a reset drops these with them). */
const pendingUtrs = new WeakMap<SettlementEntity, { utr: string; atSec: number }>();

/** Gives every settlement whose UTR is due its UTR. */
function revealDueUtrs(ctx: SandboxContext): void {
  const now = ctx.clock.nowSec();
  for (const settlement of ctx.state.settlements.values()) {
    const pending = pendingUtrs.get(settlement);
    if (!pending || pending.atSec > now) continue;
    settlement.utr = pending.utr;
    ctx.state.settlements.markChanged(settlement.id);
    pendingUtrs.delete(settlement);
  }
}

export function runSettlements(ctx: SandboxContext, book: SettlementBook, opts: { date: string; holidays?: string[]; utrDelayMs?: number }): SettlementEntity[] {
  const { date } = opts;
  revealDueUtrs(ctx);
  const holidays = new Set(opts.holidays ?? []);
  const { state } = ctx;
  const due = (sec: number): string => istDateOf(new Date(sec * 1000));
  const settledAt = toSec(istDayBounds(date).start.getTime() + IST_10AM_MS);

  const payments: PaymentEntity[] = [];
  const held: PaymentEntity[] = [];
  for (const p of state.payments.values()) {
    const b = state.paymentBooks.get(p.id);
    if (!b?.capturedAt || state.settledIds.has(p.id)) continue;
    if (settlementDueDate(due(b.capturedAt), holidays) > date) continue;
    (b.onHold ? held : payments).push(p);
  }
  const refundsDue = [...state.refunds.values()].filter((r) => r.status !== 'failed' && !state.settledIds.has(r.id) && due(r.created_at) <= date);
  const transfersDue = [...state.transfers.values()].filter((t) => SETTLES.has(t.status) && !state.settledIds.has(t.id) && due(t.processed_at ?? t.created_at) <= date);
  const adjustmentsDue = state.adjustments.filter((a) => !state.settledIds.has(a.id) && a.date <= date);

  // Credits first; then debits in time order while the settlement stays positive. The rest rolls
  // to the next run (the documented partial settlement).
  let net = payments.reduce((s, p) => s + p.amount - (p.fee ?? 0), 0) + adjustmentsDue.filter((a) => a.amount > 0).reduce((s, a) => s + a.amount, 0);
  const adjustments = adjustmentsDue.filter((a) => a.amount > 0);
  const refunds: RefundEntity[] = [];
  const transfers: TransferEntity[] = [];
  const debits = [
    ...refundsDue.map((r) => ({ at: r.created_at, amount: r.amount, take: () => refunds.push(r) })),
    ...transfersDue.map((t) => ({ at: t.processed_at ?? t.created_at, amount: t.amount + t.fees, take: () => transfers.push(t) })),
    ...adjustmentsDue.filter((a) => a.amount < 0).map((a) => ({ at: a.createdAt, amount: -a.amount, take: () => adjustments.push(a) })),
  ].sort((a, b) => a.at - b.at);
  for (const debit of debits) {
    if (net - debit.amount <= 0) continue;
    net -= debit.amount;
    debit.take();
  }
  // Reversals of transfers settled before or in this run come back as credits.
  const settledTransfer = (id: string): boolean => state.settledIds.has(id) || transfers.some((t) => t.id === id);
  const reversals = [...state.reversals.values()].flat()
    .filter((r) => !state.settledIds.has(r.id) && due(r.created_at) <= date && settledTransfer(r.transfer_id));
  net += reversals.reduce((sum, r) => sum + r.amount, 0);

  for (const p of held) {
    const key = `${date}|${p.id}`;
    if (book.reportedOnHold.has(key)) continue;
    book.reportedOnHold.add(key);
    book.addRow(date, paymentRow(ctx, p, { id: null, at: null, utr: null }, true));
  }

  if (payments.length + refunds.length + transfers.length + adjustments.length + reversals.length === 0 || net <= 0) return [];

  const settlement: SettlementEntity = {
    id: newId('setl'), entity: 'settlement', amount: net, status: 'processed',
    fees: payments.reduce((s, p) => s + (p.fee ?? 0), 0) + transfers.reduce((s, t) => s + t.fees, 0),
    tax: payments.reduce((s, p) => s + (p.tax ?? 0), 0) + transfers.reduce((s, t) => s + (t.tax ?? 0), 0),
    utr: `AXISCN${randomAlphanumeric(10).toUpperCase()}`, created_at: settledAt,
  };
  const bankUtr = settlement.utr!;
  if (opts.utrDelayMs !== undefined) {
    pendingUtrs.set(settlement, { utr: bankUtr, atSec: settledAt + Math.ceil(opts.utrDelayMs / 1000) });
    settlement.utr = null;
  }
  const s = { id: settlement.id, at: settledAt, utr: settlement.utr };
  for (const p of payments) book.addRow(date, paymentRow(ctx, p, s, false));
  for (const r of refunds) book.addRow(date, refundRow(ctx, r, s));
  for (const t of transfers) {
    t.settlement_status = 'settled';
    state.transfers.markChanged(t.id);
    book.addRow(date, transferRow(ctx, t, s));
  }
  for (const r of reversals) book.addRow(date, reversalRow(ctx, r, state.transfers.get(r.transfer_id), s));
  for (const a of adjustments) {
    // Adjustment rows carry no credit_type (documented sample).
    book.addRow(date, ordered({
      ...baseRow(a.id, 'adjustment', s, false), debit: a.amount < 0 ? -a.amount : 0, credit: a.amount > 0 ? a.amount : 0, amount: Math.abs(a.amount),
      currency: 'INR', fee: 0, tax: 0, created_at: a.createdAt, description: a.description, notes: null, payment_id: null,
      order_id: null, order_receipt: null, method: null, card_network: null, card_issuer: null, card_type: null,
    }));
  }
  for (const id of [...payments, ...refunds, ...transfers, ...adjustments, ...reversals].map((x) => x.id)) state.settledIds.add(id);
  state.settlements.set(settlement.id, settlement);
  book.bankLines.push({ utr: bankUtr, amount: net, valueDate: date, narration: `NEFT CR-RAZORPAY SOFTWARE PVT LTD-${bankUtr.toLowerCase()}` });
  ctx.webhooks.emit('settlement.processed', { settlement });
  return [settlement];
}

export function fetchSettlement(ctx: SandboxContext, id: string): SettlementEntity {
  revealDueUtrs(ctx);
  const settlement = ctx.state.settlements.get(id);
  if (!settlement) throw idNotFound();
  return settlement;
}

/** GET /v1/settlements/recon/combined: rows settled (or held) on an IST day or month. */
export function reconRows(book: SettlementBook, query: Record<string, unknown>): ReconRowJson[] {
  const str = (k: string): string | undefined => (query[k] === undefined || query[k] === '' ? undefined : String(query[k]));
  const year = str('year');
  const month = str('month');
  const day = str('day');
  if (year === undefined) throw badRequest('The year field is required.', 'year');
  if (!/^\d{4}$/.test(year)) throw badRequest('The year must be 4 digits.', 'year');
  if (month === undefined) throw badRequest('The month field is required.', 'month');
  if (!/^\d{1,2}$/.test(month) || Number(month) < 1 || Number(month) > 12) throw badRequest('The month is not a valid month.', 'month');
  if (day !== undefined && (!/^\d{1,2}$/.test(day) || Number(day) < 1 || Number(day) > 31)) throw badRequest('The day must be between 1 and 2 digits.', 'day');
  const count = str('count') === undefined ? 1000 : Number(str('count'));
  const skip = str('skip') === undefined ? 0 : Number(str('skip'));
  if (!Number.isInteger(count) || count < 1) throw badRequest('The count must be at least 1.', 'count');
  if (count > 1000) throw badRequest('The count may not be greater than 1000.', 'count');
  if (!Number.isInteger(skip) || skip < 0) throw badRequest('The skip must be at least 0.', 'skip');
  const prefix = `${year}-${month.padStart(2, '0')}${day === undefined ? '' : `-${day.padStart(2, '0')}`}`;
  // Only the page is copied: a day of a million rows is served a page at a time in O(page), and never
  // spread into one call's arguments (which overflows the stack past ~100,000 rows).
  const page: ReconRowJson[] = [];
  let offset = skip;
  for (const [date, dayRows] of [...book.rowsByDate.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    if (!date.startsWith(prefix)) continue;
    if (offset >= dayRows.length) {
      offset -= dayRows.length;
      continue;
    }
    for (let i = offset; i < dayRows.length && page.length < count; i++) page.push(dayRows[i]!);
    offset = 0;
    if (page.length === count) break;
  }
  return page;
}

/** Bank statement CSV of settlement credits with value dates in [from, to]. Amounts are rupees
 * with two decimals, as a bank prints them; the narration carries the UTR in lower case. */
export function bankStatementCsv(book: BankLine[] | SettlementBook, opts: { from: string; to: string }): string {
  const lines = Array.isArray(book) ? book : book.bankLines;
  const rupees = (paise: number): string => `${Math.trunc(paise / 100)}.${String(Math.abs(paise % 100)).padStart(2, '0')}`;
  const rows = lines.filter((l) => l.valueDate >= opts.from && l.valueDate <= opts.to).map((l) => [l.utr, rupees(l.amount), l.valueDate, l.narration].join(','));
  return ['utr,amount,value_date,narration', ...rows].join('\n') + '\n';
}
