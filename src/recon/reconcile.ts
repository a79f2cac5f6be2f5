/** The matching and classification engine (design.md §8), pure: given the gateway rows, our
 * records, the settlements and the bank lines of a window, it returns every difference with a
 * reason. Expected net of a payment = amount − fee, because Razorpay's fee already includes tax. */
import { addDays, istDateOf, isWorkingDay, settlementDueDate } from '../domain/calendar';
import type { AppMoneyIn, AppPayment, AppTransfer, ExceptionDraft, GatewayRow, ReconInput, ReconOutcome, SettlementRecord } from './model';
import { describeReason, type ExceptionClass, type ReasonCode } from './reasons';

export type DraftFields = Partial<Pick<ExceptionDraft, 'entityId' | 'settlementId' | 'orderId' | 'bankLineId' | 'expectedPaise' | 'actualPaise'>> & { details?: Record<string, unknown> };

/** An exception for `reason` about `ref` (the stable key is reason + ref), with the reason's severity
 * and next action for its class. */
export function draft(reason: ReasonCode, klass: ExceptionClass, ref: string, day: string, fields: DraftFields): ExceptionDraft {
  const { severity, nextAction } = describeReason(reason, klass);
  return {
    key: `${reason}|${ref}`,
    reason,
    class: klass,
    severity,
    nextAction,
    day,
    entityId: fields.entityId ?? null,
    settlementId: fields.settlementId ?? null,
    orderId: fields.orderId ?? null,
    bankLineId: fields.bankLineId ?? null,
    expectedPaise: fields.expectedPaise ?? null,
    actualPaise: fields.actualPaise ?? null,
    details: fields.details ?? {},
  };
}

/** The next working day after `day`: a settlement credit may reach the bank statement by then. */
export function bankCreditDueDate(day: string, holidays: ReadonlySet<string>): string {
  let next = addDays(day, 1);
  while (!isWorkingDay(next, holidays)) next = addDays(next, 1);
  return next;
}

function groupBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}

function indexBy<T>(items: readonly T[], keyOf: (item: T) => string | null): Map<string, T> {
  const index = new Map<string, T>();
  for (const item of items) {
    const key = keyOf(item);
    if (key !== null) index.set(key, item);
  }
  return index;
}

const inWindow = (day: string, input: { from: string; to: string }): boolean => day >= input.from && day <= input.to;

