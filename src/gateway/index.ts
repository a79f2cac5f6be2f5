/** The Razorpay adapter: every gateway call of the platform passes through here, on the official
 * SDK (configured in sdkClient.ts), with every answer parsed by zod and every failure classified
 * once (classify.ts). Money-moving calls return a MoneyOutcome; the others throw GatewayCallError. */
import type { z } from 'zod';
import { logger } from '../logger';
import type { ProviderEndpoint } from '../contracts/providerEndpoints';
import { callOutcomeOf, countProviderCall } from './callCounts';
import { ProviderContractError, classifyFailure, type FailedOutcome } from './classify';
import { collectionOf, looseCollection, orderSchema, paymentSchema, reconRowSchema, refundSchema, reversalSchema, settlementSchema, transferSchema } from './schemas';
import { callSdk, createSdk, type GatewayConfig, type SdkCallResult } from './sdkClient';
import { inSpan, SpanKind } from '../observability/tracing';
import { GatewayCallError, PROVIDER_LIST_PAGE, type Gateway, type MoneyOutcome, type RzpPayment, type RzpReconRow, type RzpRefund, type RzpTransfer } from './types';

export { validatePaymentSignature, validateWebhookSignature } from './signatures';
export { ProviderContractError, classifyFailure } from './classify';
export type { GatewayConfig } from './sdkClient';

/** Razorpay's maximum page sizes: generic lists 100, the settlement recon report 1000. */
const LIST_PAGE = PROVIDER_LIST_PAGE;
const RECON_PAGE = 1000;

function failureOf(operation: ProviderEndpoint, result: Extract<SdkCallResult<unknown>, { ok: false }>): FailedOutcome {
  // The SDK rejects with plain objects without `.message`: log the whole thing. A definite answer
  // (a 4xx with Razorpay's code) is the caller's to judge and say in words (a rejected transfer is
  // parked and logged as such): here it is an info line; no answer, or one we cannot read, is an error.
  const fields = { component: 'gateway', err: result.failure, transport: result.transportError, operation };
  let outcome: FailedOutcome;
  try {
    outcome = classifyFailure(result.failure, result.transportError);
  } catch (err) {
    logger.error(fields, 'razorpay call failed');
    // A 4xx without a code still was a call; anything else rethrown here never reached the provider.
    if (err instanceof ProviderContractError) countProviderCall(operation, 'contract_error');
    throw err;
  }
  if (outcome.type === 'rejected') logger.info({ ...fields, code: outcome.error.code }, 'razorpay refused the call');
  else logger.error(fields, 'razorpay call failed');
  countProviderCall(operation, callOutcomeOf(outcome));
  return outcome;
}

/** One SDK call to Razorpay, counted by endpoint and outcome (callCounts.ts); a failure is counted
 * by failureOf, which every failed call goes through. */
async function providerCall<T>(operation: ProviderEndpoint, headers: Record<string, string>, fn: () => Promise<T>): Promise<SdkCallResult<T>> {
  // A client span per call, in the trace of the activity or request that makes it.
  return inSpan(`razorpay ${operation}`, { kind: SpanKind.CLIENT, attributes: { 'razorpay.operation': operation } }, async (span) => {
    const result = await callSdk(headers, fn);
    if (result.ok) countProviderCall(operation, 'ok');
    else span.setAttributes({ 'razorpay.failed': true, ...(result.transportError ? { 'razorpay.transport_error': result.transportError.code ?? 'unknown' } : {}) });
    return result;
  });
}

function invalidAnswer(operation: ProviderEndpoint, issues: z.core.$ZodIssue[], raw: unknown): FailedOutcome {
  logger.error({ component: 'gateway', operation, issues, raw }, 'razorpay answer failed validation');
  return { type: 'unknown', reason: 'no_response', httpStatus: null, detail: `${operation}: 2xx answer failed validation: ${JSON.stringify(issues).slice(0, 500)}` };
}

async function moneyCall<S extends z.ZodType>(operation: ProviderEndpoint, schema: S, headers: Record<string, string>, fn: () => Promise<unknown>): Promise<MoneyOutcome<z.output<S>>> {
  const result = await providerCall(operation, headers, fn);
  if (!result.ok) return failureOf(operation, result);
  const parsed = schema.safeParse(result.value);
  // The provider answered 2xx, so it acted; an unreadable answer must go to the resolver, not be retried blindly.
  if (!parsed.success) return invalidAnswer(operation, parsed.error.issues, result.value);
  return { type: 'accepted', entity: parsed.data };
}

