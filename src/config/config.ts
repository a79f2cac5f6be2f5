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
  RAZORPAY_PLATFORM_ACCOUNT_ID: z.string().regex(/^acc_[A-Za-z0-9]{14}$/).default('acc_PlatformMeals01'),
  /** Webhook secret shared with Razorpay (not the API secret). */
  RAZORPAY_WEBHOOK_SECRET: z.string().min(8).default('sandbox_webhook_secret'),
  /** Per-call timeout for every gateway request. */
  GATEWAY_TIMEOUT_MS: duration.default(8000),
  /** Bearer tokens for the admin/ops and finance APIs. */
  ADMIN_API_TOKEN: z.string().min(8).default('dev-admin-token'),
  FINANCE_API_TOKEN: z.string().min(8).default('dev-finance-token'),
  API_PORT: port.default(3000),
  SANDBOX_PORT: port.default(4010),
  TEMPORAL_PORT: port.default(7233),
  TEMPORAL_UI_PORT: port.default(8233),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
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
