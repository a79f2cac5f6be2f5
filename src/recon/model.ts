/** What the matching engine reads and writes: plain data, no I/O. Amounts are integer paise;
 * days are IST `YYYY-MM-DD`. */
import type { ExceptionClass, ReasonCode, Severity } from './reasons';

export type ReconRowType = 'payment' | 'refund' | 'transfer' | 'reversal' | 'adjustment';

/** One stored gateway recon row. */
export interface GatewayRow {
  entityId: string;
  settlementId: string | null;
  type: ReconRowType;
  amountPaise: number;
  /** Includes tax. */
  feePaise: number;
  taxPaise: number;
  creditPaise: number;
  debitPaise: number;
  onHold: boolean;
  settled: boolean;
  reconDay: string;
  paymentId: string | null;
  gatewayOrderId: string | null;
  orderReceipt: string | null;
  /** `transaction_id` from the row's notes, when the notes carry one (our payout id). */
  noteTransactionId: string | null;
  /** `refund_request_id` from a refund row's notes: our refund id, for a refund whose gateway id we never learned. */
  noteRefundRequestId?: string | null;
}

/** Money-in we expect the gateway to settle: an order or a wallet top-up. */
export interface AppMoneyIn { kind: 'order' | 'topup'; id: string; gatewayOrderId: string | null; amountPaise: number }

export interface AppPayment {
  id: string;
  orderId: string | null;
  gatewayOrderId: string;
  amountPaise: number;
  feePaise: number | null;
  taxPaise: number | null;
  capturedAt: Date | null;
}

/** `gatewayRefundId` is null while we never learned the gateway's id (its answer was lost). */
export interface AppRefund { id: string; gatewayRefundId: string | null; amountPaise: number }

/** Money we owe that may not have moved: a refund (rejected for good, or failed after acceptance)
 * or a Route split not yet processed; `day` is the IST day it belongs to (the refund's end, the
 * order's payment), `paidDay` the split order's payment day. */
export interface AppObligation {
  kind: 'refund' | 'split';
  id: string;
  orderId: string | null;
  paymentId: string | null;
  amountPaise: number;
  status: string;
  day: string;
  code: string | null;
  processedAfterFinal: boolean;
}

/** A transfer we recorded: a direct payout or a Route split. */
export interface AppTransfer {
  kind: 'payout' | 'split'; id: string; orderId: string; providerTransferId: string | null; amountPaise: number;
  /** `payouts.status` or `split_transfers.status`, for the words of an exception. */
  status: string;
  /** What the ledger says pays by it: the payout's latest transfer discharge (an order's or a batch's),
   * or the split's, while live (in flight or paid), with the transfer id it names (null: in flight,
   * not named yet). Null: no instrument of ours pays by it, so money that left for it is a second payment. */
  ledger: { state: 'in_flight' | 'paid'; transferId: string | null } | null;
}

/** A reversal of one of our transfers, as transfer_reversals recorded it. */
export interface AppReversal { id: string; transferId: string; orderId: string; amountPaise: number; transferAmountPaise: number }

export interface SettlementRecord { id: string; amountPaise: number; utrNormalised: string | null; settledDay: string }

export interface BankLine { id: number; utrNormalised: string; amountPaise: number; valueDate: string }

/** Everything one run needs; the repository loads it for a window. */
export interface ReconInput {
  from: string;
  to: string;
  /** The IST day the calendar judges "overdue" against (normally today). */
  asOf: string;
  holidays: ReadonlySet<string>;
  /** Rows reported for days in the window, plus every other stored row of the same entities. */
  rows: GatewayRow[];
  moneyIn: AppMoneyIn[];
  payments: AppPayment[];
  refunds: AppRefund[];
  transfers: AppTransfer[];
  /** Our recorded reversals of the window's reversal rows and of the transfers of its transfer rows. */
  reversals?: AppReversal[];
  /** Settlements of the window. */
  settlements: SettlementRecord[];
  /** Bank lines carrying the window's settlement UTRs, and every line valued in the window. */
  bankLines: BankLine[];
  /** Settlements (any day) whose UTR appears on a bank line of the window. */
  settlementsForBankLines: SettlementRecord[];
  /** Captures the window must account for (capture day or due day inside it). */
  captures: AppPayment[];
  /** Refunds and splits of the window that may not have reached their recipient. */
  owed: AppObligation[];
  /** Payment ids with a settled row, and with an on-hold row, anywhere in the store. */
  settledPaymentIds: ReadonlySet<string>;
  heldPaymentIds: ReadonlySet<string>;
}

export interface ExceptionDraft {
  /** Reason + references: a rerun updates the same exception instead of adding one. */
  key: string;
  reason: ReasonCode;
  class: ExceptionClass;
  severity: Severity;
  nextAction: string;
  day: string;
  entityId: string | null;
  settlementId: string | null;
  orderId: string | null;
  bankLineId: number | null;
  expectedPaise: number | null;
  actualPaise: number | null;
  details: Record<string, unknown>;
}

export interface ReconOutcome {
  exceptions: ExceptionDraft[];
  /** Gateway rows matched to our records, plus settlements matched to a bank credit. */
  matched: number;
}
