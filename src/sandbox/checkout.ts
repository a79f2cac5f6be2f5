/** Orders and the checkout simulation: pay (authorise + capture), fail, late authorisation, and
 * the capture API. Capturing credits the platform balance with amount − fee and starts the order's
 * Route transfers. Webhooks: payment.authorized, payment.captured, order.paid, payment.failed. */
import type { z } from 'zod';
import type { SandboxContext } from './context';
import { newOrder, newPayment, paymentFee, type OrderEntity, type PaymentEntity } from './entities';
import { badRequest, idNotFound } from './errors';
import { checkAmount, checkCurrency, checkNotes, type orderBody } from './rules';
import { orderTransfers, runOrderTransfers } from './transfers';
import { randomInt } from 'node:crypto';

const randomDigits = (n: number): string => Array.from({ length: n }, () => randomInt(10)).join('');

export function createOrder(ctx: SandboxContext, body: z.output<typeof orderBody>): OrderEntity {
  checkAmount(body.amount);
  checkCurrency(body.currency);
  const notes = checkNotes(body.notes);
  if (body.transfers && body.partial_payment) throw badRequest('partial_payment must be false for an order with transfers', 'partial_payment');
  const order = newOrder({ amount: body.amount, currency: body.currency, receipt: body.receipt ?? null, notes, createdAt: ctx.clock.nowSec() });
  if (body.transfers) order.transfers = orderTransfers(ctx, order, body.transfers);
  ctx.state.orders.set(order.id, order);
  return order;
}

export function fetchOrder(ctx: SandboxContext, id: string): OrderEntity {
  const order = ctx.state.orders.get(id);
  if (!order) throw idNotFound();
  return order;
}

export function fetchPayment(ctx: SandboxContext, id: string): PaymentEntity {
  const payment = ctx.state.payments.get(id);
  if (!payment) throw idNotFound();
  return payment;
}

/** GET /v1/payments: every payment created in [from, to] (Unix seconds, either open), newest first,
 * `count` from `skip`. Payments are kept in the order they were made, so the newest are read from the
 * end and only as far as the page needs. */
export function listPayments(ctx: SandboxContext, q: { from: number | null; to: number | null; count: number; skip: number }): PaymentEntity[] {
  const all = [...ctx.state.payments.values()];
  const page: PaymentEntity[] = [];
  let skipped = 0;
  for (let i = all.length - 1; i >= 0 && page.length < q.count; i--) {
    const p = all[i]!;
    if ((q.to !== null && p.created_at > q.to) || (q.from !== null && p.created_at < q.from)) continue;
    if (skipped < q.skip) { skipped++; continue; }
    page.push(p);
  }
  return page;
}

export function orderPayments(ctx: SandboxContext, orderId: string): PaymentEntity[] {
  fetchOrder(ctx, orderId);
  return [...ctx.state.payments.values()].filter((p) => p.order_id === orderId).reverse();
}

function startPayment(ctx: SandboxContext, order: OrderEntity, method: string): PaymentEntity {
  if (order.status === 'paid') throw badRequest('Order has already been paid', 'order_id');
  const payment = newPayment({ amount: order.amount_due, orderId: order.id, method, createdAt: ctx.clock.nowSec() });
  ctx.state.payments.set(payment.id, payment);
  ctx.state.paymentBooks.set(payment.id, { capturedAt: null, onHold: false });
  order.attempts += 1;
  order.status = 'attempted';
  ctx.state.orders.markChanged(order.id);
  return payment;
}

function authorize(ctx: SandboxContext, payment: PaymentEntity): void {
  payment.status = 'authorized';
  payment.error_code = payment.error_description = payment.error_source = payment.error_step = payment.error_reason = null;
  const reference = randomDigits(12);
  payment.acquirer_data = Object.fromEntries(
    Object.keys(payment.acquirer_data).map((k) => [k, k === 'auth_code' ? reference.slice(0, 6) : reference]),
  );
  ctx.state.payments.markChanged(payment.id);
  ctx.webhooks.emit('payment.authorized', { payment });
}

