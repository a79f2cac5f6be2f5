/** The platform's knobs: PostgreSQL, Temporal, the worker, the API's HTTP surface and its throttling,
 * the logs. */
import { z } from 'zod';
import { duration, onOff, port, sdkMetricsAddressSchema, trustProxySchema } from './fields';

export const platformKnobs = {
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
  /** Where the API and the worker send their traces (OTLP over HTTP, e.g. Jaeger's
   * http://127.0.0.1:4318); unset: no trace leaves the process (the spans are no-ops). */
  TRACES_OTLP_URL: z.string().url().optional(),
  /** Jaeger's query API (its /api/traces), which the console reads to show a payout's trace. */
  TRACES_QUERY_URL: z.string().url().optional(),
  /** Where people open a trace store's UI (Jaeger's, in docker compose); the console links there
   * beside the trace it draws. Unset: no link. */
  TRACES_UI_URL: z.string().url().optional(),
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
  TEMPORAL_PORT: port.default(7233),
  TEMPORAL_UI_PORT: port.default(8233),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** `json` lines, or `pretty` human lines for development (`npm run dev` sets it; see logFormatProblems). */
  LOG_FORMAT: z.enum(['json', 'pretty']).default('json'),
};
