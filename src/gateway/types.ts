/** The contract of the one adapter through which every Razorpay call passes (src/gateway/).
 * Amounts are integer paise; timestamps are Unix seconds as Razorpay sends them. */

/** What a money-moving call (direct transfer, refund) came to. Workflows branch on `type`. */
export type MoneyOutcome<T> =
  | { type: 'accepted'; entity: T }
  /** HTTP 4xx with a provider error code: the provider definitely did not act. */
  | { type: 'rejected'; httpStatus: number; error: ProviderError }
  /** We cannot know whether the provider acted: ask it (the recovery key is in the notes). */
  | { type: 'unknown'; reason: UnknownReason; httpStatus: number | null; detail: string };

export type UnknownReason = 'timeout' | 'connection' | 'server_error' | 'rate_limited' | 'in_progress' | 'no_response';

export interface ProviderError {
  code: string;
  description: string;
  field: string | null;
  reason: string | null;
  step: string | null;
  source: string | null;
}

/** A non-money call that did not succeed; `outcome` says whether retrying is safe and useful. */
export class GatewayCallError extends Error {
  override name = 'GatewayCallError';
  constructor(
    readonly operation: string,
    readonly outcome: Exclude<MoneyOutcome<never>, { type: 'accepted' }>,
  ) {
    super(`${operation}: ${outcome.type === 'rejected' ? `${outcome.error.code} ${outcome.error.description}` : `${outcome.reason} ${outcome.detail}`}`);
  }
}

export type Notes = Record<string, string>;
/** Notes as Razorpay sends them back: values may be null (documented samples), empty notes are `[]`. */
export type ReceivedNotes = Record<string, string | null>;

export interface RzpOrder {
  id: string; entity: 'order'; amount: number; amount_paid: number; amount_due: number; currency: string;
  receipt: string | null; status: 'created' | 'attempted' | 'paid'; attempts: number; notes: ReceivedNotes | [];
  created_at: number; transfers?: RzpTransfer[];
}

export interface RzpPayment {
  id: string; entity: 'payment'; amount: number; currency: string;
  status: 'created' | 'authorized' | 'captured' | 'refunded' | 'failed';
  order_id: string | null; method: string; captured: boolean; amount_refunded: number;
  refund_status: 'partial' | 'full' | null; fee: number | null; tax: number | null; notes: ReceivedNotes | [];
  error_code: string | null; error_description: string | null; created_at: number;
}

export interface RzpTransfer {
  id: string; entity: 'transfer';
  status: 'created' | 'pending' | 'processed' | 'failed' | 'reversed' | 'partially_reversed';
  source: string; recipient: string; amount: number; currency: string; amount_reversed: number;
  fees: number; tax: number; notes: ReceivedNotes | []; on_hold: boolean; settlement_status: 'pending' | 'on_hold' | 'settled' | null;
  recipient_settlement_id: string | null; created_at: number; processed_at: number | null;
  error: { code: string | null; description: string | null; reason: string | null; field: string | null; step: string | null };
}

export interface RzpRefund {
  id: string; entity: 'refund'; amount: number; currency: string; payment_id: string; notes: ReceivedNotes | [];
  receipt: string | null; status: 'pending' | 'processed' | 'failed'; created_at: number;
}

/** A reversal of a Route transfer (POST /v1/transfers/:id/reversals, or made by a refund with reverse_all). */
export interface RzpReversal {
  id: string; entity: 'reversal'; transfer_id: string; amount: number; fee: number; tax: number; currency: string;
  notes: ReceivedNotes | []; initiator_id: string | null; customer_refund_id: string | null; utr: string | null; created_at: number;
}

export interface RzpSettlement {
  id: string; entity: 'settlement'; amount: number; status: 'created' | 'processed' | 'failed';
  fees: number; tax: number; utr: string | null; created_at: number;
}

/** One row of GET /v1/settlements/recon/combined. */
export interface RzpReconRow {
  entity_id: string; type: 'payment' | 'refund' | 'transfer' | 'reversal' | 'adjustment';
  debit: number; credit: number; amount: number; currency: string; fee: number | null; tax: number | null;
  on_hold: boolean; settled: boolean; created_at: number; settled_at: number | null; settlement_id: string | null;
  posted_at: number | null; credit_type: string | null; description: string | null; notes: unknown;
  payment_id: string | null; settlement_utr: string | null; order_id: string | null; order_receipt: string | null;
  method: string | null; card_network: string | null; card_issuer: string | null; card_type: string | null; dispute_id: string | null;
}

