/** The browser's checkout callback (POST /v1/orders/:id/payment-callback). The checkout signature
 * proves Razorpay authorised this payment for this order; we then capture it if needed and go
 * through the same idempotent path as the webhook, which stays authoritative. */
import { z } from 'zod';
import { AppError } from '../appError';
import { inTransaction } from '../db/pool';
import { validatePaymentSignature } from '../gateway';
import { GatewayCallError } from '../gateway/types';
import { logger } from '../logger';
import { runAfterCommit } from './afterCommit';
import type { MoneyInDeps } from './deps';
import { orderView, type OrderView } from './orderView';
import { applyPaymentSnapshot } from './paymentSnapshots';
import { paymentEntitySchema } from './webhookEnvelope';

export const paymentCallbackSchema = z.object({
  razorpay_order_id: z.string().min(1).max(64),
  razorpay_payment_id: z.string().regex(/^pay_[A-Za-z0-9]{14}$/),
  razorpay_signature: z.string().regex(/^[0-9a-f]{64}$/),
});
export type PaymentCallback = z.infer<typeof paymentCallbackSchema>;

export async function acceptPaymentCallback(deps: MoneyInDeps, orderId: string, callback: PaymentCallback): Promise<OrderView> {
  const order = await orderView(deps.db, orderId);
  if (!order) throw new AppError(404, 'order_not_found', `order ${orderId} does not exist`);
  if (!order.gatewayOrderId || order.gatewayOrderId !== callback.razorpay_order_id) {
    throw new AppError(400, 'order_mismatch', 'the payment is not for this order');
  }
  const signed = validatePaymentSignature({ orderId: order.gatewayOrderId, paymentId: callback.razorpay_payment_id, signature: callback.razorpay_signature }, deps.config.RAZORPAY_KEY_SECRET);
  if (!signed) throw new AppError(400, 'invalid_payment_signature', 'razorpay_signature does not match');
  // Capturing for a cancelled order would only be refunded again; left uncaptured, Razorpay
  // releases the authorisation by itself after 3 days. (A cancel racing this capture is refunded.)
  if (order.status === 'cancelled' || order.status === 'expired') {
    throw new AppError(409, 'order_cancelled', `the order was ${order.status}; the payment is not captured and its authorisation lapses`);
  }

  const payment = paymentEntitySchema.parse(await captureOrFail(deps, callback.razorpay_payment_id, order.customerSharePaise));
  if (payment.order_id !== order.gatewayOrderId) throw new AppError(400, 'order_mismatch', 'the payment is not for this order');
  // Captured by our call just now (or before it, by auto-capture): our sighting is the capture evidence.
  const afterCommit = await inTransaction(deps.db, (tx) => applyPaymentSnapshot(tx, payment, 'callback', deps, null));
  await runAfterCommit(afterCommit);
  return (await orderView(deps.db, orderId))!;
}

async function captureOrFail(deps: MoneyInDeps, paymentId: string, amountPaise: number): Promise<unknown> {
  try {
    return await deps.gateway.capturePaymentIfNeeded(paymentId, amountPaise);
  } catch (err) {
    if (!(err instanceof GatewayCallError)) throw err;
    logger.error({ err, paymentId }, 'could not capture or fetch the payment for a checkout callback');
    // The webhook (or the sweep) will still mark the order paid once the capture is visible.
    throw new AppError(502, 'gateway_unavailable', 'the payment could not be confirmed with Razorpay yet; the order will update when it is');
  }
}
