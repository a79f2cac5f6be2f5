/** Route transfers: direct (from the platform balance), payment-linked and order transfers, their
 * lifecycle (created/pending → processed or failed, with webhooks; a failed order or payment transfer
 * retried by Razorpay up to 3 times on following days), reversals, and listing. A processed
 * transfer credits the linked account's balance; a reversal debits it and credits the platform. */
import type { z } from 'zod';
import type { SandboxContext } from './context';
import { newReversal, newTransfer, noTransferError, transferFee, type NotesJson, type OrderEntity, type PaymentEntity, type ReversalEntity, type TransferEntity } from './entities';
import { badRequest, idNotFound, transferRejection, TRANSFER_REJECTIONS } from './errors';
import { ACCOUNT_ID } from './ids';
import { checkAmount, checkCurrency, checkNotes, type directTransferBody } from './rules';

type TransferItem = z.output<typeof directTransferBody>;

/** Razorpay retries a failed order transfer on following days, up to 3 times (reference §1.2). */
export const FAILED_TRANSFER_RETRIES = 3;

/** Why a transfer failed at processing time (reference §1.3, API-SRC ErrorCodeMapping). */
type ProcessingFailure = { code: string; description: string; reason: string; field: string | null };
const INSUFFICIENT_BALANCE: ProcessingFailure = { code: 'BAD_REQUEST_TRANSFER_INSUFFICIENT_BALANCE', ...TRANSFER_REJECTIONS.BAD_REQUEST_TRANSFER_INSUFFICIENT_BALANCE };
/** Documented rule (no code documented): no transfer once a refund has been started on the payment. */
const REFUND_STARTED: ProcessingFailure = { code: 'BAD_REQUEST_ERROR', description: 'Transfer cannot be made once a refund has been initiated on the payment', reason: 'refund_initiated', field: null };

/** The recipient must be a known, activated linked account. */
export function checkRecipient(ctx: SandboxContext, accountId: string): void {
  const account = ACCOUNT_ID.test(accountId) ? ctx.state.accounts.get(accountId) : undefined;
  if (!account) throw transferRejection('BAD_REQUEST_TRANSFER_INVALID_ACCOUNT_ID');
  if (account.status === 'suspended') throw transferRejection('BAD_REQUEST_TRANSFER_NOT_ALLOWED_TO_SUSPENDED_LINKED_ACCOUNT');
  if (account.status !== 'activated') throw transferRejection('BAD_REQUEST_TRANSFER_ACCOUNT_NOT_ACTIVATED');
}

function checkItem(ctx: SandboxContext, item: TransferItem, field: string): ReturnType<typeof checkNotes> {
  checkAmount(item.amount, field);
  checkCurrency(item.currency, 'transfers');
  const notes = checkNotes(item.notes);
  for (const key of item.linked_account_notes ?? []) {
    if (!(key in item.notes)) throw badRequest('Keys sent in linked_account_notes must exist in notes', 'linked_account_notes');
  }
  checkRecipient(ctx, item.account);
  return notes;
}

/** POST /v1/transfers. Insufficient balance is a synchronous 400 (API-SRC validator; the live
 * behaviour is unconfirmed). With no processing delay the transfer is processed at once, as the
 * documented direct-transfer sample shows (processed_at = created_at). */
export function createDirectTransfer(ctx: SandboxContext, item: TransferItem): TransferEntity {
  const notes = checkItem(ctx, item, 'amount');
  const { fees } = transferFee(item.amount);
  if (ctx.state.platformBalance < item.amount + fees) throw transferRejection('BAD_REQUEST_TRANSFER_INSUFFICIENT_BALANCE');
  ctx.state.platformBalance -= item.amount + fees;
  const transfer = newTransfer({
    source: ctx.options.platformAccountId, recipient: item.account, amount: item.amount, notes,
    linkedAccountNotes: item.linked_account_notes, onHold: item.on_hold, onHoldUntil: item.on_hold_until ?? null,
    status: 'pending', createdAt: ctx.clock.nowSec(),
  });
  ctx.state.transfers.set(transfer.id, transfer);
  processLater(ctx, transfer);
  return transfer;
}

/** With no processing delay a transfer is processed at once; otherwise after the delay. */
function processLater(ctx: SandboxContext, transfer: TransferEntity): void {
  if (ctx.options.transferProcessingDelayMs === 0) settleTransfer(ctx, transfer, 'processed');
  else ctx.timers.later(ctx.options.transferProcessingDelayMs, () => settleTransfer(ctx, transfer, 'processed'));
}

