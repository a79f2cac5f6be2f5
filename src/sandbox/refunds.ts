/** Refunds: POST /v1/payments/:id/refund → pending (refund.created) → processed (refund.processed).
 * A receipt is unique across the merchant (per-merchant vs per-payment is unconfirmed; merchant-wide
 * is the stricter reading). The refund draws on the platform balance. With `reverse_all` every
 * transfer made on the payment is first recovered from its linked account (one reversal each, with
 * `customer_refund_id`), and the recovered money counts towards the balance the refund needs.
 * X-Refund-Idempotency is handled by the route (routes/api.ts). */
import type { z } from 'zod';
import type { SandboxContext } from './context';
import { newRefund, type RefundEntity } from './entities';
import { RazorpayApiError, badRequest, idNotFound } from './errors';
import { fetchPayment } from './checkout';
import { checkAmount, checkNotes, type refundBody } from './rules';
import { randomAlphanumeric } from './ids';
import { applyReverseAll, planReverseAll } from './transfers';

export function createRefund(ctx: SandboxContext, paymentId: string, body: z.output<typeof refundBody>): RefundEntity {
  const payment = fetchPayment(ctx, paymentId);
  const notes = checkNotes(body.notes);
  // Checked first, so a retry of a refund whose answer was lost is told it already exists.
  if (body.receipt && ctx.state.refundReceipts.has(body.receipt)) {
    throw new RazorpayApiError(400, 'BAD_REQUEST_REFUND_RECEIPT_ALREADY_PRESENT', 'Duplicate receipt found for this refund request.', { field: 'receipt', source: 'business', step: 'refund_initiation', reason: 'input_validation_failed' });
  }
  if (payment.status !== 'captured' && payment.status !== 'refunded') throw badRequest('The payment has not been captured', 'payment_id');
  const left = payment.amount - payment.amount_refunded;
  if (left === 0) throw badRequest('The payment has been fully refunded already', 'payment_id');
  const amount = body.amount ?? left;
  checkAmount(amount);
  if (amount > left) throw badRequest('The refund amount provided is greater than amount captured', 'amount');
  const reversals = body.reverse_all ? planReverseAll(ctx, payment, amount) : [];
  const recovered = reversals.reduce((sum, r) => sum + r.paise, 0);
  if (ctx.state.platformBalance + recovered < amount) {
    // The description is API-SRC's; the code string for it is unconfirmed.
    throw new RazorpayApiError(400, 'BAD_REQUEST_ERROR', 'Your account does not have enough balance to carry out the refund operation. You can add funds to your account from your Razorpay dashboard or capture new payments.', { field: 'amount', source: 'business', step: 'refund_initiation', reason: 'insufficient_balance' });
  }
  const refund = newRefund({ amount, paymentId, notes, receipt: body.receipt ?? null, speed: body.speed, createdAt: ctx.clock.nowSec() });
  applyReverseAll(ctx, reversals, refund.id);
  ctx.state.platformBalance -= amount;
  if (body.receipt) ctx.state.refundReceipts.add(body.receipt);
  ctx.state.refunds.set(refund.id, refund);
  payment.amount_refunded += amount;
  payment.refund_status = payment.amount_refunded === payment.amount ? 'full' : 'partial';
  if (payment.refund_status === 'full') payment.status = 'refunded';
  ctx.state.payments.markChanged(payment.id);
  ctx.webhooks.emit('refund.created', { refund, payment });
  ctx.timers.later(ctx.options.transferProcessingDelayMs, () => processRefund(ctx, refund));
  return refund;
}

export function processRefund(ctx: SandboxContext, refund: RefundEntity): void {
  if (refund.status !== 'pending') return;
  refund.status = 'processed';
  refund.acquirer_data = { arn: randomAlphanumeric(14).toUpperCase() };
  ctx.state.refunds.markChanged(refund.id);
  ctx.webhooks.emit('refund.processed', { refund, payment: ctx.state.payments.get(refund.payment_id) });
}

/** GET /payments/:id/refunds: the payment's refunds, newest first (as Razorpay lists). */
export function refundsOfPayment(ctx: SandboxContext, paymentId: string): RefundEntity[] {
  fetchPayment(ctx, paymentId);
  return [...ctx.state.refunds.values()].filter((r) => r.payment_id === paymentId).reverse();
}

export function fetchRefund(ctx: SandboxContext, id: string): RefundEntity {
  const refund = ctx.state.refunds.get(id);
  if (!refund) throw idNotFound();
  return refund;
}
