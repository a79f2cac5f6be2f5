/** The one idempotent way an order becomes paid — webhook, browser callback, sweep, wallet debit and
 * cash confirmation all come here. The conditional UPDATE is the guard: whoever flips the status
 * writes what the vendor is owed, in the same transaction; everyone else changes nothing. */
import { randomUUID } from 'node:crypto';
import type { Db, Tx } from '../db/pool';
import type { PaymentMethod, Route } from '../domain/routing';
import { logger } from '../logger';
import { completeOutboxRow, enqueuePayoutStart, releaseOutboxRow } from '../outbox/outbox';
import { leaveForSweep, type PayoutStarter } from '../payouts/starter';
import type { AfterCommit } from './afterCommit';
import { ledgerRouteOf, offlineLedgerAmountPaise, payableRouteFor } from './orderRules';
import { pairTermsOrFail } from './referenceData';

export type PaidVia = 'webhook' | 'callback' | 'sweep' | 'wallet' | 'cash' | 'nothing_to_collect';

export interface PaidEvidence {
  via: PaidVia;
  paymentId?: string | null;
  /** Who confirmed a cash payment. */
  confirmedBy?: string | null;
  /** Set when the evidence itself is doubtful (e.g. AMOUNT_MISMATCH: the capture differs from the
   * customer share): the order is paid, but a direct-transfer payout is created in `review` with
   * this code, so no transfer goes out until a human decides. */
  reviewCode?: string;
}

export type MarkPaidResult =
  | { transitioned: false }
  | { transitioned: true; route: Route; payoutId: string | null; /** The payouts_outbox row that starts it. */ outboxId?: number | null };

interface PaidOrderRow {
  id: string; employer_id: string; vendor_id: string; payment_method: PaymentMethod; subsidy_paise: number;
  commission_paise: number; vendor_net_paise: number; split_transfer_paise: number | null; split_linked_account_id: string | null;
  gateway_order_id: string | null;
}

export async function markPaid(tx: Tx, orderId: string, evidence: PaidEvidence): Promise<MarkPaidResult> {
  const { rows } = await tx.query<PaidOrderRow>(
    `UPDATE orders SET status = 'paid', paid_at = now(), updated_at = now(),
            paid_via = $2, paid_payment_id = $3, paid_confirmed_by = $4
      WHERE id = $1 AND status IN ('pending', 'failed')
      RETURNING id, employer_id, vendor_id, payment_method, subsidy_paise, commission_paise, vendor_net_paise,
                split_transfer_paise, split_linked_account_id, gateway_order_id`,
    [orderId, evidence.via, evidence.paymentId ?? null, evidence.confirmedBy ?? null],
  );
  const order = rows[0];
  if (!order) return { transitioned: false };

  const terms = await pairTermsOrFail(tx, order.employer_id, order.vendor_id);
  const payable = {
    paymentMethod: order.payment_method, subsidyPaise: order.subsidy_paise, commissionPaise: order.commission_paise,
    vendorNetPaise: order.vendor_net_paise, splitTransferPaise: order.split_transfer_paise, splitLinkedAccountId: order.split_linked_account_id,
  };
  const route = payableRouteFor(payable, terms);
  const payoutId = await writeWhatTheVendorIsOwed(tx, order, route, evidence.reviewCode ?? null);
  // The start of its run, in the same transaction: it cannot be lost between the commit and a
  // process that dies after it (src/outbox). The caller's after-commit step tries first.
  const outboxId = payoutId ? await enqueuePayoutStart(tx, order.id) : null;
  await tx.query(
    `INSERT INTO offline_ledger (order_id, employer_id, vendor_id, amount_paise, route) VALUES ($1, $2, $3, $4, $5)`,
    [order.id, order.employer_id, order.vendor_id, offlineLedgerAmountPaise(payable), ledgerRouteOf(route)],
  );
  return { transitioned: true, route, payoutId, outboxId };
}

/** Returns the new payout id for a direct transfer. */
async function writeWhatTheVendorIsOwed(tx: Tx, order: PaidOrderRow, route: Route, reviewCode: string | null): Promise<string | null> {
  switch (route.kind) {
    case 'direct_transfer': {
      // The payout id is the recovery key and the first idempotency key (36 characters fit the 4–36 limit).
      const payoutId = randomUUID();
      await tx.query(
        `INSERT INTO payouts (id, order_id, vendor_id, linked_account_id, amount_paise, status, idempotency_key, last_code)
         VALUES ($1::uuid, $2, $3, $4, $5, $7, $6, $8)`,
        [payoutId, order.id, order.vendor_id, route.linkedAccountId, route.amountPaise, payoutId, reviewCode ? 'review' : 'pending', reviewCode],
      );
      return payoutId;
    }
    case 'split':
      await tx.query(
        `INSERT INTO split_transfers (order_id, vendor_id, linked_account_id, amount_paise, gateway_order_id)
         VALUES ($1, $2, $3, $4, $5)`,
        [order.id, order.vendor_id, route.linkedAccountId, route.amountPaise, order.gateway_order_id],
      );
      return null;
    case 'corporate_direct':
      await tx.query(
        'INSERT INTO vendor_obligations (order_id, employer_id, vendor_id, amount_paise) VALUES ($1, $2, $3, $4)',
        [order.id, order.employer_id, order.vendor_id, route.amountPaise],
      );
      return null;
    case 'offline_ledger':
      return null; // the ledger row every paid order writes is the whole record
  }
}

/** After the commit: ask the payout layer to start, then drop the outbox row. A failure only hands
 * the row to the outbox drainer (with a backoff); the step is detachable, so a webhook replies
 * without waiting for it. Without `db` the row cannot be dropped and the drainer starts the run a
 * second time after the writer's lease (idempotent by workflow id: one run). */
export function startPayoutAfterCommit(orderId: string, result: MarkPaidResult, payoutStarter: PayoutStarter, db?: Pick<Db, 'query'>): AfterCommit[] {
  if (!result.transitioned || !result.payoutId) return [];
  const outboxId = result.outboxId ?? null;
  const handOver = async (failure: { attempted: boolean; error?: unknown }) => {
    if (db && outboxId !== null) await releaseOutboxRow(db, outboxId, failure);
  };
  return [{
    what: `start payout for order ${orderId}`,
    run: async () => {
      // Nothing to try here: the drainer takes the row now rather than after the lease.
      if (payoutStarter === leaveForSweep) return handOver({ attempted: false });
      try {
        await payoutStarter.startPayout(orderId);
      } catch (err) {
        await handOver({ attempted: true, error: err });
        throw err;
      }
      if (db && outboxId !== null) await completeOutboxRow(db, outboxId);
      logger.debug({ orderId, payoutId: result.payoutId }, 'payout start requested');
    },
    detachable: { skipped: () => handOver({ attempted: false }) },
  }];
}