/** authorized → captured: the fee is charged, the order is paid and its transfers run. */
export function capture(ctx: SandboxContext, payment: PaymentEntity, opts: { failTransfers?: boolean } = {}): void {
  const { fee, tax } = paymentFee(payment.amount);
  payment.status = 'captured';
  payment.captured = true;
  payment.fee = fee;
  payment.tax = tax;
  ctx.state.payments.markChanged(payment.id);
  ctx.state.paymentBooks.set(payment.id, { ...(ctx.state.paymentBooks.get(payment.id) ?? { onHold: false }), capturedAt: ctx.clock.nowSec() });
  ctx.state.platformBalance += payment.amount - fee;
  ctx.webhooks.emit('payment.captured', { payment });
  const order = payment.order_id ? ctx.state.orders.get(payment.order_id) : undefined;
  if (order && order.status !== 'paid') {
    order.amount_paid = payment.amount;
    order.amount_due = 0;
    order.status = 'paid';
    ctx.state.orders.markChanged(order.id);
    ctx.webhooks.emit('order.paid', { payment, order });
    runOrderTransfers(ctx, order, payment, opts);
  }
}

/** Checkout: authorise and (unless told otherwise) capture the whole order amount. */
export function payOrder(ctx: SandboxContext, orderId: string, opts: { method?: string; capture?: boolean; failTransfers?: boolean } = {}): PaymentEntity {
  const payment = startPayment(ctx, fetchOrder(ctx, orderId), opts.method ?? 'card');
  authorize(ctx, payment);
  if (opts.capture !== false) capture(ctx, payment, { failTransfers: opts.failTransfers });
  return payment;
}

export function failPayment(ctx: SandboxContext, orderId: string, opts: { method?: string } = {}): PaymentEntity {
  const payment = startPayment(ctx, fetchOrder(ctx, orderId), opts.method ?? 'card');
  payment.status = 'failed';
  payment.error_code = 'BAD_REQUEST_ERROR';
  payment.error_description = "Your payment didn't go through as it was declined by the bank. Try another payment method or contact your bank.";
  payment.error_source = 'bank';
  payment.error_step = 'payment_authorization';
  payment.error_reason = 'payment_failed';
  ctx.state.payments.markChanged(payment.id);
  ctx.webhooks.emit('payment.failed', { payment });
  return payment;
}

/** Late authorisation: the bank confirms a payment already reported failed (reference §6.1). */
export function lateAuthorize(ctx: SandboxContext, paymentId: string): PaymentEntity {
  const payment = fetchPayment(ctx, paymentId);
  if (payment.status !== 'failed') throw badRequest(`payment ${paymentId} is ${payment.status}, not failed`, 'payment_id');
  authorize(ctx, payment);
  capture(ctx, payment);
  return payment;
}

/** A captured payment on a gateway order that the platform never created (e.g. from a stale page). */
export function capturedPaymentWithoutOrder(ctx: SandboxContext, amount: number): PaymentEntity {
  const order = createOrder(ctx, { amount, currency: 'INR', receipt: null, notes: {} });
  return payOrder(ctx, order.id);
}

/** POST /v1/payments/:id/capture. */
export function captureByApi(ctx: SandboxContext, paymentId: string, amount: number, currency: string): PaymentEntity {
  const payment = fetchPayment(ctx, paymentId);
  if (payment.status === 'captured' || payment.status === 'refunded') throw badRequest('This payment has already been captured', 'payment_id');
  if (payment.status !== 'authorized') throw badRequest('Only payments which have been authorized and not yet captured can be captured', 'payment_id');
  if (amount !== payment.amount) throw badRequest('Capture amount must be equal to the amount authorized', 'amount');
  checkCurrency(currency);
  capture(ctx, payment);
  return payment;
}