/** POST /v1/payments/:id/transfers: only from a captured payment, never more than it has left. */
export function createPaymentTransfers(ctx: SandboxContext, payment: PaymentEntity, items: TransferItem[]): TransferEntity[] {
  if (payment.status !== 'captured') throw badRequest('Only captured payments can be transferred', 'payment_id');
  if (payment.amount_refunded > 0) throw badRequest('Transfer cannot be made once a refund has been initiated on the payment');
  const checked = items.map((item, i) => checkItem(ctx, item, `transfers.${i}.amount`));
  const sum = items.reduce((s, t) => s + t.amount, 0);
  if (sum > payment.amount) throw badRequest('The sum of amount requested for transfer is greater than the captured amount', 'amount');
  if (sum > payment.amount - payment.amount_transferred) throw badRequest('Transfer amount exceeds amount available for transfer.', 'amount');
  payment.amount_transferred += sum;
  ctx.state.payments.markChanged(payment.id);
  return items.map((item, i) => {
    const transfer = newTransfer({
      source: payment.id, recipient: item.account, amount: item.amount, notes: checked[i]!, linkedAccountNotes: item.linked_account_notes,
      onHold: item.on_hold, onHoldUntil: item.on_hold_until ?? null, status: 'pending', createdAt: ctx.clock.nowSec(),
    });
    ctx.state.transfers.set(transfer.id, transfer);
    processLater(ctx, transfer);
    return transfer;
  });
}

/** Order transfers are validated when the order is created and run when its payment is captured. */
export function orderTransfers(ctx: SandboxContext, order: { id: string; amount: number }, items: TransferItem[]): TransferEntity[] {
  const checked = items.map((item, i) => checkItem(ctx, item, `transfers.${i}.amount`));
  if (items.reduce((s, t) => s + t.amount, 0) > order.amount) throw badRequest('The sum of amount requested for transfer is greater than the order amount', 'amount');
  return items.map((item, i) =>
    newTransfer({
      source: order.id, recipient: item.account, amount: item.amount, notes: checked[i]!, linkedAccountNotes: item.linked_account_notes,
      onHold: item.on_hold, onHoldUntil: item.on_hold_until ?? null, status: 'created', createdAt: ctx.clock.nowSec(),
    }),
  );
}

/** Called when the order's payment is captured: its transfers start (created → processed). */
export function runOrderTransfers(ctx: SandboxContext, order: OrderEntity, payment: PaymentEntity, opts: { failTransfers?: boolean } = {}): void {
  for (const transfer of order.transfers ?? []) {
    if (ctx.state.transfers.has(transfer.id)) continue;
    ctx.state.transfers.set(transfer.id, transfer);
    ctx.state.orderTransferPayments.set(transfer.id, payment.id);
    payment.amount_transferred += transfer.amount;
    ctx.state.payments.markChanged(payment.id);
    if (opts.failTransfers) settleTransfer(ctx, transfer, 'failed');
    else processLater(ctx, transfer);
  }
}

/** The payment whose money a payment or order transfer moves (null for a direct transfer). */
function fundingPayment(ctx: SandboxContext, transfer: TransferEntity): PaymentEntity | undefined {
  const paymentId = transfer.source.startsWith('pay_') ? transfer.source : ctx.state.orderTransferPayments.get(transfer.id);
  return paymentId ? ctx.state.payments.get(paymentId) : undefined;
}

const isDirect = (ctx: SandboxContext, transfer: TransferEntity): boolean => transfer.source === ctx.options.platformAccountId;

function creditLinkedAccount(ctx: SandboxContext, transfer: TransferEntity, paise: number): void {
  const account = ctx.state.accounts.get(transfer.recipient);
  if (!account) return;
  account.balance += paise;
  ctx.state.accounts.markChanged(account.id);
}

function markProcessed(ctx: SandboxContext, transfer: TransferEntity): void {
  transfer.status = 'processed';
  transfer.processed_at = ctx.clock.nowSec();
  transfer.settlement_status = transfer.on_hold ? 'on_hold' : 'pending';
  transfer.error = noTransferError(transfer.id);
  ctx.state.transfers.markChanged(transfer.id);
  creditLinkedAccount(ctx, transfer, transfer.amount);
}

