/** Orders: intake, lookup, and the vendor's cash confirmation. */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { cancelOrder } from '../../moneyin/cancelOrder';
import { confirmCashPayment } from '../../moneyin/confirmCash';
import type { MoneyInDeps } from '../../moneyin/deps';
import { orderView } from '../../moneyin/orderView';
import { placeOrder, placeOrderSchema } from '../../moneyin/placeOrder';
import { actorOf, requireToken } from '../auth';
import { AppError } from '../errors';

export const orderParams = z.object({ orderId: z.string().min(1).max(64) });

export async function orderRoutes(app: FastifyInstance, deps: MoneyInDeps): Promise<void> {
  app.post('/v1/orders', async (request, reply) => {
    const { order, created } = await placeOrder(deps, placeOrderSchema.parse(request.body));
    // The key id lets the client open Razorpay checkout for `gatewayOrderId`.
    return reply.status(created ? 201 : 200).send({ order, checkout: order.gatewayOrderId ? { keyId: deps.config.RAZORPAY_KEY_ID, orderId: order.gatewayOrderId, amountPaise: order.customerSharePaise } : null });
  });

  app.get('/v1/orders/:orderId', async (request) => {
    const { orderId } = orderParams.parse(request.params);
    const order = await orderView(deps.db, orderId);
    if (!order) throw new AppError(404, 'order_not_found', `order ${orderId} does not exist`);
    return { order };
  });

  app.post('/v1/orders/:orderId/cash-confirmation', { preHandler: requireToken(deps.config.ADMIN_API_TOKEN) }, async (request) => {
    const { orderId } = orderParams.parse(request.params);
    return { order: await confirmCashPayment(deps, orderId, actorOf(request, 'vendor')) };
  });

  app.post('/v1/orders/:orderId/cancel', { preHandler: requireToken(deps.config.ADMIN_API_TOKEN) }, async (request) => {
    const { orderId } = orderParams.parse(request.params);
    return { order: await cancelOrder(deps, orderId) };
  });
}
