/** The one idempotent way an order becomes paid — webhook, browser callback, sweep, wallet debit and
 * cash confirmation all come here. The conditional UPDATE is the guard: whoever flips the status
 * writes what the vendor is owed, in the same transaction; everyone else changes nothing. */
import type { Db, Tx } from '../db/pool';
import type { PaymentMethod, Route, SettlementMode } from '../domain/routing';
import { oweOrders } from '../ledger/orderObligations';
import { recordSplitInLedger } from '../ledger/splitDischarges';
import { logger } from '../logger';
import { annotateSpan, currentTraceparent } from '../observability/tracing';
import { completeOutboxRow, enqueuePayoutStartSql, releaseOutboxRow, wakeDrainerSoon, WRITER_LEASE_MS } from '../outbox/outbox';
import { leaveForSweep, type PayoutStarter } from '../payouts/starter';
import type { AfterCommit } from './afterCommit';
import { ledgerRouteOf, offlineLedgerAmountPaise, payableRouteFor, type PairTerms } from './orderRules';
import { pairTermsOrFail } from './referenceData';
import { payoutIdOf } from '../domain/payoutIds';

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
  | {
    transitioned: true; route: Route; payoutId: string | null;
    /** The payouts_outbox row that starts it, held for the caller's after-commit try (null: no
     * payout, or the drainer starts it: {@link drainerStarts}). */
    outboxId: number | null;
  };

/** A webhook leaves the payout start to the outbox drainer (the row is due at once; the drainer is
 * woken after the commit): Razorpay's reply carries no Temporal call, and the API's CPU goes to replying. Every
 * other path tries first after its commit, the drainer taking what that try does not finish. */
export const drainerStarts = (via: PaidVia): boolean => via === 'webhook';

interface PaidOrderRow {
  id: string; employer_id: string; vendor_id: string; payment_method: PaymentMethod; subsidy_paise: number;
  commission_paise: number; vendor_net_paise: number; split_transfer_paise: number | null; split_linked_account_id: string | null;
  gateway_order_id: string | null;
}

interface PaidOrderWithTerms extends PaidOrderRow {
  settlement_mode: SettlementMode | null; commission_bps: number | null; linked_account_id: string | null;
}

export async function markPaid(tx: Tx, orderId: string, evidence: PaidEvidence): Promise<MarkPaidResult> {
  // The transition and the pair's current terms in one round trip.
  const { rows } = await tx.query<PaidOrderWithTerms>(
    `WITH paid AS (
       UPDATE orders SET status = 'paid', paid_at = now(), updated_at = now(),
              paid_via = $2, paid_payment_id = $3, paid_confirmed_by = $4
        WHERE id = $1 AND status IN ('pending', 'failed')
        RETURNING id, employer_id, vendor_id, payment_method, subsidy_paise, commission_paise, vendor_net_paise,
                  split_transfer_paise, split_linked_account_id, gateway_order_id)
     SELECT paid.*, terms.settlement_mode, terms.commission_bps, terms.linked_account_id
       FROM paid LEFT JOIN (
         SELECT ev.employer_id, ev.vendor_id, ev.settlement_mode, ev.commission_bps, v.linked_account_id
           FROM employer_vendor ev JOIN vendors v ON v.id = ev.vendor_id
       ) terms ON terms.employer_id = paid.employer_id AND terms.vendor_id = paid.vendor_id`,
    [orderId, evidence.via, evidence.paymentId ?? null, evidence.confirmedBy ?? null],
  );
  const order = rows[0];
  if (!order) return { transitioned: false };
  annotateSpan({ orderId: order.id, vendorId: order.vendor_id });

  const terms: PairTerms = order.settlement_mode === null
    ? await pairTermsOrFail(tx, order.employer_id, order.vendor_id) // says which of the two is unknown
    : { settlementMode: order.settlement_mode, commissionBps: order.commission_bps!, linkedAccountId: order.linked_account_id };
  const payable = {
    paymentMethod: order.payment_method, subsidyPaise: order.subsidy_paise, commissionPaise: order.commission_paise,
    vendorNetPaise: order.vendor_net_paise, splitTransferPaise: order.split_transfer_paise, splitLinkedAccountId: order.split_linked_account_id,
  };
  const route = payableRouteFor(payable, terms);
  const owed = await writeWhatTheVendorIsOwed(tx, order, route, evidence.reviewCode ?? null, offlineLedgerAmountPaise(payable), drainerStarts(evidence.via));
  // The ledger: what the vendor is owed, and a split that pays it, in this same transaction.
  await oweOrders(tx, [order.id]);
  if (route.kind === 'split') await recordSplitInLedger(tx, order.id);
  return { transitioned: true, route, payoutId: owed.payoutId, outboxId: drainerStarts(evidence.via) ? null : owed.outboxId };
}

