/** One planned order from its kind (pure): its vendor, amounts, payment method and what the
 * provider's ledger must show for it once the system is quiet. Part of the plan (plan.ts). */
import type { EmployerKey, Expectation, OrderKind, PlannedOrder, VendorKey } from './plan';

export interface OrderRandom { int: (lo: number, hi: number) => number; pick: <T>(xs: readonly T[]) => T }

export function plannedOrder(kind: OrderKind, index: number, atMs: number, seed: number, r: OrderRandom): PlannedOrder {
  const base = {
    index, kind, atMs, clientReference: `campaign-${seed}-${index}`, employer: 'main' as EmployerKey, vendor: r.pick(['direct_a', 'direct_b', 'direct_c'] as const) as VendorKey,
    employeeId: `employee-${r.int(1, 5)}`, paymentMethod: 'online' as PlannedOrder['paymentMethod'], lateAfterMs: r.int(1_000, 4_000), refunds: 0 as 0 | 1,
  };
  const direct = (payout: 'settled' | 'parked' = 'settled'): Expectation => ({ transfers: 'direct', payout });
  const rupees = (lo: number, hi: number) => r.int(lo, hi) * 100;
  const partial = () => {
    const total = rupees(120, 450);
    return { totalPaise: total, subsidyPaise: total - rupees(10, 100) };
  };
  switch (kind) {
    case 'direct_99': return { ...base, totalPaise: 10_000, subsidyPaise: 9_900, expect: direct() };
    case 'direct_subsidy': return { ...base, ...partial(), expect: direct() };
    case 'direct_full': { const t = rupees(80, 300); return { ...base, totalPaise: t, subsidyPaise: t, expect: direct() }; }
    case 'wallet': return { ...base, ...partial(), paymentMethod: 'wallet', expect: direct() };
    case 'callback_race': return { ...base, ...partial(), expect: direct() };
    case 'late_authorisation': return { ...base, totalPaise: 10_000, subsidyPaise: 9_000, expect: direct() };
    case 'duplicate_capture': return { ...base, totalPaise: 10_000, subsidyPaise: 9_000, refunds: 1, expect: direct() };
    case 'split': { const t = rupees(150, 600); return { ...base, vendor: 'split', totalPaise: t, subsidyPaise: 0, expect: { transfers: 'split' } }; }
    case 'split_duplicate_capture': { const t = rupees(150, 600); return { ...base, vendor: 'split', totalPaise: t, subsidyPaise: 0, refunds: 1, expect: { transfers: 'split' } }; }
    case 'cash': { const t = rupees(100, 300); return { ...base, totalPaise: t, subsidyPaise: rupees(0, 60), paymentMethod: 'cash', expect: { transfers: 'none', ledger: 'cash' } }; }
    case 'corporate_direct': { const t = rupees(100, 300); return { ...base, employer: 'corporate', vendor: 'direct_a', totalPaise: t, subsidyPaise: t, expect: { transfers: 'none', ledger: 'corporate_direct' } }; }
    case 'manual_offline': return { ...base, employer: 'offline', vendor: 'direct_b', ...partial(), expect: { transfers: 'none', ledger: 'manual_offline' } };
    case 'no_linked_account': return { ...base, vendor: 'nolink', ...partial(), expect: { transfers: 'none', ledger: 'no_linked_account' } };
    // 120 paise at 19% commission nets 98 paise: below Razorpay's ₹1 minimum.
    case 'below_minimum': return { ...base, totalPaise: 120, subsidyPaise: 120, expect: { transfers: 'none', ledger: 'below_transfer_minimum' } };
    case 'cancelled': return { ...base, ...partial(), expect: { transfers: 'none', unpaid: 'cancelled' } };
    case 'cancelled_then_paid': case 'duplicate_receipt_refund': return { ...base, ...partial(), refunds: 1, expect: { transfers: 'none', unpaid: 'cancelled' } };
    case 'never_paid': return { ...base, ...partial(), expect: { transfers: 'none', unpaid: 'expired' } };
    case 'flaky_vendor': return { ...base, vendor: 'flaky', totalPaise: 10_000, subsidyPaise: 9_900, expect: direct() };
    case 'shut_vendor': return { ...base, vendor: 'shut', totalPaise: 10_000, subsidyPaise: 9_900, expect: direct('parked') };
    // Ops answer a reversal both ways across a run: a new transfer, or the line paid by settlement.
    case 'reversed_transfer': return index % 2 === 0
      ? { ...base, totalPaise: 10_000, subsidyPaise: 9_900, expect: { transfers: 'direct', payout: 'settled', reversedThen: 'retry' } }
      : { ...base, totalPaise: 10_000, subsidyPaise: 9_900, expect: { transfers: 'direct', payout: 'offline', reversedThen: 'pay_offline' } };
    case 'dashboard_refund': return { ...base, ...partial(), refunds: 1, expect: { transfers: 'direct', payout: 'settled', refundedOutside: 'after_payout' } };
    case 'dashboard_refund_held': return { ...base, vendor: 'shut', ...partial(), refunds: 1, expect: { transfers: 'direct', payout: 'review', code: 'CUSTOMER_REFUNDED', refundedOutside: 'while_parked' } };
    case 'paid_externally': return { ...base, vendor: 'own', totalPaise: 10_000, subsidyPaise: 9_900, expect: { transfers: 'direct', payout: 'settled', paidExternally: true } };
    case 'reversed_split': { const t = rupees(150, 600); return { ...base, vendor: 'split', totalPaise: t, subsidyPaise: 0, expect: { transfers: 'split', reversedFromOutside: true } }; }
    case 'split_refund_failed_transfer': { const t = rupees(150, 600); return { ...base, vendor: 'split', totalPaise: t, subsidyPaise: 0, refunds: 1, expect: { transfers: 'none', unpaid: 'cancelled' } }; }
    case 'forged_capture': return { ...base, totalPaise: 10_000, subsidyPaise: 9_000, expect: { transfers: 'direct', payout: 'review', code: 'CAPTURE_NOT_CONFIRMED' } };
    // The batched pair's orders: the 99% order, other subsidies online, and wallet payments.
    case 'batched': return index % 3 === 0
      ? { ...base, vendor: 'batched', totalPaise: 10_000, subsidyPaise: 9_900, expect: { transfers: 'batched' } }
      : { ...base, vendor: 'batched', ...partial(), paymentMethod: index % 3 === 1 ? 'online' : 'wallet', expect: { transfers: 'batched' } };
    // Online, so the Dashboard has a payment to refund or a transfer to reverse.
    case 'batch_reversed': return { ...base, vendor: 'own_batch', ...partial(), expect: { transfers: 'batched', reversedThen: index % 2 === 0 ? 'retry' : 'pay_offline' } };
    case 'batch_refund_before': return { ...base, vendor: 'batch_hold', ...partial(), refunds: 1, expect: { transfers: 'batched', refundedOutside: 'before_batch_paid' } };
    case 'batch_refund_after': return { ...base, vendor: 'batch_claw', ...partial(), refunds: 1, expect: { transfers: 'batched', refundedOutside: 'after_batch_paid' } };
    case 'schedule_switch': return { ...base, vendor: 'switcher', ...partial(), paymentMethod: index % 4 === 3 ? 'wallet' : 'online', expect: { transfers: 'per_order_or_batched' } };
  }
}