export function reconcile(input: ReconInput): ReconOutcome {
  const exceptions: ExceptionDraft[] = [];
  let matched = 0;

  const moneyInById = indexBy(input.moneyIn, (m) => m.id);
  const moneyInByGatewayOrder = indexBy(input.moneyIn, (m) => m.gatewayOrderId);
  const paymentsById = indexBy(input.payments, (p) => p.id);
  const refundsByGatewayId = indexBy(input.refunds, (r) => r.gatewayRefundId);
  const refundsById = indexBy(input.refunds, (r) => r.id);
  const transfersByProviderId = indexBy(input.transfers, (t) => t.providerTransferId);
  const payoutsById = indexBy(input.transfers.filter((t) => t.kind === 'payout'), (t) => t.id);
  const splitsByOrderId = indexBy(input.transfers.filter((t) => t.kind === 'split'), (t) => t.orderId);
  const reversalsById = indexBy(input.reversals ?? [], (r) => r.id);
  const reversalsByTransferId = indexBy(input.reversals ?? [], (r) => r.transferId);

  // Payments: a payment settled in parts has several rows; judge the entity once.
  const windowRows = input.rows.filter((r) => inWindow(r.reconDay, input));
  const windowPaymentIds = new Set(windowRows.filter((r) => r.type === 'payment').map((r) => r.entityId));
  const paymentGroups = groupBy(input.rows.filter((r) => r.type === 'payment' && windowPaymentIds.has(r.entityId)), (r) => r.entityId);
  for (const [entityId, rows] of paymentGroups) {
    const result = judgePayment(entityId, rows, { moneyInById, moneyInByGatewayOrder, paymentsById });
    exceptions.push(...result.exceptions);
    if (result.matched) matched += rows.filter((r) => inWindow(r.reconDay, input)).length;
  }

  for (const row of windowRows) {
    if (row.type === 'refund') {
      // By the gateway id; else by our refund id in the notes when we never learned the gateway id.
      const byReceipt = row.noteRefundRequestId ? refundsById.get(row.noteRefundRequestId) : undefined;
      const refund = refundsByGatewayId.get(row.entityId)
        ?? (byReceipt && (byReceipt.gatewayRefundId === null || byReceipt.gatewayRefundId === row.entityId) ? byReceipt : undefined);
      if (!refund) {
        exceptions.push(draft('refund-not-in-app', 'unmatched', row.entityId, row.reconDay, { entityId: row.entityId, settlementId: row.settlementId, actualPaise: row.amountPaise, details: { paymentId: row.paymentId } }));
      } else if (refund.amountPaise !== row.amountPaise) {
        exceptions.push(draft('amount-mismatch', 'mismatched', row.entityId, row.reconDay, { entityId: row.entityId, settlementId: row.settlementId, expectedPaise: refund.amountPaise, actualPaise: row.amountPaise, details: { refundId: refund.id } }));
      } else matched += 1;
    } else if (row.type === 'transfer' && reversalsByTransferId.has(row.entityId)) {
      // A transfer of ours that was reversed since: it paid, and each reversal is a row of its own.
      const reversed = reversalsByTransferId.get(row.entityId)!;
      if (reversed.transferAmountPaise !== row.amountPaise) {
        exceptions.push(draft('amount-mismatch', 'mismatched', row.entityId, row.reconDay, { entityId: row.entityId, settlementId: row.settlementId, orderId: reversed.orderId, expectedPaise: reversed.transferAmountPaise, actualPaise: row.amountPaise, details: { reversed: reversed.transferId } }));
      } else matched += 1;
    } else if (row.type === 'transfer') {
      const transfer = findTransfer(row, { transfersByProviderId, payoutsById, splitsByOrderId, paymentsById });
      if (!transfer) {
        exceptions.push(draft('transfer-not-in-app', 'unmatched', row.entityId, row.reconDay, { entityId: row.entityId, settlementId: row.settlementId, actualPaise: row.amountPaise, details: { sourcePaymentId: row.paymentId } }));
      } else if (!weConsiderPaidBy(transfer, row.entityId)) {
        // Money left for a payout we think is unpaid (or paid otherwise): a possible double payment.
        exceptions.push(draft('transfer-not-in-app', 'unmatched', row.entityId, row.reconDay, { entityId: row.entityId, settlementId: row.settlementId, orderId: transfer.orderId, expectedPaise: transfer.amountPaise, actualPaise: row.amountPaise, details: { [transfer.kind]: transfer.id, ourStatus: transfer.status } }));
      } else if (transfer.amountPaise !== row.amountPaise) {
        exceptions.push(draft('amount-mismatch', 'mismatched', row.entityId, row.reconDay, { entityId: row.entityId, settlementId: row.settlementId, orderId: transfer.orderId, expectedPaise: transfer.amountPaise, actualPaise: row.amountPaise, details: { [transfer.kind]: transfer.id } }));
      } else matched += 1;
    } else if (row.type === 'reversal') {
      // By Razorpay's reversal id: one we never recorded may be a vendor owed again that nobody knows of.
      const reversal = reversalsById.get(row.entityId);
      if (!reversal) {
        exceptions.push(draft('reversal-not-in-app', 'unmatched', row.entityId, row.reconDay, { entityId: row.entityId, settlementId: row.settlementId, actualPaise: row.amountPaise, details: { sourcePaymentId: row.paymentId } }));
      } else if (reversal.amountPaise !== row.amountPaise) {
        exceptions.push(draft('amount-mismatch', 'mismatched', row.entityId, row.reconDay, { entityId: row.entityId, settlementId: row.settlementId, orderId: reversal.orderId, expectedPaise: reversal.amountPaise, actualPaise: row.amountPaise, details: { transferId: reversal.transferId } }));
      } else matched += 1;
    } else if (row.type === 'adjustment') {
      exceptions.push(draft('adjustment', 'unmatched', `${row.entityId}|${row.settlementId ?? ''}`, row.reconDay, { entityId: row.entityId, settlementId: row.settlementId, actualPaise: row.creditPaise - row.debitPaise }));
    }
  }

  exceptions.push(...judgeSettlements(input));
  const bank = judgeBank(input);
  exceptions.push(...bank.exceptions);
  matched += bank.matched;
  exceptions.push(...judgeCaptures(input));
  exceptions.push(...judgeOwed(input));

  // A reference can surface from two paths (e.g. a payment row seen on two days): keep one.
  const unique = new Map(exceptions.map((e) => [e.key, e]));
  return { exceptions: [...unique.values()], matched };
}

/** What we owe that did not happen: refunds refused or failed, splits not processed past their
 * due date, and a split that processed after it was owed offline. */
