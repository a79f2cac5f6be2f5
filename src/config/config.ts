/** The one configuration object, read from the environment once at boot and validated with zod.
 * Every key has a local default so `npm run dev` works on a fresh machine; a bad value stops
 * start-up with a single message that lists every problem. */
import { isIP } from 'node:net';
import { z } from 'zod';
import {
  bankKeyWeakness, databasePasswordWeakness, isRazorpayHost, isSandboxGateway, isSandboxKeyId, isSandboxValue, reusedSecretProblems,
  SANDBOX_GATEWAY_HOSTS, urlPassword, webhookSecretWeakness,
} from './secretPolicy';

const port = z.coerce.number().int().min(0).max(65535);
const duration = z.coerce.number().int().min(1); // milliseconds
const onOff = z.enum(['on', 'off']);
const commaList = z.string().default('').transform((s) => s.split(',').map((v) => v.trim()).filter(Boolean));

/** `host:port` (IPv6 in brackets) the SDK's Prometheus exporter binds, or `off` (the default: two
 * workers on one host would otherwise fight over one port). The worker's /metrics appends what
 * the exporter serves, so a loopback address is enough for one scrape target per worker. */
export const sdkMetricsAddressSchema = z
  .string()
  .trim()
  .transform((v) => v || 'off')
  .pipe(z.union([
    z.literal('off').transform(() => null),
    z.string().refine((v) => {
      const port = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(v)?.[1];
      return port !== undefined && Number(port) <= 65_535;
    }, 'expected host:port (e.g. 127.0.0.1:9464) or off'),
  ]));

/** `off` (the default: X-Forwarded-* are ignored, the peer is the client), a hop count, or
 * comma-separated proxy addresses or CIDRs (or proxy-addr's names loopback, linklocal,
 * uniquelocal), as Fastify's `trustProxy` takes them. */
export const trustProxySchema = z.string().trim().transform((v, ctx): false | number | string[] => {
  if (v === '' || v === 'off') return false;
  if (/^\d+$/.test(v) && Number(v) >= 1) return Number(v);
  const entries = v.split(',').map((e) => e.trim()).filter(Boolean);
  const bad = entries.filter((e) => !['loopback', 'linklocal', 'uniquelocal'].includes(e) && !isIpOrCidr(e));
  if (bad.length > 0 || entries.length === 0) {
    ctx.addIssue({ code: 'custom', message: `expected off, a hop count or proxy addresses/CIDRs; not ${bad.join(', ') || v}` });
    return z.NEVER;
  }
  return entries;
});

function isIpOrCidr(entry: string): boolean {
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128));
}

/** The embedded development key for bank details (issue 20): published here, so production refuses
 * it (devBankKeyProblems). Its id says what it is wherever a row names it. */
export const DEV_BANK_DETAILS_KEY_ID = 'dev-not-secret';
const DEV_BANK_DETAILS_KEY = Buffer.from('payouts-dev-bank-key-NOT-SECRET!', 'utf8');
const BANK_KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;

export interface BankDetailsKey { id: string; key: Buffer }

/** One `id:base64` entry of BANK_DETAILS_KEYS; the material is never echoed in a message. */
const bankDetailsKeySchema = z.string().transform((entry, ctx): BankDetailsKey => {
  const colon = entry.indexOf(':');
  const id = colon < 0 ? '' : entry.slice(0, colon).trim();
  const material = colon < 0 ? '' : entry.slice(colon + 1).trim();
  if (!BANK_KEY_ID.test(id)) {
    ctx.addIssue({ code: 'custom', message: 'each key is id:base64, the id 1–32 letters, digits, _ or -' });
    return z.NEVER;
  }
  const key = Buffer.from(material, 'base64');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(material) || key.toString('base64') !== material || key.length !== 32) {
    ctx.addIssue({ code: 'custom', message: `key ${id} must be exactly 32 bytes in base64 (e.g. openssl rand -base64 32)` });
    return z.NEVER;
  }
  return { id, key };
});

/** The sandbox's own account (the default of RAZORPAY_PLATFORM_ACCOUNT_ID and of the sandbox). */
export const DEFAULT_PLATFORM_ACCOUNT_ID = 'acc_PlatformMeals1';

