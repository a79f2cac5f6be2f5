/** The Razorpay API surface (/v1), as documented, behind HTTP Basic auth. Every route runs through
 * the fault guard under its endpoint name. Answers are snapshots taken when the call completed. */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { SandboxContext } from '../context';
import { invalidApiKey, RazorpayApiError } from '../errors';
import { captureByApi, createOrder, fetchOrder, fetchPayment, listPayments, orderPayments } from '../checkout';
import { createRefund, fetchRefund, refundsOfPayment } from '../refunds';
import { createDirectTransfer, createPaymentTransfers, fetchTransfer, listTransfers, reversalsOf, reverseTransfer, transfersOfPayment } from '../transfers';
import { captureBody, collection, directTransferBody, orderBody, parseListQuery, parseRequest, paymentTransfersBody, refundBody, reversalBody } from '../rules';
import type { IdempotencyStore } from '../idempotency';
import { fetchSettlement, reconRows, type SettlementBook } from '../settlements';
import { answerOf, runGuarded, type Answer } from './guard';

type Params = { id: string };
const ok = (body: unknown): Answer => ({ status: 200, body: structuredClone(body) });

/** Runs `create` under an idempotency header when one is sent: the first answer (rejections included)
 * is replayed for the same key and body; see idempotency.ts. Without a header, `create` just runs. */
async function idempotently(store: IdempotencyStore, key: string | string[] | undefined, body: unknown, hold: () => Promise<void>, create: () => Answer): Promise<Answer> {
  const answerOrRejection = (): Answer => {
    try {
      return create();
    } catch (err) {
      if (err instanceof RazorpayApiError) return answerOf(err);
      throw err;
    }
  };
  if (typeof key !== 'string') {
    await hold();
    return answerOrRejection();
  }
  const claim = store.claim(key, body ?? {});
  await hold();
  if (claim.kind === 'replay') return claim.answer;
  try {
    const answer = answerOrRejection();
    claim.complete(answer);
    return answer;
  } catch (err) {
    claim.abandon();
    throw err;
  }
}

