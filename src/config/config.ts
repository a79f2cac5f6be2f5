/** The one configuration object, read from the environment once at boot and validated with zod.
 * Every key has a local default so `npm run dev` works on a fresh machine; a bad value stops
 * start-up with a single message that lists every problem. */
import { z } from 'zod';

const port = z.coerce.number().int().min(0).max(65535);
const duration = z.coerce.number().int().min(1); // milliseconds

export const configSchema = z.object({
  /** PostgreSQL URL; when empty the stack starts an embedded PostgreSQL under .data/. */
  DATABASE_URL: z.string().url().optional(),
  /** Temporal frontend host:port. */
  TEMPORAL_ADDRESS: z.string().min(3).default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('payouts'),
  /** Razorpay API keys (the sandbox accepts exactly these). */
  RAZORPAY_KEY_ID: z.string().min(1).default('rzp_test_sandboxkey0001'),
  RAZORPAY_KEY_SECRET: z.string().min(1).default('sandbox_secret_change_me'),
  /** Base URL of the Razorpay API; empty means the real https://api.razorpay.com. */
  RAZORPAY_BASE_URL: z.string().url().optional(),
  /** Our platform's own Razorpay account id (the `source` of direct transfers). */
  RAZORPAY_PLATFORM_ACCOUNT_ID: z.string().regex(/^acc_[A-Za-z0-9]{14}$/).default('acc_PlatformMeals1'),
  /** Webhook secret shared with Razorpay (not the API secret). */
  RAZORPAY_WEBHOOK_SECRET: z.string().min(8).default('sandbox_webhook_secret'),
  /** Per-call timeout for every gateway request. */
  GATEWAY_TIMEOUT_MS: duration.default(8000),
  /** Bearer tokens for the admin/ops and finance APIs. */
  ADMIN_API_TOKEN: z.string().min(8).default('dev-admin-token'),
  FINANCE_API_TOKEN: z.string().min(8).default('dev-finance-token'),
  API_PORT: port.default(3000),
  SANDBOX_PORT: port.default(4010),
  /** `npm run dev` runs our Razorpay sandbox unless this is `off` or RAZORPAY_BASE_URL is set. */
  DEV_SANDBOX: z.enum(['on', 'off']).default('on'),
  /** Sandbox (npm run sandbox): bind address, where it posts webhooks, transfer pending→processed delay, first webhook retry delay. */
  SANDBOX_HOST: z.string().min(1).default('127.0.0.1'),
  SANDBOX_WEBHOOK_URL: z.string().url().optional(),
  SANDBOX_TRANSFER_DELAY_MS: z.coerce.number().int().min(0).default(0),
  SANDBOX_WEBHOOK_RETRY_BASE_MS: duration.default(1000),
  TEMPORAL_PORT: port.default(7233),
  TEMPORAL_UI_PORT: port.default(8233),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
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
  /** Payouts: a claim younger than this may still have a request in flight, so "nothing found" is
   * not yet an answer (must exceed the transfer timeout and the gateway timeout). */
  PAYOUT_STALE_CLAIM_MS: duration.default(120_000),
  /** Payouts: how often a parked run re-reads its row in case a signal was lost. */
  PAYOUT_HUMAN_RECHECK_MS: duration.default(3_600_000),
  /** Payout sweep: schedule cadence and how far back paid orders are looked at. */
  PAYOUT_SWEEP_EVERY_MS: duration.default(300_000),
  PAYOUT_SWEEP_LOOKBACK_HOURS: z.coerce.number().int().min(1).default(72),
  /** Money in: the missed-webhook sweep looks at orders still unpaid after this long… */
  MISSED_WEBHOOK_SWEEP_AGE_MS: duration.default(900_000),
  /** …and runs on a Temporal Schedule this often (overlap skip). */
  MISSED_WEBHOOK_SWEEP_EVERY_MS: duration.default(600_000),
  /** Recon: bank holidays (IST dates, comma-separated) that are not settlement working days. */
  BANK_HOLIDAYS: z.string().default('').transform((s) => s.split(',').map((d) => d.trim()).filter(Boolean))
    .pipe(z.array(z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'BANK_HOLIDAYS must list YYYY-MM-DD dates'))),
  /** Recon: the daily run starts at this IST hour and covers the previous RECON_LOOKBACK_DAYS days. */
  RECON_SCHEDULE_HOUR_IST: z.coerce.number().int().min(0).max(23).default(7),
  RECON_LOOKBACK_DAYS: z.coerce.number().int().min(1).max(31).default(3),
});

export type Config = z.infer<typeof configSchema>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parses `env` (process.env by default); empty strings count as unset. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = configSchema.safeParse(cleaned);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `  - ${i.path.join('.')}: ${i.message}`).join('\n');
    throw new ConfigError(`Invalid configuration:\n${problems}`);
  }
  return parsed.data;
}