export const bankDetailsKeysSchema = z.string().transform((s) => s.split(',').map((v) => v.trim()).filter(Boolean))
  .pipe(z.array(bankDetailsKeySchema).min(1, 'at least one key (id:base64)'))
  .refine((keys) => new Set(keys.map((k) => k.id)).size === keys.length, 'each key id appears once');

export const configSchema = z.object({
  /** `production` refuses every default or sample secret, as talking to real Razorpay does. */
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  /** PostgreSQL URL; when empty the stack starts an embedded PostgreSQL under .data/. TLS through
   * the URL (`?sslmode=verify-full&sslrootcert=/path/ca.pem`) or the two keys below. */
  DATABASE_URL: z.string().url().optional(),
  /** TLS to PostgreSQL when the URL does not say: `require` (encrypted, any certificate) or
   * `verify-full` (certificate checked against DATABASE_SSL_CA_FILE, or the system CAs). */
  DATABASE_SSLMODE: z.enum(['disable', 'require', 'verify-full']).default('disable'),
  DATABASE_SSL_CA_FILE: z.string().min(1).optional(),
  /** Pool size per process, and how long a request waits for a free connection before failing
   * (a slow gateway or a stuck query must not queue the webhook endpoint for ever). */
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(500).default(10),
  /** Connections kept open while idle (at most DATABASE_POOL_MAX); the API opens and warms this many
   * before it listens (api/warmUp.ts), so a peak reaching a fresh instance meets no cold connection. */
  DATABASE_POOL_MIN: z.coerce.number().int().min(0).max(500).default(4),
  DATABASE_CONNECT_TIMEOUT_MS: duration.default(5_000),
  /** Temporal frontend host:port. */
  TEMPORAL_ADDRESS: z.string().min(3).default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('payouts'),
  /** Where people open the Temporal Web UI; links in the ops queue and the CLI point there. */
  TEMPORAL_UI_URL: z.string().url().default('http://127.0.0.1:8233'),
  /** TLS to Temporal (self-hosted mTLS or Temporal Cloud): `on` with the system CAs, or any of the
   * files below (PEM); an API key (Temporal Cloud) implies TLS. */
  TEMPORAL_TLS: onOff.default('off'),
  TEMPORAL_TLS_CA_FILE: z.string().min(1).optional(),
  TEMPORAL_TLS_CERT_FILE: z.string().min(1).optional(),
  TEMPORAL_TLS_KEY_FILE: z.string().min(1).optional(),
  /** Overrides the server name checked in Temporal's certificate (SNI). */
  TEMPORAL_TLS_SERVER_NAME: z.string().min(1).optional(),
  TEMPORAL_API_KEY: z.string().min(1).optional(),
  /** Worker and API: how long the first connection to PostgreSQL and Temporal is retried (with
   * backoff) before the process exits non-zero. */
  STARTUP_CONNECT_DEADLINE_MS: duration.default(120_000),
  /** The production worker creates and updates every Schedule at boot; `off` for test workers. */
  WORKER_SCHEDULES: onOff.default('on'),
  /** Worker Versioning (docs/production.md, "Deploying a workflow change"): the worker deployment
   * this worker belongs to and its build. With both set, the worker polls as that deployment
   * version, runs workflows AUTO_UPGRADE, and gets tasks only once an operator makes its version
   * current (`temporal worker deployment set-current-version`, or `npm run deploy`). Unset: an
   * unversioned worker (every task of the queue). */
  WORKER_DEPLOYMENT_NAME: z.string().min(1).max(200).regex(/^[A-Za-z0-9._-]+$/, 'letters, digits, dot, dash, underscore').optional(),
  WORKER_BUILD_ID: z.string().min(1).max(200).regex(/^[A-Za-z0-9._-]+$/, 'letters, digits, dot, dash, underscore').optional(),
  /** The worker's CPU niceness (0–19), set on every thread at boot: on a host the worker shares with
   * the API, 10 lets webhook replies run first and the payouts take what they leave (src/startup/
   * cpuPriority.ts; docs/production.md). 0: unchanged, as on a host of its own. */
  WORKER_CPU_NICE: z.coerce.number().int().min(0).max(19).default(0),
  /** The worker's own HTTP port for /health and /ready (0: a free port, printed at start). */
  WORKER_HEALTH_PORT: port.default(3001),
  /** The worker's Temporal SDK metrics exporter address (host:port), or off; see sdkMetricsAddressSchema. */
  WORKER_SDK_METRICS_ADDRESS: sdkMetricsAddressSchema.default(null),
  /** Bind address of the API and the worker's health port. */
  HTTP_HOST: z.string().min(1).default('0.0.0.0'),
  /** The API's operational routes (/metrics, /docs, /openapi.json, /ready with each check's detail)
   * on a port of their own, never routed from the internet (0: a free port); the public port then
   * answers /ready without detail. Unset: all on API_PORT, as in development; production requires it. */
  ADMIN_PORT: port.optional(),
  /** Bind address of ADMIN_PORT (default HTTP_HOST). */
  ADMIN_HOST: z.string().min(1).optional(),
  /** Reverse proxies whose X-Forwarded-For/-Proto/-Host the API believes; see trustProxySchema. */
  TRUST_PROXY: trustProxySchema.default(false),
  /** The console's own origin (e.g. https://payouts.example.com), which a sign-in's Origin must
   * match; unset: the request's Host. */
  PUBLIC_URL: z.string().url().transform((u) => new URL(u).origin).optional(),
  /** Razorpay API keys (the sandbox accepts exactly these). */
  RAZORPAY_KEY_ID: z.string().min(1).default('rzp_test_sandboxkey0001'),
  RAZORPAY_KEY_SECRET: z.string().min(1).default('sandbox_secret_change_me'),
  /** Base URL of the Razorpay API; empty means the real https://api.razorpay.com. Only a host on the
   * sandbox allow-list (loopback, SANDBOX_GATEWAY_HOSTS, RAZORPAY_SANDBOX_HOSTS) may be given the
   * sandbox's sample secrets; see mustUseRealSecrets. */
  RAZORPAY_BASE_URL: z.string().url().optional(),
  /** More host names that are our sandbox (comma-separated), beside loopback, `localhost` and the
   * compose service `sandbox`; a *.razorpay.com host is refused here. */
  RAZORPAY_SANDBOX_HOSTS: commaList,
  /** Our platform's own Razorpay account id (the `source` of direct transfers); the default is the
   * sandbox's, which real secrets refuse. */
  RAZORPAY_PLATFORM_ACCOUNT_ID: z.string().regex(/^acc_[A-Za-z0-9]{14}$/).default(DEFAULT_PLATFORM_ACCOUNT_ID),
  /** Webhook secret shared with Razorpay (not the API secret). */
  RAZORPAY_WEBHOOK_SECRET: z.string().min(8).default('sandbox_webhook_secret'),
  /** Earlier webhook secrets still accepted during a rotation (comma-separated): Razorpay signs
   * retries of older events with the secret they were first sent with. */
  RAZORPAY_WEBHOOK_PREVIOUS_SECRETS: commaList.pipe(z.array(z.string().min(8))),
  /** Replay window (src/webhooks/eventAge.ts): a signed event whose created_at is older than this
   * (Razorpay retries for 24 h), or ahead of our clock by more than the skew, is set aside, not applied.
   * Keep the defaults in production; only tests that move the sandbox's clock by days widen them. */
  RAZORPAY_WEBHOOK_MAX_AGE_SECONDS: z.coerce.number().int().min(60).max(366 * 86_400).default(86_400),
  RAZORPAY_WEBHOOK_CLOCK_SKEW_SECONDS: z.coerce.number().int().min(0).max(31 * 86_400).default(300),
  /** Per-call timeout for every gateway request. */
  GATEWAY_TIMEOUT_MS: duration.default(8000),
  /** The provider budget the whole fleet obeys (issue 22): calls per second to Razorpay, enforced by
   * Temporal's task-queue rate limit (maxTaskQueueActivitiesPerSecond, the server's limit, so it holds
   * across any number of workers). Writes: the money-moving call; reads: the resolver's listing,
   * settlement fetches and the sweeps' provider reads. Defaults within Razorpay's 5–10/s guidance. */
  RAZORPAY_WRITE_RPS: z.coerce.number().min(0.1).max(1_000).default(8),
  RAZORPAY_READ_RPS: z.coerce.number().min(0.1).max(1_000).default(10),
  /** The API's own Razorpay calls (order create at checkout and for a wallet top-up): a token bucket
   * per API process (src/moneyin/providerBudget.ts), refilling at this rate and holding a burst of
   * API_RAZORPAY_BURST. A request it cannot admit gets 503 + Retry-After before anything is recorded.
   * Per process: with N API processes the API's share of the account's limit is N × this rate. */
  API_RAZORPAY_RPS: z.coerce.number().min(0.1).max(1_000).default(10),
  API_RAZORPAY_BURST: z.coerce.number().int().min(1).max(10_000).default(20),
  /** The outbox drainer starts payout runs only while fewer than RAZORPAY_WRITE_RPS × this many
   * payouts wait in Temporal for the write budget (a burst waits as outbox rows instead). */
  OUTBOX_START_AHEAD_SECONDS: z.coerce.number().min(1).max(3_600).default(15),
  /** Alert (payouts_backlog_eta_seconds) when draining the due payouts at RAZORPAY_WRITE_RPS would take longer. */
  PAYOUT_BACKLOG_ETA_ALERT_SECONDS: z.coerce.number().int().min(1).default(3_600),
  API_PORT: port.default(3000),
  /** The largest request body any API or console route reads (bytes)… */
  API_BODY_LIMIT_BYTES: z.coerce.number().int().min(1_024).max(64 * 1024 * 1024).default(64 * 1024),
  /** …but the routes that take a file (bank statements, the bank's response file; API and console). */
  API_FILE_BODY_LIMIT_BYTES: z.coerce.number().int().min(1_024).max(256 * 1024 * 1024).default(5 * 1024 * 1024),
  /** Throttling (src/api/rateLimit.ts; counted per API process, in memory), each a count per window:
   * requests per client address (every route but the Razorpay webhook)… */
  RATE_LIMIT_WINDOW_MS: duration.default(60_000),
  RATE_LIMIT_CLIENT_MAX: z.coerce.number().int().min(1).default(12_000),
  /** …requests per authenticated API key (or console session's key)… */
  RATE_LIMIT_KEY_MAX: z.coerce.number().int().min(1).default(12_000),
  /** …console sign-in attempts per client… */
  RATE_LIMIT_SIGN_IN_MAX: z.coerce.number().int().min(1).default(10),
  /** …and refused API keys per key id (past it that key id is refused before it is looked up) and,
   * apart, per client (past it a refused key is answered 429; a valid key is still served). */
  RATE_LIMIT_AUTH_FAILURES_MAX: z.coerce.number().int().min(1).default(20),
  SANDBOX_PORT: port.default(4010),
  /** `npm run dev` runs our Razorpay sandbox unless this is `off` or RAZORPAY_BASE_URL is set. */
  DEV_SANDBOX: z.enum(['on', 'off']).default('on'),
  /** Sandbox (npm run sandbox): bind address, where it posts webhooks, transfer pending→processed delay, first webhook retry delay. */
  SANDBOX_HOST: z.string().min(1).default('127.0.0.1'),
  SANDBOX_WEBHOOK_URL: z.string().url().optional(),
  SANDBOX_TRANSFER_DELAY_MS: z.coerce.number().int().min(0).default(0),
  SANDBOX_WEBHOOK_RETRY_BASE_MS: duration.default(1000),
  /** Sandbox: webhook deliveries in flight at once (Razorpay does not serialise them); events about
   * one order or payment still go one at a time, in order. */
  SANDBOX_WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(8),
  /** Sandbox: Razorpay's rate limit, a token bucket per API key and call class (src/sandbox/rateLimit.ts;
   * writes create or move something, reads are the rest), calls per second; 0 = off (the default). */
  SANDBOX_RATE_LIMIT_WRITE_RPS: z.coerce.number().min(0).max(10_000).default(0),
  SANDBOX_RATE_LIMIT_READ_RPS: z.coerce.number().min(0).max(10_000).default(0),
  /** Sandbox: the rate limit's bucket size (calls at once); 0 = one second at each class's rate. */
  SANDBOX_RATE_LIMIT_BURST: z.coerce.number().int().min(0).max(100_000).default(0),
  TEMPORAL_PORT: port.default(7233),
  TEMPORAL_UI_PORT: port.default(8233),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** `json` lines, or `pretty` human lines for development (`npm run dev` sets it; see logFormatProblems). */
  LOG_FORMAT: z.enum(['json', 'pretty']).default('json'),
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
  /** Bank details: the AES-256-GCM keys vendors' account numbers are encrypted with, comma-separated
   * `id:base64` (each exactly 32 bytes). Keep an old key listed until `npm run bank-details:rotate`
   * has re-encrypted its rows. Default: the embedded development key (production refuses it). */
  BANK_DETAILS_KEYS: bankDetailsKeysSchema.default([{ id: DEV_BANK_DETAILS_KEY_ID, key: DEV_BANK_DETAILS_KEY }]),
  /** The key new and rotated rows are encrypted with; one of the ids in BANK_DETAILS_KEYS. */
  BANK_DETAILS_ACTIVE_KEY_ID: z.string().trim().regex(BANK_KEY_ID, 'a key id: 1–32 letters, digits, _ or -').default(DEV_BANK_DETAILS_KEY_ID),
});

