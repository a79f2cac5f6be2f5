/** Everything the sandbox remembers, in memory (it is a test double of a remote service: a restart
 * resets it). Entities are stored as the snapshots the API returns; bookkeeping sits beside them. */
import type { LinkedAccountStatus } from './control';
import type { OrderEntity, PaymentEntity, RefundEntity, SettlementEntity, TransferEntity } from './entities';

export interface LinkedAccount {
  id: string;
  name: string;
  status: LinkedAccountStatus;
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
  orders = new Map<string, OrderEntity>();
  payments = new Map<string, PaymentEntity>();
  paymentBooks = new Map<string, PaymentBook>();
  transfers = new Map<string, TransferEntity>();
  refunds = new Map<string, RefundEntity>();
  refundReceipts = new Set<string>();
  /** transfer id → the X-Transfer-Idempotency it was created under. */
  transferIdempotencyKeys = new Map<string, string>();
  accounts = new Map<string, LinkedAccount>();
  settlements = new Map<string, SettlementEntity>();
  /** Settled (or reported on-hold) line items, in settlement order. */
  settledItems: SettledItem[] = [];
  /** Entity ids already in a settlement. */
  settledIds = new Set<string>();
  adjustments: Adjustment[] = [];
  platformBalance: number;

  constructor(readonly initialPlatformBalance: number) {
    this.platformBalance = initialPlatformBalance;
  }

  reset(): void {
    for (const m of [this.orders, this.payments, this.paymentBooks, this.transfers, this.refunds, this.accounts, this.settlements]) m.clear();
    this.refundReceipts.clear();
    this.transferIdempotencyKeys.clear();
    this.settledIds.clear();
    this.settledItems = [];
    this.adjustments = [];
    this.platformBalance = this.initialPlatformBalance;
  }
}
