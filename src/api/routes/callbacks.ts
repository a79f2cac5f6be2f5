/** Razorpay checkout's browser callback for an order. */
import type { FastifyInstance } from 'fastify';
import type { MoneyInDeps } from '../../moneyin/deps';
import { acceptPaymentCallback, paymentCallbackSchema } from '../../moneyin/paymentCallback';
import { publicRoute } from '../../auth/routeAuth';
import { orderParams } from './orders';
import { documented } from '../openapi';

export async function callbackRoutes(app: FastifyInstance, deps: MoneyInDeps): Promise<void> {
  app.post('/v1/orders/:orderId/payment-callback', documented(publicRoute('checkout-signature'), { summary: "Razorpay checkout's browser callback: a verified payment signature marks the order paid", tags: ['orders'], params: orderParams, body: paymentCallbackSchema }), async (request) => {
    const { orderId } = orderParams.parse(request.params);
    return { order: await acceptPaymentCallback(deps, orderId, paymentCallbackSchema.parse(request.body)) };
  });
}