export type Config = z.infer<typeof configSchema>;

/** The keys the secret checks read, parsed on their own so that their problems are listed even
 * beside an unrelated bad key. */
const secretConfigSchema = configSchema.pick({
  NODE_ENV: true, RAZORPAY_BASE_URL: true, RAZORPAY_SANDBOX_HOSTS: true, RAZORPAY_KEY_ID: true, RAZORPAY_KEY_SECRET: true,
  RAZORPAY_WEBHOOK_SECRET: true, RAZORPAY_WEBHOOK_PREVIOUS_SECRETS: true, TEMPORAL_API_KEY: true, DATABASE_URL: true, RAZORPAY_PLATFORM_ACCOUNT_ID: true,
});
type SecretConfig = z.infer<typeof secretConfigSchema>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Secrets that must never reach real Razorpay: this repository's defaults and every value it
 * publishes (compose, README, docs), and anything that reads like a placeholder. */
const PUBLISHED_SECRETS = new Set([
  'rzp_test_sandboxkey0001', 'sandbox_secret_change_me', 'sandbox_webhook_secret',
  'rzp_test_1DP5mmOlF5G5ag', 'thisissupersecret', 'secret', 'webhook_secret',
]);
const PLACEHOLDER = /change[_-]?me|sandbox|example|placeholder|dummy|your[_-]|^x+$|^test$/i;