async function readCall<S extends z.ZodType>(operation: ProviderEndpoint, schema: S, fn: () => Promise<unknown>): Promise<z.output<S>> {
  const result = await providerCall(operation, {}, fn);
  if (!result.ok) throw new GatewayCallError(operation, failureOf(operation, result));
  return parsedAnswer(operation, schema, result.value);
}

function parsedAnswer<S extends z.ZodType>(operation: ProviderEndpoint, schema: S, value: unknown): z.output<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new GatewayCallError(operation, invalidAnswer(operation, parsed.error.issues, value));
  return parsed.data;
}

const toUnixSeconds = (d: Date, round: 'floor' | 'ceil'): number => Math[round](d.getTime() / 1000);

/** Razorpay's documented format for X-Refund-Idempotency. Checked here: a bad key is our bug, and the
 * provider's 400 for it would look like a refusal of the refund. */
export const REFUND_IDEMPOTENCY_KEY = /^[A-Za-z0-9_-]{10,}$/;

/** Items of a listing, each parsed alone: one that does not parse is logged whole and skipped, so the
 * rest (e.g. the resolver's evidence) stays readable. */
function readableItems<S extends z.ZodType>(operation: ProviderEndpoint, schema: S, items: unknown[]): Array<z.output<S>> {
  const out: Array<z.output<S>> = [];
  for (const item of items) {
    const parsed = schema.safeParse(item);
    if (parsed.success) out.push(parsed.data);
    else logger.error({ component: 'gateway', operation, issues: parsed.error.issues, item }, 'razorpay listing item failed validation; skipped');
  }
  return out;
}

/** The SDK's own request helper, for documented endpoints it has no method for (GET /transfers/:id/reversals). */
interface SdkApi { get(req: { url: string; data?: Record<string, unknown> }): Promise<unknown> }

