/** Everything the sandbox remembers, in memory (it is a test double of a remote service: a restart
 * resets it, unless the dev stack gives it a state file: persistence/). Entities are stored as the
 * snapshots the API returns; bookkeeping sits beside them. The maps and sets track their changes for
 * the state file: code that changes an entity in place calls `markChanged(id)` on its map. Lists are
 * append-only (their items are never changed). */
import type { LinkedAccountStatus } from './control';
import type { OrderEntity, PaymentEntity, RefundEntity, ReversalEntity, SettlementEntity, TransferEntity } from './entities';
import { TrackedMap, TrackedSet } from './tracked';

export interface LinkedAccount {
  id: string;
  name: string;
  status: LinkedAccountStatus;
  /** What processed transfers put in the linked account and reversals took back (paise); the linked
   * account's own settlements to its bank are not modelled. */
  balance: number;
}

/** What a payment needs beyond its entity: when it was captured (settlement clock) and holds. */
export interface PaymentBook {
  capturedAt: number | null;
  onHold: boolean;
}

/** An injected settlement adjustment (credit if positive, debit if negative). */
export interface Adjustment {
  id: string;
  amount: number;
  description: string;
  /** IST date on which it settles. */
  date: string;
  createdAt: number;
}

/** One line of a settlement (what the recon report shows for it). */
export interface SettledItem {
  entityId: string;
  type: 'payment' | 'refund' | 'transfer' | 'adjustment';
  settlementId: string | null;
  settledAt: number | null;
  /** IST date of the run that settled it (or reported it on hold). */
  reportDate: string;
  onHold: boolean;
}

export class SandboxState {
  readonly orders = new TrackedMap<string, OrderEntity>();
  readonly payments = new TrackedMap<string, PaymentEntity>();
  readonly paymentBooks = new TrackedMap<string, PaymentBook>();
  readonly transfers = new TrackedMap<string, TransferEntity>();
  readonly refunds = new TrackedMap<string, RefundEntity>();
  readonly refundReceipts = new TrackedSet<string>();
  /** transfer id → the X-Transfer-Idempotency it was created under. */
  readonly transferIdempotencyKeys = new TrackedMap<string, string>();
  /** refund id → the X-Refund-Idempotency it was created under. */
  readonly refundIdempotencyKeys = new TrackedMap<string, string>();
  /** order transfer id → the payment whose capture ran it (GET /payments/:id/transfers lists it). */
  readonly orderTransferPayments = new TrackedMap<string, string>();
  /** transfer id → how many times Razorpay retried it after it failed (order/payment transfers: 3 at most). */
  readonly transferRetries = new TrackedMap<string, number>();
  /** transfer id → its reversals, oldest first. */
  readonly reversals = new TrackedMap<string, ReversalEntity[]>();
  readonly accounts = new TrackedMap<string, LinkedAccount>();
  readonly settlements = new TrackedMap<string, SettlementEntity>();
  /** Settled (or reported on-hold) line items, in settlement order. */
  settledItems: SettledItem[] = [];
  /** Entity ids already in a settlement. */
  readonly settledIds = new TrackedSet<string>();
  adjustments: Adjustment[] = [];
  platformBalance: number;

  constructor(readonly initialPlatformBalance: number) {
    this.platformBalance = initialPlatformBalance;
  }

  reset(): void {
    for (const m of [this.orders, this.payments, this.paymentBooks, this.transfers, this.refunds, this.accounts, this.settlements]) m.clear();
    this.refundReceipts.clear();
    this.transferIdempotencyKeys.clear();
    this.orderTransferPayments.clear();
    this.refundIdempotencyKeys.clear();
    this.transferRetries.clear();
    this.reversals.clear();
    this.settledIds.clear();
    this.settledItems = [];
    this.adjustments = [];
    this.platformBalance = this.initialPlatformBalance;
  }
}
