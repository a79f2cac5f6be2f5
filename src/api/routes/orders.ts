/** Orders: intake and lookup (the ordering service), cancellation (ordering or ops), and the cash
 * confirmation (a vendor key for its own orders, or ops). */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { cancelOrder } from '../../moneyin/cancelOrder';
import { confirmCashPayment } from '../../moneyin/confirmCash';
import type { MoneyInDeps } from '../../moneyin/deps';
import { orderView } from '../../moneyin/orderView';
import { placeOrder, placeOrderSchema } from '../../moneyin/placeOrder';
import { auditActor, principalOf, requires } from '../../auth/routeAuth';
import { mayActForVendor } from '../../auth/roles';
import { AppError } from '../errors';
import { documented } from '../openapi';

export const orderParams = z.object({ orderId: z.string().min(1).max(64) });

export async function orderRoutes(app: FastifyInstance, deps: MoneyInDeps): Promise<void> {
  app.post('/v1/orders', documented(requires('ordering'), { summary: 'Place an order (idempotent on clientReference); online orders get a Razorpay order for checkout', tags: ['orders'], body: placeOrderSchema, success: 201 }), async (request, reply) => {
    const { order, created } = await placeOrder(deps, placeOrderSchema.parse(request.body));
    // The key id lets the client open Razorpay checkout for `gatewayOrderId`.
    return reply.status(created ? 201 : 200).send({ order, checkout: order.gatewayOrderId ? { keyId: deps.config.RAZORPAY_KEY_ID, orderId: order.gatewayOrderId, amountPaise: order.customerSharePaise } : null });
  });

  app.get('/v1/orders/:orderId', documented(requires('ordering', 'ops'), { summary: 'An order', tags: ['orders'], params: orderParams }), async (request) => {
    const { orderId } = orderParams.parse(request.params);
    const order = await orderView(deps.db, orderId);
    if (!order) throw new AppError(404, 'order_not_found', `order ${orderId} does not exist`);
    return { order };
  });

  app.post('/v1/orders/:orderId/cash-confirmation', documented(requires('vendor', 'ops'), { summary: "The vendor confirms a cash order was paid at the counter (a vendor key: its own orders only)", tags: ['orders'], params: orderParams }), async (request) => {
    const { orderId } = orderParams.parse(request.params);
    const order = await orderView(deps.db, orderId);
    if (!order) throw new AppError(404, 'order_not_found', `order ${orderId} does not exist`);
    if (!mayActForVendor(principalOf(request).roles, order.vendorId)) {
      throw new AppError(403, 'forbidden', `order ${orderId} belongs to another vendor; a vendor key confirms only its own orders`);
    }
    return { order: await confirmCashPayment(deps, orderId, auditActor(request)) };
  });

  app.post('/v1/orders/:orderId/cancel', documented(requires('ordering', 'ops'), { summary: 'Cancel an unpaid order; its subsidy goes back to the wallet', tags: ['orders'], params: orderParams }), async (request) => {
    const { orderId } = orderParams.parse(request.params);
    return { order: await cancelOrder(deps, orderId, auditActor(request)) };
  });
}
