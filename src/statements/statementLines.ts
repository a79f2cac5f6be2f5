/** Pure: a vendor's ledger rows for a period in, its statement out — one line per order paid in the
 * period and per refund clawed back in it, how each was paid (or is still owed), the totals by rail
 * and the offline balance. No I/O: readModel.ts reads the rows.
 *
 * How a line is paid is what the ledger says (docs/ledger.md), not a precedence over the rails' rows:
 * the obligation the line stands for (an order's net, or what a reversal of the transfer that paid
 * it made owed again; a clawback's own), the rail the ledger assigns it, and the instrument that pays
 * it (its one active discharge), if any:
 *  - employer direct: the employer pays the vendor; an ops adjustment (a payout cancelled): not owed;
 *  - a settlement run: paid by a bank line (its UTR), in an open batch's line, or still owed offline;
 *  - a transfer (an order's, or its batch's): settled, in flight, paid outside the app, or awaiting;
 *  - a Route split: processed or in flight;
 *  - anything else (no obligation, or an instrument of another rail) is `unknown`, shown with what
 *    was found rather than counted on a rail.
 * A cash order's customer share stays with the vendor at the counter (its own obligation, paid
 * there); the rest (subsidy less commission, possibly negative) is owed offline. So every order's
 * net is the sum of its rails. */
import { istDateOf } from '../domain/calendar';
import { formatRupees } from '../domain/money';
import { PROVIDER_TRANSFER_KINDS, type DischargeKind, type DischargeState, type Rail } from '../ledger/model';
import type { PaidBy, Statement, StatementLine, StatementPeriod, StatementTotals } from './contract';

export interface StatementRow {
  kind: 'order' | 'refund_clawback';
  orderId: string;
  at: Date;
  employerId: string;
  /** null on a clawback row (not an order). */
  order: { paymentMethod: string; totalPaise: number; subsidyPaise: number; customerSharePaise: number; commissionPaise: number; vendorNetPaise: number } | null;
  /** The offline ledger's route label: how the order was routed when paid. */
  route: string | null;
  refundId: string | null;
  /** The obligation the line stands for, as the ledger has it: the rail assigned to pay it, and the
   * amount the line accounts (an order's net; a clawback's own). Null: none in the ledger. */
  owed: { rail: Rail; amountPaise: number } | null;
  /** Its one active discharge (what pays it, or in flight may still pay it); null while nothing does. */
  discharge: { kind: DischargeKind; state: DischargeState; providerRef: string | null } | null;
  /** A cash order: the customer's share kept at the counter (its cash-kept obligation). */
  cashKeptPaise: number;
  /** The order's payout, for the words: its status, ops' bank reference, the payout batch paying it. */
  payout: { status: string; externalReference: string | null; batchId: string | null } | null;
  /** The settlement line that discharges it (frozen in an open batch, or paid). */
  batchLine: { batchId: string; reference: string; status: string; utr: string | null; paidOn: string | null } | null;
  /** Razorpay's settlement that carried the discharging transfer or split (recon's rows). */
  gatewaySettlement: { settlementId: string; utr: string | null } | null;
}

const TRANSFER_KINDS: ReadonlySet<DischargeKind> = new Set(PROVIDER_TRANSFER_KINDS);

export function paidByOf(row: StatementRow): PaidBy {
  const { owed, discharge } = row;
  if (!owed) return unknown(row.kind === 'refund_clawback' ? 'a clawback without its obligation in the ledger' : 'no obligation in the ledger for this paid order');
  if (discharge?.kind === 'adjustment') return { rail: 'not_owed', payoutStatus: row.payout?.status ?? 'cancelled', amountPaise: owed.amountPaise };
  switch (owed.rail) {
    case 'employer_direct':
      return { rail: 'employer_direct', amountPaise: owed.amountPaise };
    case 'settlement_run':
      return offline(row, owed.amountPaise);
    case 'transfer':
    case 'batch_transfer':
      return byTransfer(row, owed.amountPaise);
    case 'split':
      return bySplit(row, owed.amountPaise);
    default:
      return unknown(`an obligation on the ${owed.rail} rail`);
  }
}