const SECRET_KEYS = ['RAZORPAY_KEY_ID', 'RAZORPAY_KEY_SECRET', 'RAZORPAY_WEBHOOK_SECRET', 'RAZORPAY_WEBHOOK_PREVIOUS_SECRETS', 'TEMPORAL_API_KEY'] as const;

const isSampleSecret = (v: string): boolean => PUBLISHED_SECRETS.has(v) || PLACEHOLDER.test(v);

type GatewayChoice = Pick<Config, 'NODE_ENV' | 'RAZORPAY_BASE_URL' | 'RAZORPAY_SANDBOX_HOSTS'>;

/** Sample secrets are for our sandbox only: any gateway whose host is not on the allow-list (no base
 * URL, api.razorpay.com, an egress proxy…) or a production deployment needs real, strong secrets. */
export function mustUseRealSecrets(config: GatewayChoice): boolean {
  return config.NODE_ENV === 'production' || !isSandboxGateway(config.RAZORPAY_BASE_URL, config.RAZORPAY_SANDBOX_HOSTS);
}

/** Why real secrets are required, for the start-up message. */
function realSecretsReason(config: GatewayChoice): string {
  if (config.NODE_ENV === 'production') return 'NODE_ENV=production';
  if (!config.RAZORPAY_BASE_URL) return 'no RAZORPAY_BASE_URL: real Razorpay';
  const allowed = ['loopback', ...SANDBOX_GATEWAY_HOSTS, ...config.RAZORPAY_SANDBOX_HOSTS].join(', ');
  return `RAZORPAY_BASE_URL's host ${new URL(config.RAZORPAY_BASE_URL).hostname} is not our sandbox (allowed: ${allowed})`;
}

