/** Route transfers: direct (from the platform balance), payment-linked and order transfers, their
 * lifecycle (created/pending → processed or failed, with webhooks) and listing. */
import type { z } from 'zod';
import type { SandboxContext } from './context';
import { newTransfer, transferFee, type OrderEntity, type PaymentEntity, type TransferEntity } from './entities';
import { badRequest, idNotFound, transferRejection, TRANSFER_REJECTIONS } from './errors';
import { ACCOUNT_ID } from './ids';
import { checkAmount, checkCurrency, checkNotes, type directTransferBody } from './rules';

type TransferItem = z.output<typeof directTransferBody>;

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
export function runOrderTransfers(ctx: SandboxContext, order: OrderEntity, payment: PaymentEntity): void {
  for (const transfer of order.transfers ?? []) {
    if (ctx.state.transfers.has(transfer.id)) continue;
    ctx.state.transfers.set(transfer.id, transfer);
    payment.amount_transferred += transfer.amount;
    processLater(ctx, transfer);
  }
}

/** created/pending → processed or failed, with its webhook. A failed direct transfer gives the
 * platform its money back. */
export function settleTransfer(ctx: SandboxContext, transfer: TransferEntity, to: 'processed' | 'failed'): void {
  if (transfer.status !== 'created' && transfer.status !== 'pending') return;
  const isDirect = transfer.source === ctx.options.platformAccountId;
  if (transfer.status === 'created') {
    // An order transfer draws on the captured payment's credit when it runs.
    const { fees, tax } = transferFee(transfer.amount);
    transfer.fees = fees;
    transfer.tax = tax;
    if (to === 'processed') ctx.state.platformBalance -= transfer.amount + fees;
  } else if (to === 'failed' && isDirect) {
    ctx.state.platformBalance += transfer.amount + transfer.fees;
  }
  transfer.status = to;
  transfer.processed_at = ctx.clock.nowSec();
  if (to === 'processed') {
    transfer.settlement_status = transfer.on_hold ? 'on_hold' : 'pending';
  } else {
    const code = 'BAD_REQUEST_TRANSFER_INSUFFICIENT_BALANCE';
    const e = TRANSFER_REJECTIONS[code];
    transfer.error = { ...transfer.error, code, description: e.description, reason: e.reason, field: e.field, step: 'transfer_processing' };
  }
  ctx.webhooks.emit(`transfer.${to}`, { transfer });
}

/** Control: move every created/pending transfer on now; the listed ids fail. */
export function processPendingTransfers(ctx: SandboxContext, fail: string[] = []): void {
  for (const transfer of ctx.state.transfers.values()) {
    if (transfer.status === 'created' || transfer.status === 'pending') settleTransfer(ctx, transfer, fail.includes(transfer.id) ? 'failed' : 'processed');
  }
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