const unknown = (detail: string): PaidBy => ({ rail: 'unknown', detail, amountPaise: 0 });
const gatewayOf = (row: StatementRow) => ({ settlementId: row.gatewaySettlement?.settlementId ?? null, utr: row.gatewaySettlement?.utr ?? null });
const paidByOther = (row: StatementRow, rail: string): PaidBy => unknown(`owed by ${rail}, paid by ${row.discharge!.kind.replace('_', ' ')}`);

function byTransfer(row: StatementRow, amountPaise: number): PaidBy {
  const d = row.discharge;
  const payout = row.payout;
  const base = {
    rail: 'transfer' as const, payoutStatus: payout?.status ?? 'none', amountPaise, externalReference: payout?.externalReference ?? null,
    transferId: d && TRANSFER_KINDS.has(d.kind) ? d.providerRef : null, ...gatewayOf(row),
    ...(payout?.batchId ? { payoutBatchId: payout.batchId } : {}),
  };
  if (!d) return { ...base, status: 'awaiting' };
  if (d.kind === 'external_transfer') return { ...base, status: 'settled' };
  if (!TRANSFER_KINDS.has(d.kind)) return paidByOther(row, 'transfer');
  return { ...base, status: d.state === 'paid' ? 'settled' : 'in_flight' };
}

function bySplit(row: StatementRow, amountPaise: number): PaidBy {
  const d = row.discharge;
  if (!d) return unknown('a Route split with no transfer of it in the ledger');
  if (d.kind !== 'split') return paidByOther(row, 'split');
  return { rail: 'split', status: d.state === 'paid' ? 'processed' : 'in_flight', amountPaise, transferId: d.providerRef, ...gatewayOf(row) };
}

function offline(row: StatementRow, amountPaise: number): PaidBy {
  const d = row.discharge;
  if (d && d.kind !== 'settlement_line') return paidByOther(row, 'a settlement run');
  const line = row.batchLine;
  const refs = { batchId: line?.batchId ?? null, reference: line?.reference ?? null, utr: line?.utr ?? null, paidOn: line?.paidOn ?? null };
  if (d?.state === 'paid') return { rail: 'offline', status: 'paid', amountPaise, ...refs };
  if (d) return { rail: 'offline', status: 'in_batch', amountPaise, ...refs };
  return { rail: 'offline', status: amountPaise < 0 ? 'owes_back' : 'owed', amountPaise, ...refs };
}

const rupees = formatRupees;
const id = (value: string | null): string => (value ? ` ${value}` : '');

/** The line's "how paid" in words, the same in the CSV, the console and the CLI. */
export function howPaidWords(line: Pick<StatementLine, 'kind' | 'paidBy' | 'cashKeptPaise' | 'refundId'>): string {
  const p = line.paidBy;
  const rail = railWords(p);
  if (line.kind === 'refund_clawback' && p.amountPaise > 0) return `the clawback of refund${id(line.refundId)} returned (ops cancelled its payout after a settlement netted it): ${rail}`;
  if (line.kind === 'refund_clawback') return `refund${id(line.refundId)} made outside the app, clawed back: ${rail}`;
  return line.cashKeptPaise > 0 ? `cash ${rupees(line.cashKeptPaise)} kept at the counter; ${rail}` : rail;
}