/** One problem line per offending key (values are never echoed). */
export function sampleSecretProblems(config: SecretConfig): string[] {
  const problems: string[] = [];
  for (const key of SECRET_KEYS) {
    const value = config[key];
    const values = Array.isArray(value) ? value : value === undefined ? [] : [value];
    if (values.some(isSampleSecret)) {
      problems.push(`  - ${key}: a default or sample value; set the real secret (required: ${realSecretsReason(config)})`);
    }
  }
  return problems;
}

/** Where real secrets are required, each must also be strong and its own (issue 21, item 2):
 * webhook secrets long and random, no secret reused as another, a live key in production, an
 * account of our own, no well-known database password. Samples are left to sampleSecretProblems.
 * `env` is the raw environment (PGPASSWORD is libpq's, not a config key). */
export function secretStrengthProblems(config: SecretConfig, env: Record<string, string | undefined>): string[] {
  const problems: string[] = [];
  const webhookSecrets: Array<[string, string]> = [
    ['RAZORPAY_WEBHOOK_SECRET', config.RAZORPAY_WEBHOOK_SECRET],
    ...config.RAZORPAY_WEBHOOK_PREVIOUS_SECRETS.map((v): [string, string] => ['RAZORPAY_WEBHOOK_PREVIOUS_SECRETS', v]),
  ];
  for (const [key, value] of webhookSecrets) {
    const why = isSampleSecret(value) ? null : webhookSecretWeakness(value);
    const line = `  - ${key}: ${why}`;
    if (why && !problems.includes(line)) problems.push(line);
  }
  const database = config.DATABASE_URL ? urlPassword(config.DATABASE_URL) : { user: '', password: undefined };
  // libpq falls back to PGPASSWORD when the URL names no password.
  const [passwordKey, password] = database.password !== undefined ? ['DATABASE_URL', database.password] : ['PGPASSWORD', env.PGPASSWORD];
  const passwordWhy = password === undefined ? null : databasePasswordWeakness(password, database.user);
  if (passwordWhy) problems.push(`  - ${passwordKey}: ${passwordWhy}`);
  problems.push(...reusedSecretProblems([
    { key: 'RAZORPAY_KEY_SECRET', values: [config.RAZORPAY_KEY_SECRET] },
    { key: 'RAZORPAY_WEBHOOK_SECRET', values: [config.RAZORPAY_WEBHOOK_SECRET] },
    { key: 'RAZORPAY_WEBHOOK_PREVIOUS_SECRETS', values: config.RAZORPAY_WEBHOOK_PREVIOUS_SECRETS },
    { key: 'TEMPORAL_API_KEY', values: config.TEMPORAL_API_KEY ? [config.TEMPORAL_API_KEY] : [] },
    { key: 'DATABASE_URL', values: database.password ? [database.password] : [] },
  ].map((slot) => ({ ...slot, values: slot.values.filter((v) => !isSampleSecret(v)) }))));
  if (config.NODE_ENV === 'production' && config.RAZORPAY_KEY_ID.startsWith('rzp_test_') && !isSampleSecret(config.RAZORPAY_KEY_ID)) {
    problems.push('  - RAZORPAY_KEY_ID: a test-mode key (rzp_test_…) in production; use the live key (rzp_live_…)');
  }
  if (config.RAZORPAY_PLATFORM_ACCOUNT_ID === DEFAULT_PLATFORM_ACCOUNT_ID) {
    problems.push(`  - RAZORPAY_PLATFORM_ACCOUNT_ID: the default (${DEFAULT_PLATFORM_ACCOUNT_ID}), the sandbox's account; set your Razorpay account id`);
  }
  return problems;
}