function authorised(request: FastifyRequest, keyId: string, keySecret: string): boolean {
  const header = request.headers.authorization ?? '';
  if (!header.startsWith('Basic ')) return false;
  const given = Buffer.from(header.slice(6), 'base64');
  const expected = Buffer.from(`${keyId}:${keySecret}`);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export function apiRoutes(app: FastifyInstance, ctx: SandboxContext, book: SettlementBook, auth: { keyId: string; keySecret: string }, signal: AbortSignal): void {
  app.addHook('onRequest', async (request, reply) => {
    if (!request.url.startsWith('/v1/')) return;
    if (authorised(request, auth.keyId, auth.keySecret)) return;
    const answer = answerOf(invalidApiKey());
    return reply.code(answer.status).send(answer.body);
  });

  const params = (r: FastifyRequest): Params => r.params as Params;
  const query = (r: FastifyRequest): Record<string, unknown> => r.query as Record<string, unknown>;

  app.post('/v1/orders', (req, reply) => runGuarded(ctx, signal, 'orders.create', req, reply, async (hold) => {
    await hold();
    return ok(createOrder(ctx, parseRequest(orderBody, req.body)));
  }));
  app.get('/v1/orders/:id', (req, reply) => runGuarded(ctx, signal, 'orders.fetch', req, reply, async (hold) => {
    await hold();
    return ok(fetchOrder(ctx, params(req).id));
  }));
  app.get('/v1/orders/:id/payments', (req, reply) => runGuarded(ctx, signal, 'orders.payments', req, reply, async (hold) => {
    await hold();
    return ok(collection(orderPayments(ctx, params(req).id)));
  }));
  app.get('/v1/payments', (req, reply) => runGuarded(ctx, signal, 'payments.list', req, reply, async (hold) => {
    await hold();
    return ok(collection(listPayments(ctx, parseListQuery(query(req)))));
  }));
  app.get('/v1/payments/:id', (req, reply) => runGuarded(ctx, signal, 'payments.fetch', req, reply, async (hold) => {
    await hold();
    return ok(fetchPayment(ctx, params(req).id));
  }));
  app.post('/v1/payments/:id/capture', (req, reply) => runGuarded(ctx, signal, 'payments.capture', req, reply, async (hold) => {
    await hold();
    const body = parseRequest(captureBody, req.body);
    return ok(captureByApi(ctx, params(req).id, body.amount, body.currency));
  }));
  app.post('/v1/payments/:id/refund', (req, reply) => runGuarded(ctx, signal, 'refunds.create', req, reply, (hold) => {
    const key = req.headers['x-refund-idempotency'];
    // The key covers the payment as well as the body: the same body for another payment is a different request.
    return idempotently(ctx.refundIdempotency, key, { payment: params(req).id, body: req.body ?? {} }, hold, () => {
      const refund = createRefund(ctx, params(req).id, parseRequest(refundBody, req.body));
      if (typeof key === 'string') ctx.state.refundIdempotencyKeys.set(refund.id, key);
      return ok(refund);
    });
  }));
  app.get('/v1/payments/:id/refunds', (req, reply) => runGuarded(ctx, signal, 'payments.refunds', req, reply, async (hold) => {
    await hold();
    const q = parseListQuery(query(req));
    return ok(collection(refundsOfPayment(ctx, params(req).id).slice(q.skip, q.skip + q.count)));
  }));
  app.post('/v1/payments/:id/transfers', (req, reply) => runGuarded(ctx, signal, 'payments.transfers', req, reply, async (hold) => {
    await hold();
    const body = parseRequest(paymentTransfersBody, req.body);
    return ok(collection(createPaymentTransfers(ctx, fetchPayment(ctx, params(req).id), body.transfers)));
  }));
  app.get('/v1/payments/:id/transfers', (req, reply) => runGuarded(ctx, signal, 'transfers.list', req, reply, async (hold) => {
    await hold();
    return ok(collection(transfersOfPayment(ctx, fetchPayment(ctx, params(req).id))));
  }));
  app.get('/v1/refunds/:id', (req, reply) => runGuarded(ctx, signal, 'refunds.fetch', req, reply, async (hold) => {
    await hold();
    return ok(fetchRefund(ctx, params(req).id));
  }));

  app.post('/v1/transfers', (req, reply) => runGuarded(ctx, signal, 'transfers.create', req, reply, (hold) => {
    const key = req.headers['x-transfer-idempotency'];
    return idempotently(ctx.idempotency, key, req.body, hold, () => {
      const transfer = createDirectTransfer(ctx, parseRequest(directTransferBody, req.body));
      if (typeof key === 'string') ctx.state.transferIdempotencyKeys.set(transfer.id, key);
      return ok(transfer);
    });
  }));
  app.get('/v1/transfers', (req, reply) => runGuarded(ctx, signal, 'transfers.list', req, reply, async (hold) => {
    await hold();
    return ok(collection(listTransfers(ctx, parseListQuery(query(req)))));
  }));
  app.get('/v1/transfers/:id', (req, reply) => runGuarded(ctx, signal, 'transfers.fetch', req, reply, async (hold) => {
    await hold();
    return ok(fetchTransfer(ctx, params(req).id));
  }));
  app.post('/v1/transfers/:id/reversals', (req, reply) => runGuarded(ctx, signal, 'transfers.reverse', req, reply, async (hold) => {
    await hold();
    return ok(reverseTransfer(ctx, params(req).id, parseRequest(reversalBody, req.body)));
  }));
  app.get('/v1/transfers/:id/reversals', (req, reply) => runGuarded(ctx, signal, 'transfers.reversals', req, reply, async (hold) => {
    await hold();
    return ok(collection(reversalsOf(ctx, params(req).id)));
  }));

  app.get('/v1/settlements/recon/combined', (req, reply) => runGuarded(ctx, signal, 'settlements.recon', req, reply, async (hold) => {
    await hold();
    // Rows are immutable once written: no snapshot copy needed for 100k-row pulls.
    return { status: 200, body: collection(reconRows(book, query(req))) };
  }));
  app.get('/v1/settlements', (req, reply) => runGuarded(ctx, signal, 'settlements.list', req, reply, async (hold) => {
    await hold();
    const q = parseListQuery(query(req));
    const all = [...ctx.state.settlements.values()].filter((s) => (q.from === null || s.created_at >= q.from) && (q.to === null || s.created_at <= q.to)).reverse();
    return ok(collection(all.slice(q.skip, q.skip + q.count)));
  }));
  app.get('/v1/settlements/:id', (req, reply) => runGuarded(ctx, signal, 'settlements.fetch', req, reply, async (hold) => {
    await hold();
    return ok(fetchSettlement(ctx, params(req).id));
  }));
}