function railWords(p: PaidBy): string {
  const settlement = (s: { settlementId: string | null; utr: string | null }) =>
    (s.settlementId ? `; Razorpay settlement ${s.settlementId}${s.utr ? `, UTR ${s.utr}` : ', UTR not known yet'}` : '; not in a Razorpay settlement recon has seen yet');
  switch (p.rail) {
    case 'transfer': {
      const batch = p.payoutBatchId ? ` (batch ${p.payoutBatchId}: one transfer for the window's orders)` : '';
      if (p.status === 'settled') {
        return p.transferId ? `transfer ${p.transferId} settled${batch}${settlement(p)}` : `paid outside the app (reference ${p.externalReference ?? 'none'})${batch}`;
      }
      return p.status === 'in_flight' ? `transfer${id(p.transferId)} sent, not settled yet (payout ${p.payoutStatus})${batch}` : `transfer not sent yet (payout ${p.payoutStatus})${batch}`;
    }
    case 'split':
      return p.status === 'processed' ? `Route split${id(p.transferId)} processed${settlement(p)}` : 'Route split on the payment, not confirmed yet';
    case 'offline': {
      const amount = p.amountPaise < 0 ? `owes back ${rupees(-p.amountPaise)}` : `owed ${rupees(p.amountPaise)}`;
      if (p.status === 'paid') return `${p.amountPaise < 0 ? `${amount}, netted off` : `${rupees(p.amountPaise)} paid by`} bank settlement ${p.reference} (UTR ${p.utr}, ${p.paidOn})`;
      if (p.status === 'in_batch') return `${amount}, in open settlement batch ${p.batchId} (line ${p.reference})`;
      return p.status === 'owes_back' ? `still ${amount}: nets off the next settlement` : `still ${amount} offline`;
    }
    case 'employer_direct':
      return `the employer pays the vendor directly (corporate_direct): ${rupees(p.amountPaise)} obligation`;
    case 'not_owed':
      return `payout ${p.payoutStatus} by ops: not owed`;
    case 'unknown':
      return `not accounted for: ${p.detail}`;
  }
}

export function statementLineOf(row: StatementRow): StatementLine {
  const o = row.order;
  const cashKeptPaise = row.cashKeptPaise;
  const paidBy = paidByOf(row);
  const line = {
    kind: row.kind, day: istDateOf(row.at), at: row.at.toISOString(), orderId: row.orderId, employerId: row.employerId,
    paymentMethod: o?.paymentMethod ?? null, route: row.route,
    totalPaise: o?.totalPaise ?? null, subsidyPaise: o?.subsidyPaise ?? null, customerSharePaise: o?.customerSharePaise ?? null,
    commissionPaise: o?.commissionPaise ?? null, vendorNetPaise: o?.vendorNetPaise ?? null,
    cashKeptPaise, refundId: row.refundId, paidBy,
  };
  return { ...line, howPaid: howPaidWords(line) };
}

/** What the line's rails account for of its order's net. */
const accountedPaise = (line: StatementLine): number => line.cashKeptPaise + (line.paidBy.rail === 'unknown' ? 0 : line.paidBy.amountPaise);

export function statementTotals(lines: readonly StatementLine[]): StatementTotals {
  const t: StatementTotals = {
    orders: 0, totalPaise: 0, subsidyPaise: 0, customerSharePaise: 0, commissionPaise: 0, vendorNetPaise: 0,
    transfer: { settledPaise: 0, inFlightPaise: 0, awaitingPaise: 0 },
    split: { processedPaise: 0, inFlightPaise: 0 },
    offline: { paidPaise: 0, inBatchPaise: 0, openPaise: 0 },
    refundClawbackPaise: 0, cashKeptAtCounterPaise: 0, employerDirectPaise: 0, notOwedPaise: 0, unexplainedPaise: 0,
  };
  for (const line of lines) {
    const p = line.paidBy;
    if (line.kind === 'order') {
      t.orders += 1;
      t.totalPaise += line.totalPaise ?? 0;
      t.subsidyPaise += line.subsidyPaise ?? 0;
      t.customerSharePaise += line.customerSharePaise ?? 0;
      t.commissionPaise += line.commissionPaise ?? 0;
      t.vendorNetPaise += line.vendorNetPaise ?? 0;
      t.unexplainedPaise += (line.vendorNetPaise ?? 0) - accountedPaise(line);
    } else {
      t.refundClawbackPaise += p.amountPaise;
    }
    t.cashKeptAtCounterPaise += line.cashKeptPaise;
    switch (p.rail) {
      case 'transfer':
        t.transfer[p.status === 'settled' ? 'settledPaise' : p.status === 'in_flight' ? 'inFlightPaise' : 'awaitingPaise'] += p.amountPaise;
        break;
      case 'split':
        t.split[p.status === 'processed' ? 'processedPaise' : 'inFlightPaise'] += p.amountPaise;
        break;
      case 'offline':
        t.offline[p.status === 'paid' ? 'paidPaise' : p.status === 'in_batch' ? 'inBatchPaise' : 'openPaise'] += p.amountPaise;
        break;
      case 'employer_direct':
        t.employerDirectPaise += p.amountPaise;
        break;
      case 'not_owed':
        t.notOwedPaise += p.amountPaise;
        break;
      case 'unknown':
        break;
    }
  }
  return t;
}

