/** Which route pays the vendor for an order (design.md §3). Pure: decided from the pair's
 * settlement mode and the order, at the moment the payout would fire. */
import { MIN_TRANSFER_PAISE } from './money';

export const SETTLEMENT_MODES = ['platform_transfer', 'corporate_direct', 'manual_offline'] as const;
export type SettlementMode = (typeof SETTLEMENT_MODES)[number];

export const PAYMENT_METHODS = ['online', 'wallet', 'cash'] as const;
export type PaymentMethod = (typeof PAYMENT_METHODS)[number];

export interface RoutableOrder {
  settlementMode: SettlementMode;
  paymentMethod: PaymentMethod;
  subsidyPaise: number;
  commissionPaise: number;
  vendorNetPaise: number;
  linkedAccountId: string | null;
}

export type Route =
  /** Transfer of the vendor net from the platform balance, after capture or wallet debit. */
  | { kind: 'direct_transfer'; amountPaise: number; linkedAccountId: string }
  /** The Razorpay order carries a Route transfer of the vendor net (nothing was pre-funded). */
  | { kind: 'split'; amountPaise: number; linkedAccountId: string }
  /** Settled outside the gateway; signed (negative: the vendor owes the platform). */
  | { kind: 'offline_ledger'; amountPaise: number; reason: 'cash' | 'manual_offline' | 'no_linked_account' | 'below_transfer_minimum' }
  /** The employer pays the vendor itself; we record the obligation and move no money. */
  | { kind: 'corporate_direct'; amountPaise: number };

export function routeFor(order: RoutableOrder): Route {
  if (order.settlementMode === 'corporate_direct') return { kind: 'corporate_direct', amountPaise: order.vendorNetPaise };
  // The vendor holds the customer's cash, so only the employer's share less commission is owed.
  if (order.paymentMethod === 'cash') {
    return { kind: 'offline_ledger', amountPaise: order.subsidyPaise - order.commissionPaise, reason: 'cash' };
  }
  if (order.settlementMode === 'manual_offline') return { kind: 'offline_ledger', amountPaise: order.vendorNetPaise, reason: 'manual_offline' };
  if (!order.linkedAccountId) return { kind: 'offline_ledger', amountPaise: order.vendorNetPaise, reason: 'no_linked_account' };
  // Never block checkout on the gateway minimum: a sub-₹1 transfer accrues offline instead.
  if (order.vendorNetPaise < MIN_TRANSFER_PAISE) {
    return { kind: 'offline_ledger', amountPaise: order.vendorNetPaise, reason: 'below_transfer_minimum' };
  }
  const kind = order.subsidyPaise === 0 && order.paymentMethod === 'online' ? 'split' : 'direct_transfer';
  return { kind, amountPaise: order.vendorNetPaise, linkedAccountId: order.linkedAccountId };
}