export function createGateway(config: GatewayConfig): Gateway {
  const sdk = createSdk(config);
  const sdkApi = (sdk as unknown as { api: SdkApi }).api;
  const payments = collectionOf(paymentSchema);
  const reconRows = collectionOf(reconRowSchema);

  const fetchPayment = (paymentId: string): Promise<RzpPayment> => readCall('payments.fetch', paymentSchema, () => sdk.payments.fetch(paymentId));

  /** Offset paging (`skip`), as the report API has it; the next page is asked for when the consumer wants it. */
  async function* reconPages({ year, month, day }: { year: number; month: number; day: number }): AsyncGenerator<RzpReconRow[]> {
    for (let skip = 0; ; skip += RECON_PAGE) {
      const page = await readCall('settlements.recon', reconRows, () => sdk.settlements.reports({ year, month, day, count: RECON_PAGE, skip }));
      if (page.items.length > 0) yield page.items;
      if (page.items.length < RECON_PAGE) return;
    }
  }

  return {
    createOrder: (input) =>
      readCall('orders.create', orderSchema, () =>
        sdk.orders.create({
          amount: input.amountPaise,
          currency: 'INR',
          receipt: input.receipt,
          notes: input.notes,
          ...(input.transfers && {
            transfers: input.transfers.map((t) => ({ account: t.account, amount: t.amountPaise, currency: 'INR', notes: t.notes ?? {}, on_hold: false })),
          }),
        } as Parameters<typeof sdk.orders.create>[0]),
      ),

    fetchOrder: (orderId) => readCall('orders.fetch', orderSchema, () => sdk.orders.fetch(orderId)),

    fetchOrderPayments: async (orderId) => (await readCall('orders.payments', payments, () => sdk.orders.fetchPayments(orderId))).items,

    fetchPayment,

    paymentsPage: async ({ fromSec, toSec, skip }) => {
      const page = await readCall('payments.list', looseCollection, () => sdk.payments.all({ from: fromSec, ...(toSec === undefined ? {} : { to: toSec }), count: LIST_PAGE, skip }));
      return { items: readableItems('payments.list', paymentSchema, page.items), size: page.items.length };
    },

    capturePaymentIfNeeded: async (paymentId, amountPaise) => {
      const payment = await fetchPayment(paymentId);
      if (payment.status !== 'authorized') return payment;
      const result = await providerCall('payments.capture', {}, () => sdk.payments.capture(paymentId, amountPaise, 'INR'));
      if (result.ok) return parsedAnswer('payments.capture', paymentSchema, result.value);
      const outcome = failureOf('payments.capture', result);
      // Captured in the meantime (auto-capture, a concurrent caller): the fact we wanted holds.
      const now = await fetchPayment(paymentId);
      if (now.status === 'captured') return now;
      throw new GatewayCallError('payments.capture', outcome);
    },

    createDirectTransfer: (input) =>
      moneyCall('transfers.create', transferSchema, { 'X-Transfer-Idempotency': input.idempotencyKey }, () =>
        sdk.transfers.create({ account: input.account, amount: input.amountPaise, currency: 'INR', notes: input.notes } as Parameters<typeof sdk.transfers.create>[0]),
      ),

    fetchTransfer: (transferId) => readCall('transfers.fetch', transferSchema, () => sdk.transfers.fetch(transferId)),

    listTransfers: async ({ from, to }) => {
      const byId = new Map<string, RzpTransfer>();
      for (let skip = 0; ; skip += LIST_PAGE) {
        const page = await readCall('transfers.list', looseCollection, () =>
          sdk.transfers.all({ from: toUnixSeconds(from, 'floor'), to: toUnixSeconds(to, 'ceil'), count: LIST_PAGE, skip }),
        );
        // Newest first, paged by skip: a transfer created meanwhile shifts pages, so de-duplicate.
        for (const t of readableItems('transfers.list', transferSchema, page.items)) byId.set(t.id, t);
        // The page size is what the provider sent, readable or not.
        if (page.items.length < LIST_PAGE) break;
      }
      return [...byId.values()];
    },

    listPaymentTransfers: async (paymentId) => {
      const page = await readCall('payments.transfers', looseCollection, () => sdk.payments.fetchTransfer(paymentId));
      return readableItems('payments.transfers', transferSchema, page.items);
    },

    reverseTransfer: (input) => {
      // The SDK's type makes amount required; the API does not (omitted: everything not yet reversed).
      const body = { ...(input.amountPaise !== undefined && { amount: input.amountPaise }), ...(input.notes && { notes: input.notes }) } as { amount: number };
      return moneyCall('transfers.reverse', reversalSchema, {}, () => sdk.transfers.reverse(input.transferId, body));
    },

    listTransferReversals: async (transferId) => {
      const page = await readCall('transfers.reversals', looseCollection, () => sdkApi.get({ url: `/transfers/${encodeURIComponent(transferId)}/reversals` }));
      return readableItems('transfers.reversals', reversalSchema, page.items);
    },

    createRefund: async (input) => {
      const idempotencyKey = input.idempotencyKey ?? input.receipt;
      if (!REFUND_IDEMPOTENCY_KEY.test(idempotencyKey)) throw new Error(`refund idempotency key ${JSON.stringify(idempotencyKey)} is not 10+ letters, digits, - or _`);
      return moneyCall('refunds.create', refundSchema, { 'X-Refund-Idempotency': idempotencyKey }, () =>
        sdk.payments.refund(input.paymentId, {
          amount: input.amountPaise, receipt: input.receipt, notes: input.notes ?? {}, speed: 'normal',
          // The documented sample sends 1.
          ...(input.reverseAll && { reverse_all: 1 }),
        } as Parameters<typeof sdk.payments.refund>[1]),
      );
    },

    fetchRefund: (refundId) => readCall('refunds.fetch', refundSchema, () => sdk.refunds.fetch(refundId)),

    listPaymentRefunds: async (paymentId) => {
      const byId = new Map<string, RzpRefund>();
      for (let skip = 0; ; skip += LIST_PAGE) {
        const page = await readCall('payments.refunds', looseCollection, () => sdk.payments.fetchMultipleRefund(paymentId, { count: LIST_PAGE, skip }));
        for (const r of readableItems('payments.refunds', refundSchema, page.items)) byId.set(r.id, r);
        if (page.items.length < LIST_PAGE) break;
      }
      return [...byId.values()];
    },

    settlementReconPages: reconPages,

    settlementReconRows: async (day) => {
      const rows: RzpReconRow[] = [];
      for await (const page of reconPages(day)) for (const row of page) rows.push(row);
      return rows;
    },

    fetchSettlement: (settlementId) => readCall('settlements.fetch', settlementSchema, () => sdk.settlements.fetch(settlementId)),
  };
}
