/** An order as the API shows it. */
import type { Db, Tx } from '../db/pool';

export interface OrderView {
  orderId: string;
  clientReference: string;
  employerId: string;
  vendorId: string;
  employeeId: string;
  totalPaise: number;
  subsidyPaise: number;
  customerSharePaise: number;
  commissionBps: number;
  commissionPaise: number;
  vendorNetPaise: number;
  paymentMethod: 'online' | 'wallet' | 'cash';
  /** `capture_mismatch`: charged for an amount that is not the customer share; held until ops decide (captureMismatch.ts). */
  status: 'pending' | 'paid' | 'failed' | 'cancelled' | 'expired' | 'capture_mismatch';
  /** The Razorpay order the customer pays at checkout (online orders). */
  gatewayOrderId: string | null;
  splitTransferPaise: number | null;
  splitLinkedAccountId: string | null;
  paidVia: string | null;
  paidAt: string | null;
}

export async function orderView(q: Db | Tx, orderId: string): Promise<OrderView | null> {
  const { rows } = await q.query(
    `SELECT id, client_reference, employer_id, vendor_id, employee_id, total_paise, subsidy_paise, customer_share_paise, commission_bps,
            commission_paise, vendor_net_paise, payment_method, status, gateway_order_id, split_transfer_paise, split_linked_account_id,
            paid_via, paid_at
       FROM orders WHERE id = $1`,
    [orderId],
  );
  const o = rows[0];
  if (!o) return null;
  return {
    orderId: o.id, clientReference: o.client_reference, employerId: o.employer_id, vendorId: o.vendor_id, employeeId: o.employee_id,
    totalPaise: o.total_paise, subsidyPaise: o.subsidy_paise, customerSharePaise: o.customer_share_paise, commissionBps: o.commission_bps,
    commissionPaise: o.commission_paise, vendorNetPaise: o.vendor_net_paise, paymentMethod: o.payment_method, status: o.status,
    gatewayOrderId: o.gateway_order_id, splitTransferPaise: o.split_transfer_paise, splitLinkedAccountId: o.split_linked_account_id,
    paidVia: o.paid_via, paidAt: o.paid_at ? (o.paid_at as Date).toISOString() : null,
  };
}
