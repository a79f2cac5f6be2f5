/** The control surface as HTTP routes under /_sandbox/ (sandbox-only; for the stack, the demo and
 * ops). Bodies are parsed with zod; a failure answers 400 in Razorpay's error shape. */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import type { SandboxControl } from '../control';
import type { SandboxControlExtras } from '../sandboxControl';
import { RazorpayApiError } from '../errors';

const accountStatus = z.enum(['activated', 'suspended', 'not_activated']);
const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);
const faultKind = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('latency'), ms: z.number().int().min(0) }),
  z.object({ kind: z.literal('server_error_before') }),
  z.object({ kind: z.literal('drop_after_commit') }),
  z.object({ kind: z.literal('delay_after_commit'), ms: z.number().int().min(0) }),
  z.object({ kind: z.literal('rate_limited') }),
]);
const faultRule = z.object({
  endpoint: z.enum([
    'orders.create', 'orders.fetch', 'orders.payments', 'payments.fetch', 'payments.list', 'payments.capture', 'payments.transfers', 'transfers.create',
    'transfers.fetch', 'transfers.list', 'refunds.create', 'refunds.fetch', 'settlements.recon', 'settlements.fetch', 'settlements.list',
    'transfers.reverse', 'transfers.reversals', 'payments.refunds', '*',
  ]),
  fault: faultKind,
  calls: z.array(z.number().int().min(1)).optional(),
  probability: z.number().min(0).max(1).optional(),
  seed: z.number().int().optional(),
  pathIncludes: z.string().min(1).optional(),
});

async function answer(reply: FastifyReply, fn: () => Promise<unknown>): Promise<void> {
  try {
    const result = await fn();
    if (typeof result === 'string') return void reply.code(200).header('content-type', 'text/csv; charset=utf-8').send(result);
    return void reply.code(200).send(result ?? { ok: true });
  } catch (err) {
    if (err instanceof RazorpayApiError) return void reply.code(err.httpStatus).send(err.body());
    const description = err instanceof z.ZodError ? err.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') : (err as Error).message;
    return void reply.code(400).send({ error: { code: 'SANDBOX_CONTROL_ERROR', description, source: 'NA', step: 'NA', reason: 'NA', metadata: {}, field: null } });
  }
}