function markFailed(ctx: SandboxContext, transfer: TransferEntity, failure: ProcessingFailure): void {
  transfer.status = 'failed';
  transfer.processed_at = ctx.clock.nowSec();
  transfer.error = { ...transfer.error, code: failure.code, description: failure.description, reason: failure.reason, field: failure.field, step: 'transfer_processing' };
  ctx.state.transfers.markChanged(transfer.id);
}

/** created/pending → processed or failed, with its webhook. A failed direct transfer gives the
 * platform its money back; an order transfer draws on the platform balance only when it processes. */
export function settleTransfer(ctx: SandboxContext, transfer: TransferEntity, to: 'processed' | 'failed'): void {
  if (transfer.status !== 'created' && transfer.status !== 'pending') return;
  const refundStarted = (fundingPayment(ctx, transfer)?.amount_refunded ?? 0) > 0;
  const outcome = to === 'processed' && refundStarted ? 'failed' : to;
  if (transfer.status === 'created') {
    const { fees, tax } = transferFee(transfer.amount);
    transfer.fees = fees;
    transfer.tax = tax;
    if (outcome === 'processed') ctx.state.platformBalance -= transfer.amount + fees;
  } else if (outcome === 'failed' && isDirect(ctx, transfer)) {
    ctx.state.platformBalance += transfer.amount + transfer.fees;
  }
  if (outcome === 'processed') markProcessed(ctx, transfer);
  else markFailed(ctx, transfer, refundStarted ? REFUND_STARTED : INSUFFICIENT_BALANCE);
  ctx.webhooks.emit(`transfer.${outcome}`, { transfer });
}

/** Control: move every created/pending transfer on now; the listed ids fail. */
export function processPendingTransfers(ctx: SandboxContext, fail: string[] = []): void {
  for (const transfer of ctx.state.transfers.values()) {
    if (transfer.status === 'created' || transfer.status === 'pending') settleTransfer(ctx, transfer, fail.includes(transfer.id) ? 'failed' : 'processed');
  }
}

/** Control: Razorpay's next-day retry of every failed order or payment transfer that has retries
 * left (or of the `only` ones); the `fail` ids fail again. A retry that processes draws on the
 * platform balance like the first run and sends transfer.processed; one that fails again sends
 * transfer.failed. */
export function retryFailedTransfers(ctx: SandboxContext, opts: { only?: string[]; fail?: string[] } = {}): TransferEntity[] {
  const fail = opts.fail ?? [];
  const retried: TransferEntity[] = [];
  for (const transfer of ctx.state.transfers.values()) {
    if (transfer.status !== 'failed' || isDirect(ctx, transfer)) continue;
    if (opts.only && !opts.only.includes(transfer.id)) continue;
    const used = ctx.state.transferRetries.get(transfer.id) ?? 0;
    if (used >= FAILED_TRANSFER_RETRIES) continue;
    ctx.state.transferRetries.set(transfer.id, used + 1);
    retried.push(transfer);
    const refundStarted = (fundingPayment(ctx, transfer)?.amount_refunded ?? 0) > 0;
    if (fail.includes(transfer.id) || refundStarted) {
      markFailed(ctx, transfer, refundStarted ? REFUND_STARTED : INSUFFICIENT_BALANCE);
      ctx.webhooks.emit('transfer.failed', { transfer });
      continue;
    }
    if (!transfer.source.startsWith('pay_')) ctx.state.platformBalance -= transfer.amount + transfer.fees;
    markProcessed(ctx, transfer);
    ctx.webhooks.emit('transfer.processed', { transfer });
  }
  return retried;
}

/** GET /v1/payments/:id/transfers: the payment's own transfers and the order transfers its capture ran. */
export function transfersOfPayment(ctx: SandboxContext, payment: PaymentEntity): TransferEntity[] {
  return [...ctx.state.transfers.values()].filter((t) => t.source === payment.id || ctx.state.orderTransferPayments.get(t.id) === payment.id);
}

const REVERSIBLE: ReadonlySet<TransferEntity['status']> = new Set(['processed', 'partially_reversed']);

/** Checks one reversal without changing anything (API-SRC messages); returns the amount. */
function checkReversal(ctx: SandboxContext, transfer: TransferEntity, amount: number | undefined): number {
  if (!REVERSIBLE.has(transfer.status)) throw badRequest('Only processed transfers can be reversed', 'transfer_id');
  const left = transfer.amount - transfer.amount_reversed;
  const paise = amount ?? left;
  if (paise <= 0) throw badRequest('The amount must be at least 1.', 'amount');
  if (paise > transfer.amount) throw badRequest('The reversal amount provided is greater than amount transferred', 'amount');
  if (paise > left) throw badRequest('The reversal amount provided is greater than the amount not reversed', 'amount');
  const account = ctx.state.accounts.get(transfer.recipient);
  if (!account || account.balance < paise) throw badRequest('The linked account does not have sufficient balance to process a reversal.', 'amount');
  return paise;
}