/** One statement: what the vendor is owed by the route, and the offline ledger row every paid order
 * writes; for a direct transfer also the start of its run (src/outbox), so it cannot be lost between
 * the commit and a process that dies after it. `drainerStarts`: the row is due at once; otherwise
 * the caller's after-commit step holds it for a first try. */
async function writeWhatTheVendorIsOwed(
  tx: Tx, order: PaidOrderRow, route: Route, reviewCode: string | null, ledgerPaise: number, drainerStarts: boolean,
): Promise<{ payoutId: string | null; outboxId: number | null }> {
  const ledger = `INSERT INTO offline_ledger (order_id, employer_id, vendor_id, amount_paise, route) VALUES ($1, $2, $3, $4, $5)`;
  const ledgerParams = [order.id, order.employer_id, order.vendor_id, ledgerPaise, ledgerRouteOf(route)];
  switch (route.kind) {
    case 'direct_transfer': {
      // The payout id is the recovery key and the first idempotency key (36 characters fit the 4–36
      // limit); the order determines it, so a restored database re-creates the same one.
      const payoutId = payoutIdOf(order.id);
      const { rows } = await tx.query<{ id: number }>(
        `WITH payout AS (
           INSERT INTO payouts (id, order_id, vendor_id, linked_account_id, amount_paise, status, idempotency_key, last_code)
           VALUES ($6::uuid, $1, $3, $7, $8, $9, $6, $10)),
         ledger AS (${ledger}),
         start AS (${enqueuePayoutStartSql('$1', '$11', '$12')})
         SELECT id FROM start`,
        [...ledgerParams, payoutId, route.linkedAccountId, route.amountPaise, reviewCode ? 'review' : 'pending', reviewCode, drainerStarts ? 0 : WRITER_LEASE_MS, currentTraceparent()],
      );
      return { payoutId, outboxId: rows[0]!.id };
    }
    case 'split':
      await tx.query(
        `WITH ledger AS (${ledger})
         INSERT INTO split_transfers (order_id, vendor_id, linked_account_id, amount_paise, gateway_order_id) VALUES ($1, $3, $6, $7, $8)`,
        [...ledgerParams, route.linkedAccountId, route.amountPaise, order.gateway_order_id],
      );
      return { payoutId: null, outboxId: null };
    case 'corporate_direct':
      await tx.query(
        `WITH ledger AS (${ledger})
         INSERT INTO vendor_obligations (order_id, employer_id, vendor_id, amount_paise) VALUES ($1, $2, $3, $6)`,
        [...ledgerParams, route.amountPaise],
      );
      return { payoutId: null, outboxId: null };
    case 'offline_ledger':
      await tx.query(ledger, ledgerParams); // the ledger row every paid order writes is the whole record
      return { payoutId: null, outboxId: null };
  }
}

/** After the commit: ask the payout layer to start, then drop the outbox row. A failure only hands
 * the row to the outbox drainer (with a backoff). For a payout the drainer starts (a webhook's),
 * only wake the drainer. Without `db` the row cannot be dropped and the drainer starts the run a second time
 * after the writer's lease (idempotent by workflow id: one run). */
export function startPayoutAfterCommit(orderId: string, result: MarkPaidResult, payoutStarter: PayoutStarter, db?: Pick<Db, 'query'>): AfterCommit[] {
  if (!result.transitioned || !result.payoutId) return [];
  if (result.outboxId === null) return db ? [{ what: `wake the outbox drainer for order ${orderId}`, run: async () => wakeDrainerSoon(db) }] : [];
  const outboxId = result.outboxId;
  const handOver = async (failure: { attempted: boolean; error?: unknown }) => {
    if (db) await releaseOutboxRow(db, outboxId, failure);
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
      if (db) await completeOutboxRow(db, outboxId);
      logger.debug({ orderId, payoutId: result.payoutId }, 'payout start requested');
    },
  }];
}
