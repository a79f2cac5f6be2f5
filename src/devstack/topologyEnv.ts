/** What every process of the topology is configured with: the roles minted keys for, the
 * sandbox's keys, short payout durations, and the keys the topology owns per process. */
import { configSchema } from '../config/config';
import { LOAD_RUN_LIMITS } from '../api/rateLimit';

export const TOPOLOGY_ROLES = ['ordering', 'ops', 'admin', 'finance'] as const;
export type TopologyRole = (typeof TOPOLOGY_ROLES)[number];

/** The sandbox's keys (a sandbox run: NODE_ENV=development; production refuses these by design). */
export const SANDBOX_SECRETS = {
  RAZORPAY_KEY_ID: 'rzp_test_sandboxkey0001',
  RAZORPAY_KEY_SECRET: 'sandbox_secret_change_me',
  RAZORPAY_WEBHOOK_SECRET: 'sandbox_webhook_secret',
} as const;

/** Short payout durations (seconds instead of minutes), as the worker-kill test uses, so that a dead
 * worker is noticed and a lost start is swept within a test's patience. Every one is overridable
 * through `env`. The stale-claim horizon exceeds both the transfer and the gateway timeout. */
export const TOPOLOGY_TUNING: Readonly<Record<string, string>> = {
  PAYOUT_SWEEP_EVERY_MS: '3000',
  // STALE_CLAIM > TRANSFER_TIMEOUT > GATEWAY_TIMEOUT, as config requires.
  PAYOUT_TRANSFER_TIMEOUT_MS: '4000',
  GATEWAY_TIMEOUT_MS: '3000',
  PAYOUT_STALE_CLAIM_MS: '8000',
  PAYOUT_RESOLVER_RETRY_MS: '300',
  PAYOUT_SETTLEMENT_POLL_MS: '300',
  PAYOUT_RETRY_BACKOFF_MS: '200',
  ...LOAD_RUN_LIMITS,
};

/** Keys the topology sets per process itself; `env` cannot override them. */
export const TOPOLOGY_OWNED_KEYS = [
  'NODE_ENV', 'DATABASE_URL', 'TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE', 'TEMPORAL_TASK_QUEUE', 'API_PORT', 'HTTP_HOST', 'RAZORPAY_BASE_URL',
  'SANDBOX_HOST', 'SANDBOX_PORT', 'SANDBOX_WEBHOOK_URL', 'WORKER_HEALTH_PORT', 'WORKER_SCHEDULES',
  'WORKER_DEPLOYMENT_NAME', 'WORKER_BUILD_ID',
] as const;

export function baseEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(configSchema.shape)) delete env[key];
  return env;
}

export function timestamp(): string {
  return new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').replace(/\..*$/, '');
}

export function withoutOwnedKeys(env: Record<string, string> | undefined): Record<string, string> {
  const owned = new Set<string>(TOPOLOGY_OWNED_KEYS);
  return Object.fromEntries(Object.entries(env ?? {}).filter(([k]) => !owned.has(k)));
}
