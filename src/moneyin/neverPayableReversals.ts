/** Reversals our own refunds made of transfers that no payout or split of ours owns. A cancelled
 * order paid anyway (a stale checkout page) still has its Route split run by Razorpay at capture;
 * its refund takes the split back with reverse_all (splitReversal.ts). The order was never payable,
 * so no row of ours records that transfer, and recon raised both the transfer and its reversal as
 * not in the app (found by the fault campaign). The missed-webhook sweep looks once at each such
 * refund once it is processed, lists its payment's transfers and records the reversals that refund
 * made (transfer_reversals, made by our refund, owing the vendor nothing); recon then matches the
 * transfer and its reversal as it does any reversed transfer of ours. A refund the provider cannot be
 * asked about now is looked at again next sweep. */
import { inTransaction, type Db } from '../db/pool';
import type { Gateway, RzpReversal, RzpTransfer } from '../gateway/types';
import { logger } from '../logger';
import { recordTransferReversals, reversalsOf } from '../payouts/transferReversals';

interface RefundToFollow { id: string; payment_id: string; gateway_refund_id: string; order_id: string; vendor_id: string }

/** Processed reverse_all refunds of ours on orders no payout or split pays, not looked at yet. */
async function refundsToFollow(db: Db, limit: number): Promise<RefundToFollow[]> {
  const { rows } = await db.query<RefundToFollow>(
    `SELECT r.id, r.payment_id, r.gateway_refund_id, o.id AS order_id, o.vendor_id
       FROM refunds r JOIN orders o ON o.id = r.order_id
      WHERE r.reverse_all AND r.status = 'processed' AND r.gateway_refund_id IS NOT NULL AND r.reversals_checked_at IS NULL
        AND NOT EXISTS (SELECT 1 FROM split_transfers s WHERE s.order_id = o.id)
        AND NOT EXISTS (SELECT 1 FROM payouts p WHERE p.order_id = o.id)
      ORDER BY r.updated_at LIMIT $1`,
    [limit],
  );
  return rows;
}

/** Records what each refund reversed; returns how many reversals were added. */
export async function recordNeverPayableReversals(db: Db, gateway: Pick<Gateway, 'listPaymentTransfers' | 'listTransferReversals'>, limit: number): Promise<number> {
  let added = 0;
  for (const refund of await refundsToFollow(db, limit)) {
    try {
      // The provider first, no transaction open: the payment's reversed transfers and their reversals by this refund.
      const found: Array<{ transfer: RzpTransfer; reversals: RzpReversal[] }> = [];
      for (const transfer of await gateway.listPaymentTransfers(refund.payment_id)) {
        const reversals = (await reversalsOf(gateway, transfer)).filter((r) => r.customer_refund_id === refund.gateway_refund_id);
        if (reversals.length > 0) found.push({ transfer, reversals });
      }
      added += await inTransaction(db, async (tx) => {
        let n = 0;
        for (const { transfer, reversals } of found) {
          n += (await recordTransferReversals(tx, {
            owner: { orderId: refund.order_id, vendorId: refund.vendor_id, neverPayable: true }, transfer,
            reversals: reversals.map((reversal) => ({ reversal, madeBy: 'our_refund' as const })), source: 'missed-webhook sweep (our refund with reverse_all)',
          })).length;
        }
        await tx.query('UPDATE refunds SET reversals_checked_at = now() WHERE id = $1', [refund.id]);
        return n;
      });
    } catch (err) {
      logger.warn({ err, refundId: refund.id, paymentId: refund.payment_id }, 'could not list what our refund reversed; asking again next sweep');
    }
  }
  return added;
}