/** The allow-list may be extended, never to Razorpay itself. */
export function sandboxHostProblems(c: Pick<Config, 'RAZORPAY_SANDBOX_HOSTS'>): string[] {
  const razorpay = c.RAZORPAY_SANDBOX_HOSTS.filter(isRazorpayHost);
  return razorpay.length === 0 ? [] : [`  - RAZORPAY_SANDBOX_HOSTS: ${razorpay.join(', ')} is Razorpay, never our sandbox`];
}

/** The sandbox (issue 21, item 8) is a test double whose control routes need no credential: it never
 * runs in production, and signs and accepts only sandbox values (see isSandboxValue), so it cannot
 * hold, and forge webhooks with, a real secret. */
export function sandboxOnlyProblems(c: Pick<Config, 'NODE_ENV' | 'RAZORPAY_KEY_ID' | 'RAZORPAY_KEY_SECRET' | 'RAZORPAY_WEBHOOK_SECRET'>): string[] {
  const problems: string[] = [];
  if (c.NODE_ENV === 'production') problems.push('  - NODE_ENV=production: the Razorpay sandbox is a test double (its /_sandbox control routes need no credential) and never runs in production');
  const notSandbox = 'not a sandbox value (one containing "sandbox", as the defaults do); the sandbox must never hold a real secret';
  if (!isSandboxKeyId(c.RAZORPAY_KEY_ID)) problems.push(`  - RAZORPAY_KEY_ID: ${notSandbox} (and a sandbox key id starts rzp_test_)`);
  if (!isSandboxValue(c.RAZORPAY_KEY_SECRET)) problems.push(`  - RAZORPAY_KEY_SECRET: ${notSandbox}`);
  if (!isSandboxValue(c.RAZORPAY_WEBHOOK_SECRET)) problems.push(`  - RAZORPAY_WEBHOOK_SECRET: ${notSandbox}`);
  return problems;
}

