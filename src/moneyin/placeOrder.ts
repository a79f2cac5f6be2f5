/** Order intake (POST /v1/orders). One transaction records the order and debits the employer
 * wallet for the subsidy (and, for a wallet order, the employee wallet for the customer share,
 * which makes it paid at once); then, for an online order, the Razorpay order is created. A retry
 * with the same client reference returns the same order and the same gateway order. */
import { z } from 'zod';
import { AppError } from '../appError';
import { inTransaction, type Tx } from '../db/pool';
import { csvSafe, paiseSchema } from '../domain/schemas';
import { PAYMENT_METHODS } from '../domain/routing';
import { runAfterCommit, type AfterCommit } from './afterCommit';
import type { MoneyInDeps } from './deps';
import { employeeWalletForOrder } from './employees';
import { ensureGatewayOrder } from './gatewayOrders';
import { newOrderId } from './ids';
import { markPaid, startPayoutAfterCommit, type PaidVia } from './markPaid';
import { onlineCollectionFor, priceOrder, type OnlineCollection, type PricedOrder } from './orderRules';
import { orderView, type OrderView } from './orderView';
import { pairTermsOrFail } from './referenceData';
import { debitWallet, type WalletOwner } from './wallets';

// Ids and references reach the finance CSVs: none may start like a formula (issue 41).
const entityId = csvSafe(z.string().trim().min(1).max(64));

export const placeOrderSchema = z.object({
  clientReference: csvSafe(z.string().trim().min(1).max(100)),
  employerId: entityId,
  vendorId: entityId,
  employeeId: entityId,
  totalPaise: paiseSchema.positive(),
  subsidyPaise: paiseSchema,
  customerSharePaise: paiseSchema,
  paymentMethod: z.enum(PAYMENT_METHODS),
}).strict();
export type PlaceOrderRequest = z.infer<typeof placeOrderSchema>;

export async function placeOrder(deps: MoneyInDeps, req: PlaceOrderRequest): Promise<{ order: OrderView; created: boolean }> {
  // An online order needs a Razorpay call: admitted before anything is written (a 503 records nothing).
  const admission = req.paymentMethod === 'online' && req.customerSharePaise > 0 ? deps.providerBudget?.admit('order') : undefined;
  try {
    const { orderId, created, afterCommit } = await inTransaction(deps.db, (tx) => recordOrder(tx, deps, req));
    await runAfterCommit(afterCommit);
    const order = (await orderView(deps.db, orderId))!;
    if (order.paymentMethod === 'online' && order.status === 'pending' && !order.gatewayOrderId) {
      // Built from the stored row, so a retry asks for exactly what the first request recorded.
      const split = order.splitTransferPaise && order.splitLinkedAccountId ? { account: order.splitLinkedAccountId, amountPaise: order.splitTransferPaise } : null;
      order.gatewayOrderId = await ensureGatewayOrder(deps, { table: 'orders', id: orderId, amountPaise: order.customerSharePaise, notes: { order_id: orderId }, split }, admission);
    }
    return { order, created };
  } finally {
    admission?.close();
  }
}

type Collection = OnlineCollection | { kind: 'not_online' };
interface Recorded { orderId: string; created: boolean; afterCommit: AfterCommit[] }

async function recordOrder(tx: Tx, deps: MoneyInDeps, req: PlaceOrderRequest): Promise<Recorded> {
  const terms = await pairTermsOrFail(tx, req.employerId, req.vendorId);
  // Before anything is written: the employee's wallet pays only their own employer's orders.
  const employeeWallet = req.paymentMethod === 'wallet' ? await employeeWalletForOrder(tx, req.employerId, req.employeeId) : null;
  const priced = priceOrder(req, terms.commissionBps);
  if (priced === 'shares_do_not_add_up') {
    throw new AppError(400, 'shares_do_not_add_up', `subsidy ${req.subsidyPaise} + customer share ${req.customerSharePaise} must equal total ${req.totalPaise}`);
  }
  const collection: Collection = req.paymentMethod === 'online' ? onlineCollectionFor(priced, terms) : { kind: 'not_online' };
  if (collection.kind === 'below_gateway_minimum') {
    throw new AppError(422, 'customer_share_below_gateway_minimum', 'an online customer share must be 0 or at least 100 paise (Razorpay minimum); use the wallet or cash');
  }
  const split = collection.kind === 'gateway_order' ? collection.split : null;
  const orderId = newOrderId();
  const inserted = await tx.query(
    `INSERT INTO orders (id, client_reference, employer_id, vendor_id, employee_id, total_paise, subsidy_paise, customer_share_paise,
                         commission_bps, commission_paise, vendor_net_paise, payment_method, split_transfer_paise, split_linked_account_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
     ON CONFLICT (client_reference) DO NOTHING`,
    [orderId, req.clientReference, req.employerId, req.vendorId, req.employeeId, priced.totalPaise, priced.subsidyPaise, priced.customerSharePaise,
      priced.commissionBps, priced.commissionPaise, priced.vendorNetPaise, req.paymentMethod, split?.amountPaise ?? null, split?.account ?? null],
  );
  if (inserted.rowCount === 0) return { orderId: await sameOrderOrFail(tx, req), created: false, afterCommit: [] };

  if (priced.subsidyPaise > 0) await debitWallet(tx, { ownerKind: 'employer', ownerId: req.employerId }, priced.subsidyPaise, orderId);
  const paidAtOnce = await payNowIfNoCheckout(tx, employeeWallet, collection, priced, orderId);
  const afterCommit = paidAtOnce ? startPayoutAfterCommit(orderId, await markPaid(tx, orderId, { via: paidAtOnce }), deps.payoutStarter, deps.db) : [];
  return { orderId, created: true, afterCommit };
}

/** A wallet order (its employee's wallet, checked) is paid by its debit; an online order with
 * nothing to collect is paid already. */
async function payNowIfNoCheckout(tx: Tx, employeeWallet: WalletOwner | null, collection: Collection, priced: PricedOrder, orderId: string): Promise<PaidVia | null> {
  if (employeeWallet) {
    if (priced.customerSharePaise > 0) await debitWallet(tx, employeeWallet, priced.customerSharePaise, orderId);
    return 'wallet';
  }
  return collection.kind === 'nothing_to_collect' ? 'nothing_to_collect' : null;
}

/** A retried request must be the same request: the same reference for another order is refused. */
async function sameOrderOrFail(tx: Tx, req: PlaceOrderRequest): Promise<string> {
  const { rows } = await tx.query<{ id: string; employer_id: string; vendor_id: string; employee_id: string; total_paise: number; subsidy_paise: number; customer_share_paise: number; payment_method: string }>(
    'SELECT id, employer_id, vendor_id, employee_id, total_paise, subsidy_paise, customer_share_paise, payment_method FROM orders WHERE client_reference = $1',
    [req.clientReference],
  );
  const o = rows[0]!;
  const same = o.employer_id === req.employerId && o.vendor_id === req.vendorId && o.employee_id === req.employeeId && o.total_paise === req.totalPaise
    && o.subsidy_paise === req.subsidyPaise && o.customer_share_paise === req.customerSharePaise && o.payment_method === req.paymentMethod;
  if (!same) throw new AppError(409, 'client_reference_reused', `client reference ${req.clientReference} belongs to a different order`);
  return o.id;
}
