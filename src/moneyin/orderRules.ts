/** Pure money-in rules: pricing an order, whether its Razorpay order carries a Route split, and
 * what a paid order makes the vendor owed (design.md §2, §3). No I/O here. */
import { commissionPaise, MIN_TRANSFER_PAISE } from '../domain/money';
import { routeFor, type PaymentMethod, type Route, type SettlementMode } from '../domain/routing';

export interface OrderShares {
  totalPaise: number;
  subsidyPaise: number;
  customerSharePaise: number;
}

export interface PricedOrder extends OrderShares {
  commissionBps: number;
  commissionPaise: number;
  vendorNetPaise: number;
}

/** Why an order is refused before anything is written. */
export type PricingProblem = 'shares_do_not_add_up';

export function priceOrder(shares: OrderShares, commissionBps: number): PricedOrder | PricingProblem {
  if (shares.subsidyPaise + shares.customerSharePaise !== shares.totalPaise) return 'shares_do_not_add_up';
  const commission = commissionPaise(shares.totalPaise, commissionBps);
  return { ...shares, commissionBps, commissionPaise: commission, vendorNetPaise: shares.totalPaise - commission };
}

export interface PairTerms {
  settlementMode: SettlementMode;
  linkedAccountId: string | null;
}

/** What the customer pays at checkout for an online order. Razorpay will not take an order below
 * ₹1, so a customer share of 1–99 paise cannot be collected online. */
export type OnlineCollection =
  | { kind: 'nothing_to_collect' }
  | { kind: 'gateway_order'; amountPaise: number; split: { account: string; amountPaise: number } | null }
  | { kind: 'below_gateway_minimum' };

export function onlineCollectionFor(order: PricedOrder, terms: PairTerms): OnlineCollection {
  if (order.customerSharePaise === 0) return { kind: 'nothing_to_collect' };
  if (order.customerSharePaise < MIN_TRANSFER_PAISE) return { kind: 'below_gateway_minimum' };
  const route = routeFor({ ...terms, paymentMethod: 'online', subsidyPaise: order.subsidyPaise, commissionPaise: order.commissionPaise, vendorNetPaise: order.vendorNetPaise });
  // Only an unsubsidised order (customer pays the total) carries the vendor's net as a split.
  const split = route.kind === 'split' ? { account: route.linkedAccountId, amountPaise: route.amountPaise } : null;
  return { kind: 'gateway_order', amountPaise: order.customerSharePaise, split };
}

export interface PayableOrder {
  paymentMethod: PaymentMethod;
  subsidyPaise: number;
  commissionPaise: number;
  vendorNetPaise: number;
  /** Set when the Razorpay order carries a split: that money moves whatever the pair says now. */
  splitTransferPaise: number | null;
  splitLinkedAccountId: string | null;
}

/** The route a paid order takes, decided when it becomes payable from the pair's current terms. */
export function payableRouteFor(order: PayableOrder, terms: PairTerms): Route {
  if (order.splitTransferPaise !== null && order.splitLinkedAccountId !== null) {
    return { kind: 'split', amountPaise: order.splitTransferPaise, linkedAccountId: order.splitLinkedAccountId };
  }
  const route = routeFor({ ...terms, ...order });
  // A split decided now would be too late (the gateway order carries none): the platform holds
  // the customer's money, so it pays the vendor directly instead.
  return route.kind === 'split' ? { ...route, kind: 'direct_transfer' } : route;
}

/** What the platform would owe the vendor offline for this order (signed). A cash order's vendor
 * already holds the customer's share, so only the subsidy less commission is owed. */
export function offlineLedgerAmountPaise(order: Pick<PayableOrder, 'paymentMethod' | 'subsidyPaise' | 'commissionPaise' | 'vendorNetPaise'>): number {
  return order.paymentMethod === 'cash' ? order.subsidyPaise - order.commissionPaise : order.vendorNetPaise;
}

export type LedgerRoute = 'direct_transfer' | 'split' | 'cash' | 'manual_offline' | 'no_linked_account' | 'below_transfer_minimum' | 'corporate_direct';

/** The `offline_ledger.route` label of a route. */
export function ledgerRouteOf(route: Route): LedgerRoute {
  return route.kind === 'offline_ledger' ? route.reason : route.kind;
}