export interface CreateOrderInput {
  amountPaise: number;
  /** Our order id (or top-up id): Razorpay echoes it as `order_receipt` in recon rows. */
  receipt: string;
  notes: Notes;
  /** A Route split to linked accounts, settled when the payment is captured. */
  transfers?: Array<{ account: string; amountPaise: number; notes?: Notes }>;
}

export interface DirectTransferInput {
  account: string;
  amountPaise: number;
  /** Sent as X-Transfer-Idempotency (4–36 characters). */
  idempotencyKey: string;
  /** Always carries `transaction_id` (the payout id, our recovery key), and the `order_id` it pays
   * or, for a batch's transfer, the `batch_id`. */
  notes: Notes & { transaction_id: string } & ({ order_id: string } | { batch_id: string });
}

export interface RefundInput {
  paymentId: string;
  amountPaise: number;
  /** Our refund request id: a duplicate receipt is rejected, so a retry cannot refund twice. */
  receipt: string;
  /** Sent as X-Refund-Idempotency (at least 10 of letters, digits, `-`, `_`); defaults to the receipt.
   * The same key and body get the same refund back; a different body under it is a 400. */
  idempotencyKey?: string;
  /** `reverse_all`: recover every transfer made on the payment from its linked account before refunding. */
  reverseAll?: boolean;
  notes?: Notes;
}

export interface ReversalInput {
  transferId: string;
  /** Omitted: the whole amount not yet reversed. */
  amountPaise?: number;
  notes?: Notes;
}

/** The most items a Razorpay list endpoint gives per call (`count` ≤ 100). */
export const PROVIDER_LIST_PAGE = 100;

/** Every call we make to Razorpay. Non-money calls throw GatewayCallError on failure. */
export interface Gateway {
  createOrder(input: CreateOrderInput): Promise<RzpOrder>;
  fetchOrder(orderId: string): Promise<RzpOrder>;
  /** Payments made against a gateway order (the missed-webhook sweep asks this). */
  fetchOrderPayments(orderId: string): Promise<RzpPayment[]>;
  fetchPayment(paymentId: string): Promise<RzpPayment>;
  /** One page (up to 100) of the payments created at or after `fromSec` (and at or before `toSec`
   * when given; Unix seconds, the provider's clock), newest first, from `skip`
   * (GET /payments?from&to&count&skip). A payment that does not parse is logged whole and skipped;
   * `size` is what the provider sent. */
  paymentsPage(query: { fromSec: number; toSec?: number; skip: number }): Promise<{ items: RzpPayment[]; size: number }>;
  /** Captures an authorized payment; a payment already captured is returned as it is. */
  capturePaymentIfNeeded(paymentId: string, amountPaise: number): Promise<RzpPayment>;
  createDirectTransfer(input: DirectTransferInput): Promise<MoneyOutcome<RzpTransfer>>;
  fetchTransfer(transferId: string): Promise<RzpTransfer>;
  /** Every transfer created in [from, to], all pages. A transfer that does not parse is logged whole and skipped. */
  listTransfers(range: { from: Date; to: Date }): Promise<RzpTransfer[]>;
  /** Transfers made on a payment (its own, and its order's Route split once the order is paid). Same tolerance. */
  listPaymentTransfers(paymentId: string): Promise<RzpTransfer[]>;
  reverseTransfer(input: ReversalInput): Promise<MoneyOutcome<RzpReversal>>;
  listTransferReversals(transferId: string): Promise<RzpReversal[]>;
  createRefund(input: RefundInput): Promise<MoneyOutcome<RzpRefund>>;
  fetchRefund(refundId: string): Promise<RzpRefund>;
  /** Every refund made on a payment (GET /payments/:id/refunds), all pages: how a refund whose id we
   * never learned is found by its receipt. A refund that does not parse is logged whole and skipped. */
  listPaymentRefunds(paymentId: string): Promise<RzpRefund[]>;
  /** The recon rows settled on an IST day, a page (up to 1000) at a time as they arrive: the next page
   * is asked for when the consumer wants it, so memory holds one page. */
  settlementReconPages(day: { year: number; month: number; day: number }): AsyncIterable<RzpReconRow[]>;
  /** Every recon row settled on an IST day, all pages collected. */
  settlementReconRows(day: { year: number; month: number; day: number }): Promise<RzpReconRow[]>;
  fetchSettlement(settlementId: string): Promise<RzpSettlement>;
}