export function statementBalance(lines: readonly StatementLine[], totals: StatementTotals): Statement['balance'] {
  const stillOwedPaise = totals.offline.inBatchPaise + totals.offline.openPaise;
  const openPaise = totals.offline.openPaise;
  const openLines = lines.some((l) => l.paidBy.rail === 'offline' && (l.paidBy.status === 'owed' || l.paidBy.status === 'owes_back'));
  const carriedForward = openLines && openPaise <= 0;
  const inBatch = totals.offline.inBatchPaise !== 0 ? `${rupees(totals.offline.inBatchPaise)} in open settlement batches` : '';
  let words: string;
  if (carriedForward) {
    words = `carried forward: the open lines not in a batch net to ${rupees(openPaise)}${openPaise < 0 ? ` (the vendor owes back ${rupees(-openPaise)})` : ''}; `
      + `no payment for them, they stay open and net off the next settlement${inBatch ? `; ${inBatch}` : ''}`;
  } else if (openLines || inBatch) {
    words = `${rupees(stillOwedPaise)} still owed offline${[openLines ? `${rupees(openPaise)} not in a batch yet` : '', inBatch].filter(Boolean).map((w) => `; ${w}`).join('')}`;
  } else {
    words = 'nothing owed offline for this period';
  }
  return { stillOwedPaise, openPaise, carriedForward, words };
}

export function buildStatement(input: { vendor: { id: string; name: string }; period: StatementPeriod; rows: readonly StatementRow[]; generatedAt: Date }): Statement {
  const lines = [...input.rows].sort((a, b) => a.at.getTime() - b.at.getTime() || a.orderId.localeCompare(b.orderId) || a.kind.localeCompare(b.kind)).map(statementLineOf);
  const totals = statementTotals(lines);
  return {
    vendor: input.vendor, period: { from: input.period.from, to: input.period.to }, generatedAt: input.generatedAt.toISOString(),
    lines, totals, balance: statementBalance(lines, totals),
  };
}

/** The totals as labelled rows, the same in the CSV, the console and the CLI: [rail, what, paise]. */
export function totalRows(s: Pick<Statement, 'totals' | 'balance'>): Array<[rail: string, what: string, paise: number]> {
  const t = s.totals;
  return [
    ['transfer', 'settled', t.transfer.settledPaise],
    ['transfer', 'sent, not settled yet', t.transfer.inFlightPaise],
    ['transfer', 'not sent yet', t.transfer.awaitingPaise],
    ['split', 'processed', t.split.processedPaise],
    ['split', 'not confirmed yet', t.split.inFlightPaise],
    ['offline', 'paid by bank settlement', t.offline.paidPaise],
    ['offline', 'in open settlement batches', t.offline.inBatchPaise],
    ['offline', 'open, not in a batch', t.offline.openPaise],
    ['offline', 'of which refunds clawed back', t.refundClawbackPaise],
    ['cash', 'kept at the counter', t.cashKeptAtCounterPaise],
    ['employer_direct', 'paid by the employer directly', t.employerDirectPaise],
    ['not_owed', 'payouts cancelled by ops', t.notOwedPaise],
    ['unknown', 'not accounted for', t.unexplainedPaise],
    ['balance', 'still owed offline', s.balance.stillOwedPaise],
  ];
}