/** A gateway call must give up before the money-moving activity times out (so the activity answers
 * `unknown` itself), and a claim counts as stale only after a request can no longer be in flight. */
export function timeoutOrderProblems(c: Pick<Config, 'GATEWAY_TIMEOUT_MS' | 'PAYOUT_TRANSFER_TIMEOUT_MS' | 'PAYOUT_STALE_CLAIM_MS'>): string[] {
  const problems: string[] = [];
  if (!(c.PAYOUT_TRANSFER_TIMEOUT_MS > c.GATEWAY_TIMEOUT_MS)) {
    problems.push(`  - PAYOUT_TRANSFER_TIMEOUT_MS (${c.PAYOUT_TRANSFER_TIMEOUT_MS}) must exceed GATEWAY_TIMEOUT_MS (${c.GATEWAY_TIMEOUT_MS})`);
  }
  if (!(c.PAYOUT_STALE_CLAIM_MS > c.PAYOUT_TRANSFER_TIMEOUT_MS)) {
    problems.push(`  - PAYOUT_STALE_CLAIM_MS (${c.PAYOUT_STALE_CLAIM_MS}) must exceed PAYOUT_TRANSFER_TIMEOUT_MS (${c.PAYOUT_TRANSFER_TIMEOUT_MS})`);
  }
  return problems;
}

/** The active key must be one of the keys (in every environment: otherwise nothing can be written). */
export function bankKeyProblems(c: Pick<Config, 'BANK_DETAILS_KEYS' | 'BANK_DETAILS_ACTIVE_KEY_ID'>): string[] {
  if (c.BANK_DETAILS_KEYS.some((k) => k.id === c.BANK_DETAILS_ACTIVE_KEY_ID)) return [];
  return [`  - BANK_DETAILS_ACTIVE_KEY_ID (${c.BANK_DETAILS_ACTIVE_KEY_ID}) is not one of the ids in BANK_DETAILS_KEYS (${c.BANK_DETAILS_KEYS.map((k) => k.id).join(', ')})`];
}

/** Production encrypts account numbers with its own keys: both keys set, never the embedded
 * development key (by id or material), and none of low entropy. Reads the environment as given (unset is not the default),
 * so the problems are listed even beside keys that do not parse. */
