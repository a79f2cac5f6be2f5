/** Pure: a vendor's ledger rows for a period in, its statement out — one line per order paid in the
 * period and per refund clawed back in it, how each was paid (or is still owed), the totals by rail
 * and the offline balance. No I/O: readModel.ts reads the rows.
 *
 * Which rail a line is on, first match wins:
 *  1. a refund clawback is an offline line (negative: the vendor owes it back);
 *  2. an obligation (corporate_direct, also a payout rerouted to it): the employer pays the vendor;
 *  3. a member of a settlement batch line the bank paid: paid offline;
 *  4. in the open offline ledger (`offline_ledger_open`, the one rule for "owed offline"): owed
 *     offline, in an open batch or not;
 *  5. a direct-transfer payout, by its status; a Route split, by its status;
 *  6. anything else is `unknown`, shown with what was found rather than counted on a rail.
 * A cash order's customer share stays with the vendor at the counter; its ledger line (subsidy less
 * commission, possibly negative) goes by rule 3 or 4. So every order's net is the sum of its rails. */
import { istDateOf } from '../domain/calendar';
import { formatRupees } from '../domain/money';
import type { PaidBy, Statement, StatementLine, StatementPeriod, StatementTotals } from './contract';

export interface StatementRow {
  kind: 'order' | 'refund_clawback';
  orderId: string;
  at: Date;
  employerId: string;
  /** null on a clawback row (not an order). */
  order: { paymentMethod: string; totalPaise: number; subsidyPaise: number; customerSharePaise: number; commissionPaise: number; vendorNetPaise: number } | null;
  ledger: { route: string; amountPaise: number; open: boolean } | null;
  refundId: string | null;
  /** `batchId`: the payout batch that pays it; `transferId` is then the batch's transfer. */
  payout: { status: string; amountPaise: number; transferId: string | null; externalReference: string | null; batchId?: string | null } | null;
  split: { status: string; amountPaise: number; transferId: string | null } | null;
  obligationPaise: number | null;
  /** The settlement batch line the ledger line is an active member of. */
  batchLine: { batchId: string; reference: string; status: string; utr: string | null; paidOn: string | null } | null;
  /** Razorpay's settlement that carried the payout's or split's transfer (recon's rows). */
  gatewaySettlement: { settlementId: string; utr: string | null } | null;
}

const IN_FLIGHT = new Set(['processing', 'accepted']);
/** `batched`: in a batch whose transfer has not paid it yet. */
const AWAITING = new Set(['pending', 'failed', 'parked', 'review', 'batched']);

export function paidByOf(row: StatementRow): PaidBy {
  const ledger = row.ledger;
  if (row.kind === 'refund_clawback') return ledger ? offline(row, ledger.amountPaise) : unknown('a clawback row without its ledger line');
  if (row.obligationPaise !== null) return { rail: 'employer_direct', amountPaise: row.obligationPaise };
  if (ledger && (row.batchLine?.status === 'paid' || ledger.open)) return offline(row, ledger.amountPaise);
  const gateway = { settlementId: row.gatewaySettlement?.settlementId ?? null, utr: row.gatewaySettlement?.utr ?? null };
  const payout = row.payout;
  if (payout) {
    const base = {
      rail: 'transfer' as const, payoutStatus: payout.status, amountPaise: payout.amountPaise, transferId: payout.transferId, externalReference: payout.externalReference, ...gateway,
      ...(payout.batchId ? { payoutBatchId: payout.batchId } : {}),
    };
    if (payout.status === 'settled') return { ...base, status: 'settled' };
    if (IN_FLIGHT.has(payout.status)) return { ...base, status: 'in_flight' };
    if (AWAITING.has(payout.status)) return { ...base, status: 'awaiting' };
    if (payout.status === 'cancelled') return { rail: 'not_owed', payoutStatus: payout.status, amountPaise: payout.amountPaise };
    return unknown(`payout ${payout.status}, not in the open offline ledger`);
  }
  const split = row.split;
  if (split?.status === 'processed') return { rail: 'split', status: 'processed', amountPaise: split.amountPaise, transferId: split.transferId, ...gateway };
  if (split?.status === 'expected') return { rail: 'split', status: 'in_flight', amountPaise: split.amountPaise, transferId: split.transferId, ...gateway };
  if (split) return unknown(`split ${split.status}, not in the open offline ledger`);
  return unknown(ledger ? `route ${ledger.route}, neither owed offline nor paid by a rail` : 'no offline ledger line for this paid order');
}

const unknown = (detail: string): PaidBy => ({ rail: 'unknown', detail, amountPaise: 0 });

function offline(row: StatementRow, amountPaise: number): PaidBy {
  const line = row.batchLine;
  const refs = { batchId: line?.batchId ?? null, reference: line?.reference ?? null, utr: line?.utr ?? null, paidOn: line?.paidOn ?? null };
  if (line?.status === 'paid') return { rail: 'offline', status: 'paid', amountPaise, ...refs };
  if (line) return { rail: 'offline', status: 'in_batch', amountPaise, ...refs };
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
  const cashKeptPaise = o && row.ledger?.route === 'cash' ? o.customerSharePaise : 0;
  const paidBy = paidByOf(row);
  const line = {
    kind: row.kind, day: istDateOf(row.at), at: row.at.toISOString(), orderId: row.orderId, employerId: row.employerId,
    paymentMethod: o?.paymentMethod ?? null, route: row.ledger?.route ?? null,
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
