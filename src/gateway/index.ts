/** The Razorpay adapter: every gateway call of the platform passes through here, on the official
 * SDK (configured in sdkClient.ts), with every answer parsed by zod and every failure classified
 * once (classify.ts). Money-moving calls return a MoneyOutcome; the others throw GatewayCallError. */
import type { z } from 'zod';
import { logger } from '../logger';
import { classifyFailure, type FailedOutcome } from './classify';
import { collectionOf, orderSchema, paymentSchema, reconRowSchema, refundSchema, settlementSchema, transferSchema } from './schemas';
import { callSdk, createSdk, type GatewayConfig, type SdkCallResult } from './sdkClient';
import { GatewayCallError, type Gateway, type MoneyOutcome, type RzpPayment } from './types';

export { validatePaymentSignature, validateWebhookSignature } from './signatures';
export { ProviderContractError, classifyFailure } from './classify';
export type { GatewayConfig } from './sdkClient';

/** Razorpay's maximum page sizes: generic lists 100, the settlement recon report 1000. */
const LIST_PAGE = 100;
const RECON_PAGE = 1000;

function failureOf(operation: string, result: Extract<SdkCallResult<unknown>, { ok: false }>): FailedOutcome {
  // The SDK rejects with plain objects without `.message`: log the whole thing.
  logger.error({ component: 'gateway', err: result.failure, transport: result.transportError, operation }, 'razorpay call failed');
  return classifyFailure(result.failure, result.transportError);
}

function invalidAnswer(operation: string, issues: z.core.$ZodIssue[], raw: unknown): FailedOutcome {
  logger.error({ component: 'gateway', operation, issues, raw }, 'razorpay answer failed validation');
  return { type: 'unknown', reason: 'no_response', httpStatus: null, detail: `${operation}: 2xx answer failed validation: ${JSON.stringify(issues).slice(0, 500)}` };
}

async function moneyCall<S extends z.ZodType>(operation: string, schema: S, headers: Record<string, string>, fn: () => Promise<unknown>): Promise<MoneyOutcome<z.output<S>>> {
  const result = await callSdk(headers, fn);
  if (!result.ok) return failureOf(operation, result);
  const parsed = schema.safeParse(result.value);
  // The provider answered 2xx, so it acted; an unreadable answer must go to the resolver, not be retried blindly.
  if (!parsed.success) return invalidAnswer(operation, parsed.error.issues, result.value);
  return { type: 'accepted', entity: parsed.data };
}

async function readCall<S extends z.ZodType>(operation: string, schema: S, fn: () => Promise<unknown>): Promise<z.output<S>> {
  const result = await callSdk({}, fn);
  if (!result.ok) throw new GatewayCallError(operation, failureOf(operation, result));
  const parsed = schema.safeParse(result.value);
  if (!parsed.success) throw new GatewayCallError(operation, invalidAnswer(operation, parsed.error.issues, result.value));
  return parsed.data;
}

const toUnixSeconds = (d: Date, round: 'floor' | 'ceil'): number => Math[round](d.getTime() / 1000);

export function createGateway(config: GatewayConfig): Gateway {
  const sdk = createSdk(config);
  const transfers = collectionOf(transferSchema);
  const payments = collectionOf(paymentSchema);
  const reconRows = collectionOf(reconRowSchema);

  const fetchPayment = (paymentId: string): Promise<RzpPayment> => readCall('payments.fetch', paymentSchema, () => sdk.payments.fetch(paymentId));

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

    capturePaymentIfNeeded: async (paymentId, amountPaise) => {
      const payment = await fetchPayment(paymentId);
      if (payment.status !== 'authorized') return payment;
      const result = await callSdk({}, () => sdk.payments.capture(paymentId, amountPaise, 'INR'));
      if (result.ok) return readCall('payments.capture', paymentSchema, async () => result.value);
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
      const byId = new Map<string, z.output<typeof transferSchema>>();
      for (let skip = 0; ; skip += LIST_PAGE) {
        const page = await readCall('transfers.list', transfers, () =>
          sdk.transfers.all({ from: toUnixSeconds(from, 'floor'), to: toUnixSeconds(to, 'ceil'), count: LIST_PAGE, skip }),
        );
        // Newest first, paged by skip: a transfer created meanwhile shifts pages, so de-duplicate.
        for (const t of page.items) byId.set(t.id, t);
        if (page.items.length < LIST_PAGE) break;
      }
      return [...byId.values()];
    },

    createRefund: (input) =>
      moneyCall('refunds.create', refundSchema, {}, () =>
        sdk.payments.refund(input.paymentId, { amount: input.amountPaise, receipt: input.receipt, notes: input.notes ?? {}, speed: 'normal' } as Parameters<typeof sdk.payments.refund>[1]),
      ),

    fetchRefund: (refundId) => readCall('refunds.fetch', refundSchema, () => sdk.refunds.fetch(refundId)),

    settlementReconRows: async ({ year, month, day }) => {
      const rows: Array<z.output<typeof reconRowSchema>> = [];
      for (let skip = 0; ; skip += RECON_PAGE) {
        const page = await readCall('settlements.recon', reconRows, () => sdk.settlements.reports({ year, month, day, count: RECON_PAGE, skip }));
        rows.push(...page.items);
        if (page.items.length < RECON_PAGE) break;
      }
      return rows;
    },

    fetchSettlement: (settlementId) => readCall('settlements.fetch', settlementSchema, () => sdk.settlements.fetch(settlementId)),
  };
}