export function judgeOwed(input: Pick<ReconInput, 'owed' | 'asOf' | 'holidays'>): ExceptionDraft[] {
  const out: ExceptionDraft[] = [];
  for (const o of input.owed) {
    const refs = { orderId: o.orderId, expectedPaise: o.amountPaise, details: { [o.kind]: o.id, paymentId: o.paymentId, code: o.code, ourStatus: o.status } };
    if (o.kind === 'refund' && o.status === 'rejected') out.push(draft('refund-rejected', 'unmatched', o.id, o.day, refs));
    else if (o.kind === 'refund' && o.status === 'failed') out.push(draft('refund-failed', 'unmatched', o.id, o.day, refs));
    else if (o.kind === 'split' && o.processedAfterFinal) out.push(draft('split-paid-after-owed-offline', 'mismatched', o.id, o.day, refs));
    else if (o.kind === 'split' && o.status === 'expected' && settlementDueDate(o.day, input.holidays) < input.asOf) {
      out.push(draft('split-not-processed', 'unmatched', o.id, o.day, refs));
    }
  }
  return out;
}

function judgePayment(
  entityId: string,
  rows: GatewayRow[],
  idx: { moneyInById: Map<string, AppMoneyIn>; moneyInByGatewayOrder: Map<string, AppMoneyIn>; paymentsById: Map<string, AppPayment> },
): { exceptions: ExceptionDraft[]; matched: boolean } {
  const first = rows[0]!;
  const day = rows.map((r) => r.reconDay).sort()[0]!;
  const refs = { entityId, settlementId: first.settlementId };
  const held = rows.filter((r) => r.onHold || !r.settled);
  const settled = rows.filter((r) => r.settled && !r.onHold);
  const out: ExceptionDraft[] = [];
  // A held row stays stored after the hold is released; only a hold with nothing settled counts.
  if (held.length > 0 && settled.length === 0) {
    out.push(draft('on-hold', 'expected', entityId, held[0]!.reconDay, { ...refs, settlementId: null, actualPaise: first.amountPaise }));
  }
  if (settled.length === 0) return { exceptions: out, matched: false };

  // By our receipt first, then by the gateway order id, then a payment we know as an orphan.
  const payment = idx.paymentsById.get(entityId);
  const target = (first.orderReceipt ? idx.moneyInById.get(first.orderReceipt) : undefined)
    ?? (first.gatewayOrderId ? idx.moneyInByGatewayOrder.get(first.gatewayOrderId) : undefined);
  if (!target && !payment) {
    out.push(draft('settled-not-in-app', 'unmatched', entityId, day, { ...refs, actualPaise: first.amountPaise, details: { orderReceipt: first.orderReceipt, gatewayOrderId: first.gatewayOrderId } }));
    return { exceptions: out, matched: false };
  }
  // The gateway settled money for an order of ours but we recorded no payment (webhook missed, order
  // still pending): the order's share is not evidence that we know of this money.
  if (!payment) {
    out.push(draft('settled-not-in-app', 'unmatched', entityId, day, { ...refs, orderId: target!.kind === 'order' ? target!.id : null, actualPaise: first.amountPaise, details: { [target!.kind]: target!.id, note: 'no captured payment recorded' } }));
    return { exceptions: out, matched: false };
  }
  const orderId = target?.kind === 'order' ? target.id : payment.orderId;
  const expectedAmount = payment.amountPaise;
  const amount = first.amountPaise;
  const fee = first.feePaise;
  const credited = settled.reduce((sum, r) => sum + r.creditPaise, 0);
  const net = amount - fee;
  let clean = true;
  if (amount !== expectedAmount) {
    out.push(draft('amount-mismatch', 'mismatched', entityId, day, { ...refs, orderId, expectedPaise: expectedAmount, actualPaise: amount }));
    clean = false;
  }
  const feeDiffers = payment?.feePaise != null && payment.feePaise !== fee;
  const taxDiffers = payment?.taxPaise != null && payment.taxPaise !== first.taxPaise;
  if (feeDiffers || taxDiffers) {
    out.push(draft('fee-mismatch', 'mismatched', entityId, day, { ...refs, orderId, expectedPaise: payment!.feePaise, actualPaise: fee, details: { expectedTaxPaise: payment!.taxPaise, actualTaxPaise: first.taxPaise } }));
    clean = false;
  }
  if (credited < net) {
    out.push(draft('partially-settled', 'expected', entityId, day, { ...refs, orderId, expectedPaise: net, actualPaise: credited, details: { parts: settled.length } }));
    clean = false;
  } else if (credited > net) {
    out.push(draft('amount-mismatch', 'mismatched', `${entityId}|credit`, day, { ...refs, orderId, expectedPaise: net, actualPaise: credited, details: { note: 'credited more than amount − fee' } }));
    clean = false;
  }
  return { exceptions: out, matched: clean };
}

