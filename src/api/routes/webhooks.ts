/** POST /webhooks/razorpay. This scope parses every body as raw bytes: the signature is over the
 * exact bytes Razorpay sent, never over re-serialised JSON. Which event does what: src/webhooks/eventMap.ts. */
import type { FastifyInstance } from 'fastify';
import { receiveRazorpayWebhook } from '../../webhooks/receive';
import type { WebhookContext } from '../../webhooks/types';
import { publicRoute } from '../../auth/routeAuth';
import { documented } from '../openapi';

const header = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

export async function webhookRoutes(app: FastifyInstance, ctx: WebhookContext): Promise<void> {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  app.post('/webhooks/razorpay', documented(publicRoute('razorpay-webhook-signature'), { summary: 'Razorpay webhooks, verified by X-Razorpay-Signature over the raw body; every signed, well-formed event is answered 2xx', tags: ['webhooks'] }), async (request) => {
    const rawBody = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    const receipt = await receiveRazorpayWebhook(ctx, {
      rawBody,
      signature: header(request.headers['x-razorpay-signature']),
      eventId: header(request.headers['x-razorpay-event-id']),
    });
    return { status: 'ok', ...receipt };
  });
}