/** Debits the linked account, credits the platform, moves the transfer to (partially_)reversed and
 * sends transfer.reversed (every reversal: by the API, the Dashboard, or a refund's reverse_all). */
function applyReversal(ctx: SandboxContext, transfer: TransferEntity, paise: number, notes: NotesJson, customerRefundId: string | null): ReversalEntity {
  ctx.state.accounts.get(transfer.recipient)!.balance -= paise;
  ctx.state.accounts.markChanged(transfer.recipient);
  ctx.state.platformBalance += paise;
  transfer.amount_reversed += paise;
  transfer.status = transfer.amount_reversed === transfer.amount ? 'reversed' : 'partially_reversed';
  ctx.state.transfers.markChanged(transfer.id);
  const reversal = newReversal({
    transferId: transfer.id, amount: paise, notes, initiatorId: ctx.options.platformAccountId.replace(/^acc_/, ''), customerRefundId, createdAt: ctx.clock.nowSec(),
  });
  ctx.state.reversals.set(transfer.id, [...(ctx.state.reversals.get(transfer.id) ?? []), reversal]);
  // As every transfer.* event, the payload is the transfer's snapshot alone (reference §4.2).
  ctx.webhooks.emit('transfer.reversed', { transfer });
  return reversal;
}

/** POST /v1/transfers/:id/reversals (and the Dashboard's reversal, which does the same from outside
 * our app): `amount` omitted reverses what is not reversed yet. */
export function reverseTransfer(ctx: SandboxContext, transferId: string, body: { amount?: number; notes: Record<string, string> }): ReversalEntity {
  const transfer = fetchTransfer(ctx, transferId);
  const notes = checkNotes(body.notes);
  const paise = checkReversal(ctx, transfer, body.amount);
  return applyReversal(ctx, transfer, paise, notes, null);
}

export function reversalsOf(ctx: SandboxContext, transferId: string): ReversalEntity[] {
  fetchTransfer(ctx, transferId);
  return ctx.state.reversals.get(transferId) ?? [];
}

/** A refund with `reverse_all` (reference §1.1): every transfer made on the payment is recovered from
 * its linked account before the refund. A full refund reverses each transfer's remainder; a partial
 * refund is allowed only when the payment went to one account (documented), and reverses up to the
 * refund amount. Returns the reversals to apply once the refund itself has passed its checks. */
export function planReverseAll(ctx: SandboxContext, payment: PaymentEntity, refundAmount: number): Array<{ transfer: TransferEntity; paise: number }> {
  const moved = transfersOfPayment(ctx, payment).filter((t) => REVERSIBLE.has(t.status));
  const full = refundAmount === payment.amount - payment.amount_refunded;
  if (!full && new Set(moved.map((t) => t.recipient)).size > 1) {
    throw badRequest('reverse_all cannot be applied to a partial refund of a payment transferred to multiple accounts; use the transfer reversal API', 'reverse_all');
  }
  return moved.map((transfer) => {
    const left = transfer.amount - transfer.amount_reversed;
    return { transfer, paise: checkReversal(ctx, transfer, full ? left : Math.min(left, refundAmount)) };
  });
}

export function applyReverseAll(ctx: SandboxContext, plan: Array<{ transfer: TransferEntity; paise: number }>, refundId: string): ReversalEntity[] {
  return plan.map(({ transfer, paise }) => applyReversal(ctx, transfer, paise, [], refundId));
}

export function fetchTransfer(ctx: SandboxContext, id: string): TransferEntity {
  const transfer = ctx.state.transfers.get(id);
  if (!transfer) throw idNotFound();
  return transfer;
}

/** GET /v1/transfers: newest first, `from`/`to` inclusive on created_at, then skip/count. */
export function listTransfers(ctx: SandboxContext, q: { from: number | null; to: number | null; count: number; skip: number }): TransferEntity[] {
  const all = [...ctx.state.transfers.values()].filter((t) => (q.from === null || t.created_at >= q.from) && (q.to === null || t.created_at <= q.to));
  return all.reverse().sort((a, b) => b.created_at - a.created_at).slice(q.skip, q.skip + q.count);
}
