/** POST /webhooks/razorpay. This scope parses every body as raw bytes: the signature is over the
 * exact bytes Razorpay sent, never over re-serialised JSON. Which event does what: src/webhooks/eventMap.ts. */
import type { FastifyInstance } from 'fastify';
import { receiveRazorpayWebhook } from '../../webhooks/receive';
import type { WebhookContext } from '../../webhooks/types';
import { publicRoute } from '../../auth/routeAuth';
import { documented } from '../openapi';
import { inSpan, SpanKind } from '../../observability/tracing';

/** Razorpay's largest events carry two or three entities (order.paid: payment and order), each
 * with at most 15 notes of 256 characters: ~15 kB. Four times that, and nothing larger is read. */
export const WEBHOOK_BODY_LIMIT_BYTES = 64 * 1024;

const header = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

export async function webhookRoutes(app: FastifyInstance, ctx: WebhookContext): Promise<void> {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  app.post('/webhooks/razorpay', {
    ...documented(publicRoute('razorpay-webhook-signature'), {
      summary: 'Razorpay webhooks, verified by X-Razorpay-Signature over the raw body; every signed JSON event is answered 2xx',
      description: 'Unsigned: 401. Not JSON, or no x-razorpay-event-id: 400. A signed event our schema refuses, or one whose created_at is outside the replay window, is answered 2xx with `setAside` and kept for ops (GET /ops/webhooks/quarantine), not applied.',
      tags: ['webhooks'],
    }),
    bodyLimit: WEBHOOK_BODY_LIMIT_BYTES,
  }, async (request) => {
    const rawBody = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    const eventId = header(request.headers['x-razorpay-event-id']);
    // The root of an order's trace: what the capture writes (the outbox row) carries it on.
    return inSpan('POST /webhooks/razorpay', { kind: SpanKind.SERVER, attributes: eventId ? { 'razorpay.event_id': eventId } : {} }, async (span) => {
      const receipt = await receiveRazorpayWebhook(ctx, { rawBody, signature: header(request.headers['x-razorpay-signature']), eventId });
      span.setAttributes({
        ...('event' in receipt && receipt.event ? { 'razorpay.event': String(receipt.event) } : {}),
        ...('setAside' in receipt && receipt.setAside ? { 'payouts.set_aside': String(receipt.setAside) } : {}),
      });
      return { status: 'ok', ...receipt };
    });
  });
}