/** Whether the ledger says this transfer pays it: a live discharge of the payout or split that names
 * THIS transfer, or is in flight and names none yet. A payout marked paid externally (its discharge an
 * external transfer), cancelled, failed or waiting has none. */
function weConsiderPaidBy(transfer: AppTransfer, transferId: string): boolean {
  const live = transfer.ledger;
  return live !== null && (live.transferId === null || live.transferId === transferId);
}

function findTransfer(
  row: GatewayRow,
  idx: { transfersByProviderId: Map<string, AppTransfer>; payoutsById: Map<string, AppTransfer>; splitsByOrderId: Map<string, AppTransfer>; paymentsById: Map<string, AppPayment> },
): AppTransfer | undefined {
  const byId = idx.transfersByProviderId.get(row.entityId);
  if (byId) return byId;
  // The payout id rides in the transfer notes (our recovery key), e.g. before we recorded the id.
  const byNote = row.noteTransactionId ? idx.payoutsById.get(row.noteTransactionId) : undefined;
  if (byNote && (byNote.providerTransferId === null || byNote.providerTransferId === row.entityId)) return byNote;
  // A Route split whose transfer id money-in has not recorded yet: via its source payment's order.
  const orderId = row.paymentId ? idx.paymentsById.get(row.paymentId)?.orderId : undefined;
  const split = orderId ? idx.splitsByOrderId.get(orderId) : undefined;
  if (split && split.providerTransferId === null) return split;
  return undefined;
}

function judgeSettlements(input: ReconInput): ExceptionDraft[] {
  const out: ExceptionDraft[] = [];
  const sums = new Map<string, number>();
  for (const row of input.rows) {
    if (!row.settlementId || !row.settled) continue;
    sums.set(row.settlementId, (sums.get(row.settlementId) ?? 0) + row.creditPaise - row.debitPaise);
  }
  for (const s of input.settlements) {
    const sum = sums.get(s.id) ?? 0;
    if (sum !== s.amountPaise) {
      out.push(draft('settlement-sum-mismatch', 'mismatched', s.id, s.settledDay, { settlementId: s.id, expectedPaise: sum, actualPaise: s.amountPaise }));
    }
  }
  return out;
}

function judgeBank(input: ReconInput): { exceptions: ExceptionDraft[]; matched: number } {
  const out: ExceptionDraft[] = [];
  let matched = 0;
  const linesByUtr = groupBy(input.bankLines, (l) => l.utrNormalised);
  for (const s of input.settlements) {
    const lines = s.utrNormalised ? linesByUtr.get(s.utrNormalised) ?? [] : [];
    if (lines.some((l) => l.amountPaise === s.amountPaise)) {
      matched += 1;
      continue;
    }
    const sameUtr = lines[0];
    const klass: ExceptionClass = sameUtr ? 'mismatched' : input.asOf <= bankCreditDueDate(s.settledDay, input.holidays) ? 'expected' : 'unmatched';
    out.push(draft('settlement-without-bank-credit', klass, s.id, s.settledDay, { settlementId: s.id, expectedPaise: s.amountPaise, actualPaise: sameUtr?.amountPaise ?? null, bankLineId: sameUtr?.id ?? null, details: { utr: s.utrNormalised } }));
  }
  const settlementKeys = new Set([...input.settlementsForBankLines, ...input.settlements].map((s: SettlementRecord) => `${s.utrNormalised}|${s.amountPaise}`));
  for (const line of input.bankLines) {
    if (!inWindow(line.valueDate, input)) continue;
    if (settlementKeys.has(`${line.utrNormalised}|${line.amountPaise}`)) continue;
    out.push(draft('unmatched-bank-credit', 'unmatched', String(line.id), line.valueDate, { bankLineId: line.id, actualPaise: line.amountPaise, details: { utr: line.utrNormalised } }));
  }
  return { exceptions: out, matched };
}

/** Captures that should have settled: before the due date a missing settlement is expected. */
function judgeCaptures(input: ReconInput): ExceptionDraft[] {
  const out: ExceptionDraft[] = [];
  for (const p of input.captures) {
    if (!p.capturedAt || input.settledPaymentIds.has(p.id) || input.heldPaymentIds.has(p.id)) continue;
    const captureDay = istDateOf(p.capturedAt);
    const dueDay = settlementDueDate(captureDay, input.holidays);
    if (!inWindow(captureDay, input) && !inWindow(dueDay, input)) continue;
    const klass: ExceptionClass = input.asOf <= dueDay ? 'expected' : 'unmatched';
    out.push(draft('captured-not-settled', klass, p.id, captureDay, { entityId: p.id, orderId: p.orderId, expectedPaise: p.amountPaise, details: { captureDay, dueDay } }));
  }
  return out;
}