export function devBankKeyProblems(raw: Record<string, string | undefined>): string[] {
  if (raw.NODE_ENV !== 'production') return [];
  const problems: string[] = [];
  const keys = bankDetailsKeysSchema.safeParse(raw.BANK_DETAILS_KEYS ?? '');
  if (!raw.BANK_DETAILS_KEYS) problems.push('  - BANK_DETAILS_KEYS: not set; production needs its own key (id:base64 of 32 random bytes, e.g. openssl rand -base64 32)');
  else if (keys.success && keys.data.some((k) => k.id === DEV_BANK_DETAILS_KEY_ID || k.key.equals(DEV_BANK_DETAILS_KEY))) {
    problems.push(`  - BANK_DETAILS_KEYS: holds the embedded development key (${DEV_BANK_DETAILS_KEY_ID}); production needs its own`);
  }
  // As weak webhook secrets are refused (issue 41): a zero or patterned key seals nothing.
  for (const { id, key } of keys.success ? keys.data : []) {
    const why = id === DEV_BANK_DETAILS_KEY_ID ? null : bankKeyWeakness(key);
    if (why) problems.push(`  - BANK_DETAILS_KEYS: key ${id} has ${why}`);
  }
  if (!raw.BANK_DETAILS_ACTIVE_KEY_ID) problems.push('  - BANK_DETAILS_ACTIVE_KEY_ID: not set; name the key in BANK_DETAILS_KEYS that new rows are encrypted with');
  return problems;
}

/** `pretty` needs pino-pretty, a dev dependency that the production image (`npm ci --omit=dev`)
 * does not install. The one place the rule lives: the logger asks it before loading pino-pretty
 * (it starts before any config is loaded), and loadConfig lists it even beside other bad keys, so
 * both read the raw environment. */
export function logFormatProblems(c: { NODE_ENV?: string; LOG_FORMAT?: string }): string[] {
  if (c.NODE_ENV === 'production' && c.LOG_FORMAT === 'pretty') {
    return ['  - LOG_FORMAT=pretty is for development: pino-pretty is a dev dependency and is not installed in production images; use LOG_FORMAT=json'];
  }
  return [];
}

/** Parses `env` (process.env by default); empty strings count as unset. Entry points that talk to
 * Razorpay or take its webhooks (worker, API, the stack) pass `refuseSampleSecrets`, which also
 * checks the secrets' strength where real ones are required and in production refuses the
 * development bank details key; a tool that only handles bank details (the key rotation) passes
 * `refuseDevBankKeys`; the sandbox (npm run sandbox, the stack's own) passes `asSandbox`. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, opts: { refuseSampleSecrets?: boolean; refuseDevBankKeys?: boolean; asSandbox?: boolean } = {}): Config {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = configSchema.safeParse(cleaned);
  const problems = parsed.success ? [] : parsed.error.issues.map((i) => `  - ${i.path.join('.')}: ${i.message}`);
  problems.push(...logFormatProblems(cleaned));
  if (parsed.success) problems.push(...timeoutOrderProblems(parsed.data));
  if (parsed.success) problems.push(...sandboxHostProblems(parsed.data));
  if (parsed.success && !parsed.data.WORKER_DEPLOYMENT_NAME !== !parsed.data.WORKER_BUILD_ID) {
    problems.push('  - WORKER_DEPLOYMENT_NAME and WORKER_BUILD_ID: set both (a versioned worker) or neither (an unversioned one)');
  }
  const secrets = secretConfigSchema.safeParse(cleaned);
  if (secrets.success && opts.refuseSampleSecrets && mustUseRealSecrets(secrets.data)) {
    problems.push(...sampleSecretProblems(secrets.data), ...secretStrengthProblems(secrets.data, cleaned));
  }
  if (parsed.success && opts.asSandbox) problems.push(...sandboxOnlyProblems(parsed.data));
  if (parsed.success) problems.push(...bankKeyProblems(parsed.data));
  if (opts.refuseSampleSecrets || opts.refuseDevBankKeys) problems.push(...devBankKeyProblems(cleaned));
  if (problems.length > 0 || !parsed.success) throw new ConfigError(`Invalid configuration:\n${problems.join('\n')}`);
  return parsed.data;
}
