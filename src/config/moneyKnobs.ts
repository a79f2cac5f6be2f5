/** The money rails' clocks and limits: payouts, Route splits, refunds, money in's sweeps, recon. */
import { z } from 'zod';
import { duration } from './fields';

export const moneyKnobs = {
  /** Payouts: tries per payout before it is parked for a human (an ops retry grants as many again). */
  PAYOUT_ATTEMPT_CAP: z.coerce.number().int().min(1).max(50).default(5),
  /** Payouts: startToClose of the createTransfer activity (a dead worker is noticed after this). */
  PAYOUT_TRANSFER_TIMEOUT_MS: duration.default(30_000),
  /** Payouts: first durable backoff after a transient rejection; doubles up to the max. */
  PAYOUT_RETRY_BACKOFF_MS: duration.default(60_000),
  PAYOUT_RETRY_BACKOFF_MAX_MS: duration.default(3_600_000),
  /** Payouts: how often an accepted transfer is fetched when no webhook has settled it. */
  PAYOUT_SETTLEMENT_POLL_MS: duration.default(300_000),
  /** Payouts: how soon the resolver asks the provider again while a request may be in flight. */
  PAYOUT_RESOLVER_RETRY_MS: duration.default(15_000),
  /** …doubling (with jitter) after each listing the provider refused (429, 5xx), up to this. */
  PAYOUT_RESOLVER_RETRY_MAX_MS: duration.default(300_000),
  /** Payouts: while the platform balance is short (the balance wall), one payout at most this often
   * tries a transfer to find out whether the balance is back (Razorpay has no balance API for it). */
  PAYOUT_BALANCE_PROBE_MS: duration.default(60_000),
  /** Payouts: a claim younger than this may still have a request in flight, so "nothing found" is
   * not yet an answer (must exceed the transfer timeout and the gateway timeout). */
  PAYOUT_STALE_CLAIM_MS: duration.default(120_000),
  /** Payouts: how often a parked run re-reads its row in case a signal was lost. */
  PAYOUT_HUMAN_RECHECK_MS: duration.default(3_600_000),
  /** Payout sweep: schedule cadence. It selects open payouts by status, with no age cutoff. */
  PAYOUT_SWEEP_EVERY_MS: duration.default(300_000),
  /** Payouts: how long Razorpay may remember an `X-Transfer-Idempotency` key (undocumented, so
   * configured). A payout found nowhere whose key is older goes to review, never retried. */
  PAYOUT_IDEMPOTENCY_RETENTION_MS: duration.default(86_400_000),
  /** Payouts: how long the resolver may keep failing to list transfers before the payout goes to
   * review (code RESOLVER_LISTING_FAILING) for a human. */
  PAYOUT_RESOLVER_GIVE_UP_MS: duration.default(3_600_000),
  /** Splits (Route): how often a split's transfer is fetched from the provider until it is final. */
  SPLIT_TRANSFER_POLL_MS: duration.default(300_000),
  /** Refunds: first backoff after a transient rejection or unknown outcome; doubles up to the max. */
  REFUND_RETRY_BACKOFF_MS: duration.default(60_000),
  REFUND_RETRY_BACKOFF_MAX_MS: duration.default(3_600_000),
  /** Refunds: how long a refund Razorpay answered 'duplicate receipt' (it exists, its id unknown) may
   * stay unfound among its payment's refunds before it is flagged for ops (last_code
   * REFUND_NOT_FOUND_BY_RECEIPT); the sweep keeps looking, and never makes it again. */
  REFUND_RECEIPT_LOOKUP_GIVE_UP_MS: duration.default(86_400_000),
  /** Settlements first seen without a UTR are fetched again this often until they carry one. */
  SETTLEMENT_UTR_REFRESH_MS: duration.default(3_600_000),
  /** Money in: the missed-webhook sweep looks at orders still unpaid after this long… */
  MISSED_WEBHOOK_SWEEP_AGE_MS: duration.default(900_000),
  /** …expires an unpaid order this long after it was placed (Razorpay's late-authorisation window
   * is 3 days), giving its subsidy back to the wallet… */
  UNPAID_ORDER_EXPIRY_MS: duration.default(259_200_000),
  /** …and runs on a Temporal Schedule this often (overlap skip). */
  MISSED_WEBHOOK_SWEEP_EVERY_MS: duration.default(600_000),
  /** Money in: how often the sweep asks again about an order a late capture may still arrive for
   * (cancelled or expired, or paid with another payment still failed or authorised) while its
   * webhook is missing. */
  LATE_CAPTURE_RECHECK_MS: duration.default(3_600_000),
  /** Recon: bank holidays (IST dates, comma-separated) that are not settlement working days. */
  BANK_HOLIDAYS: z.string().default('').transform((s) => s.split(',').map((d) => d.trim()).filter(Boolean))
    .pipe(z.array(z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'BANK_HOLIDAYS must list YYYY-MM-DD dates'))),
  /** Recon: the daily run starts at this IST hour and covers the previous RECON_LOOKBACK_DAYS days. */
  RECON_SCHEDULE_HOUR_IST: z.coerce.number().int().min(0).max(23).default(7),
  RECON_LOOKBACK_DAYS: z.coerce.number().int().min(1).max(31).default(3),
};
