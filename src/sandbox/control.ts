/** The sandbox's control surface (sandbox-only; Razorpay has nothing like it). Tests use it
 * in-process; the same operations are HTTP routes under /_sandbox/ for the stack and the demo.
 * This file is the contract other modules and tests program against. */
import type { ProviderEndpoint } from '../contracts/providerEndpoints';
import type { RzpPayment, RzpRefund, RzpReversal, RzpSettlement, RzpTransfer } from '../gateway/types';

export interface RateLimitSettings {
  /** Calls per second per key; 0 = not limited. */
  writeRps: number;
  readRps: number;
  /** Bucket size (calls a full bucket lets through at once); 0 = one second at the class's rate. */
  burst: number;
}

export type LinkedAccountStatus = 'activated' | 'suspended' | 'not_activated';

/** Every endpoint the adapter calls, the settlements listing it does not, or every endpoint ('*'). */
export type FaultEndpoint = ProviderEndpoint | 'settlements.list' | '*';

export type FaultKind =
  /** Adds latency, then behaves normally. */
  | { kind: 'latency'; ms: number }
  /** 500 before anything happens. */
  | { kind: 'server_error_before' }
  /** The effect happens, then the connection is dropped without an answer. */
  | { kind: 'drop_after_commit' }
  /** The effect happens, then the answer is held for `ms` (past the client's timeout). */
  | { kind: 'delay_after_commit'; ms: number }
  | { kind: 'rate_limited' };

export interface FaultRule {
  endpoint: FaultEndpoint;
  fault: FaultKind;
  /** Apply to these call numbers of the endpoint (1-based, counted from when the rule is added)… */
  calls?: number[];
  /** …or with this probability, drawn from a PRNG seeded with `seed`. */
  probability?: number;
  seed?: number;
  /** Only calls whose request path contains this (e.g. one payment's id); other calls are not counted. */
  pathIncludes?: string;
}

/** `lose`: the event is recorded but never delivered (as if every retry failed and Razorpay gave up). */
export type WebhookFault = 'duplicate' | 'out_of_order' | 'drop_first_try' | 'lose';

export interface SandboxControl {
  createLinkedAccount(opts?: { id?: string; status?: LinkedAccountStatus; name?: string }): Promise<string>;
  setLinkedAccountStatus(accountId: string, status: LinkedAccountStatus): Promise<void>;
  /** The platform balance that direct transfers and refunds draw on (paise). */
  setPlatformBalance(paise: number): Promise<void>;
  /** The rate limit per key and call class from now on (0 = that class unlimited); buckets start full. */
  setRateLimit(settings: RateLimitSettings): Promise<void>;
  platformBalance(): Promise<number>;

  /** Checkout simulation: authorise and capture a payment for the whole order amount.
   * `failTransfers`: the order's Route transfers fail at once (as when the platform balance is short;
   * Razorpay retries them later: `retryFailedTransfers`). */
  payOrder(orderId: string, opts?: { method?: string; failTransfers?: boolean }): Promise<RzpPayment>;
  /** A payment on the order that fails (payment.failed). */
  failPayment(orderId: string): Promise<RzpPayment>;
  /** Late authorisation: a failed payment becomes authorized and captured. */
  lateAuthorize(paymentId: string): Promise<RzpPayment>;
  /** A captured payment on a gateway order we never created (an orphan). */
  capturedPaymentWithoutOrder(amountPaise: number): Promise<RzpPayment>;

  setWebhookTarget(url: string | null): Promise<void>;
  /** Off: events are recorded but not delivered (as if our endpoint were unreachable). */
  setWebhookDelivery(enabled: boolean): Promise<void>;
  /** `bodyIncludes`: only events whose body contains this (e.g. one payment's id). */
  injectWebhookFault(fault: WebhookFault, opts?: { events?: string[]; count?: number; bodyIncludes?: string }): Promise<void>;
  /** Every webhook event produced so far, delivered or not. */
  webhookEvents(): Promise<Array<{ id: string; event: string; body: string; deliveredAt: number | null; attempts: number }>>;
  /** Waits until every queued webhook delivery has been attempted to completion. */
  drainWebhooks(timeoutMs?: number): Promise<void>;

  injectFault(rule: FaultRule): Promise<void>;
  clearFaults(): Promise<void>;
  /** How many times each endpoint was called (for "no further calls" assertions). */
  callCounts(): Promise<Record<string, number>>;
  /** The same calls by `<endpoint> <path>` (no query): which entity each call was about. Calls the
   * rate limiter refused are not in it. */
  callPathCounts(): Promise<Record<string, number>>;
  /** Faults that fired (not those planned): `<endpoint>:<kind>` for API faults; `webhook:duplicate`,
   * `webhook:out_of_order`, `webhook:drop_first_try`, `webhook:failed_try`, `webhook:given_up`. */
  faultsFired(): Promise<Record<string, number>>;

  /** Every transfer ever created (from the provider's side), optionally for one linked account. */
  transfers(filter?: { recipient?: string }): Promise<RzpTransfer[]>;
  refunds(): Promise<RzpRefund[]>;
  /** Moves pending transfers to processed/failed now instead of after the configured delay. */
  processPendingTransfers(opts?: { fail?: string[] }): Promise<void>;
  /** Razorpay's next-day retry of failed order/payment transfers (3 at most each; `only` these if
   * given); the `fail` ids fail again. Returns the transfers retried, as they are now. */
  retryFailedTransfers(opts?: { only?: string[]; fail?: string[] }): Promise<RzpTransfer[]>;
  /** What the Razorpay Dashboard (or Razorpay itself) does from outside our app: reverses a processed
   * transfer, wholly or `amountPaise` of it, from its linked account, and sends transfer.reversed.
   * Refused as the API refuses it (not processed, more than is left, the account short of balance). */
  reverseTransferFromDashboard(transferId: string, opts?: { amountPaise?: number; notes?: Record<string, string> }): Promise<RzpReversal>;

  /** The sandbox clock (Unix ms); settlement runs and entity timestamps use it. */
  now(): Promise<number>;
  setClock(unixMs: number | null): Promise<void>;
  /** Settles every captured payment due by `date` (IST, T+2 working days) into settlements with UTRs. */
  runSettlements(opts: { date: string; holidays?: string[] }): Promise<RzpSettlement[]>;
  injectAdjustment(opts: { amountPaise: number; description: string; date: string }): Promise<void>;
  putOnHold(paymentId: string): Promise<void>;
  /** Bank statement CSV (utr, amount, value_date, narration) of settlement credits in [from, to]. */
  bankStatementCsv(opts: { from: string; to: string }): Promise<string>;
  reset(): Promise<void>;
}