export function controlRoutes(app: FastifyInstance, control: SandboxControl & SandboxControlExtras): void {
  const body = <S extends z.ZodType>(schema: S, b: unknown): z.output<S> => schema.parse(b ?? {});
  type Id = { id: string };

  app.post('/_sandbox/linked-accounts', (req, reply) =>
    answer(reply, async () => ({ id: await control.createLinkedAccount(body(z.object({ id: z.string().optional(), status: accountStatus.optional(), name: z.string().optional() }), req.body)) })));
  app.put('/_sandbox/linked-accounts/:id/status', (req, reply) =>
    answer(reply, () => control.setLinkedAccountStatus((req.params as Id).id, body(z.object({ status: accountStatus }), req.body).status)));
  app.get('/_sandbox/balance', (_req, reply) => answer(reply, async () => ({ paise: await control.platformBalance() })));
  app.put('/_sandbox/balance', (req, reply) => answer(reply, () => control.setPlatformBalance(body(z.object({ paise: z.number().int() }), req.body).paise)));
  const rps = z.number().min(0).max(10_000);
  app.put('/_sandbox/rate-limit', (req, reply) =>
    answer(reply, () => control.setRateLimit(body(z.object({ writeRps: rps, readRps: rps, burst: z.number().int().min(0).max(100_000) }), req.body))));

  app.post('/_sandbox/orders/:id/pay', (req, reply) =>
    answer(reply, () => control.payOrder((req.params as Id).id, body(z.object({ method: z.string().optional(), capture: z.boolean().optional(), failTransfers: z.boolean().optional() }), req.body))));
  app.post('/_sandbox/orders/:id/fail', (req, reply) => answer(reply, () => control.failPayment((req.params as Id).id)));
  app.post('/_sandbox/payments/:id/late-authorize', (req, reply) => answer(reply, () => control.lateAuthorize((req.params as Id).id)));
  app.post('/_sandbox/orphan-payments', (req, reply) =>
    answer(reply, () => control.capturedPaymentWithoutOrder(body(z.object({ amountPaise: z.number().int().min(100) }), req.body).amountPaise)));
  app.post('/_sandbox/payments/:id/hold', (req, reply) => answer(reply, () => control.putOnHold((req.params as Id).id)));

  app.put('/_sandbox/webhooks/target', (req, reply) => answer(reply, () => control.setWebhookTarget(body(z.object({ url: z.string().url().nullable() }), req.body).url)));
  app.put('/_sandbox/webhooks/delivery', (req, reply) => answer(reply, () => control.setWebhookDelivery(body(z.object({ enabled: z.boolean() }), req.body).enabled)));
  app.post('/_sandbox/webhooks/faults', (req, reply) =>
    answer(reply, () => {
      const b = body(z.object({
        fault: z.enum(['duplicate', 'out_of_order', 'drop_first_try', 'lose']), events: z.array(z.string()).optional(), count: z.number().int().min(1).optional(),
        bodyIncludes: z.string().min(1).optional(),
      }), req.body);
      return control.injectWebhookFault(b.fault, { events: b.events, count: b.count, bodyIncludes: b.bodyIncludes });
    }));
  app.get('/_sandbox/webhooks/events', (_req, reply) => answer(reply, () => control.webhookEvents()));
  app.post('/_sandbox/webhooks/drain', (req, reply) => answer(reply, () => control.drainWebhooks(body(z.object({ timeoutMs: z.number().int().min(1).optional() }), req.body).timeoutMs)));

  app.post('/_sandbox/faults', (req, reply) => answer(reply, () => control.injectFault(body(faultRule, req.body))));
  app.delete('/_sandbox/faults', (_req, reply) => answer(reply, () => control.clearFaults()));
  app.get('/_sandbox/call-counts', (_req, reply) => answer(reply, () => control.callCounts()));
  app.get('/_sandbox/call-path-counts', (_req, reply) => answer(reply, () => control.callPathCounts()));
  app.get('/_sandbox/faults/fired', (_req, reply) => answer(reply, () => control.faultsFired()));

  app.get('/_sandbox/transfers', (req, reply) => answer(reply, () => control.transfers(body(z.object({ recipient: z.string().optional() }), req.query))));
  app.post('/_sandbox/transfers/process', (req, reply) => answer(reply, () => control.processPendingTransfers(body(z.object({ fail: z.array(z.string()).optional() }), req.body))));
  app.post('/_sandbox/transfers/retry-failed', (req, reply) => answer(reply, () => control.retryFailedTransfers(body(z.object({ only: z.array(z.string()).optional(), fail: z.array(z.string()).optional() }), req.body))));
  app.get('/_sandbox/transfers/:id/reversals', (req, reply) => answer(reply, () => control.reversals((req.params as Id).id)));
  app.post('/_sandbox/transfers/:id/reverse', (req, reply) =>
    answer(reply, () => control.reverseTransferFromDashboard((req.params as Id).id,
      body(z.object({ amountPaise: z.number().int().min(1).optional(), notes: z.record(z.string(), z.string()).optional() }).strict(), req.body))));
  app.get('/_sandbox/linked-accounts/:id/balance', (req, reply) => answer(reply, async () => ({ paise: await control.linkedAccountBalance((req.params as Id).id) })));
  app.put('/_sandbox/linked-accounts/:id/balance', (req, reply) =>
    answer(reply, () => control.setLinkedAccountBalance((req.params as Id).id, body(z.object({ paise: z.number().int().min(0) }), req.body).paise)));
  app.get('/_sandbox/refunds', (_req, reply) => answer(reply, () => control.refunds()));

  app.get('/_sandbox/clock', (_req, reply) => answer(reply, async () => ({ unixMs: await control.now() })));
  app.put('/_sandbox/clock', (req, reply) => answer(reply, () => control.setClock(body(z.object({ unixMs: z.number().int().nullable() }), req.body).unixMs)));
  app.post('/_sandbox/settlements/run', (req, reply) =>
    answer(reply, () => control.runSettlements(body(z.object({ date: isoDate, holidays: z.array(isoDate).optional(), utrDelayMs: z.number().int().min(0).optional() }), req.body))));
  app.post('/_sandbox/adjustments', (req, reply) =>
    answer(reply, () => control.injectAdjustment(body(z.object({ amountPaise: z.number().int(), description: z.string().min(1), date: isoDate }), req.body))));
  app.get('/_sandbox/bank-statement.csv', (req, reply) => answer(reply, () => control.bankStatementCsv(body(z.object({ from: isoDate, to: isoDate }), req.query))));
  app.post('/_sandbox/reset', (_req, reply) => answer(reply, () => control.reset()));
}
