/** The one configuration object, read from the environment once at boot and validated with zod.
 * Every key has a local default so `npm run dev` works on a fresh machine; a bad value stops
 * start-up with a single message that lists every problem. */
import { z } from 'zod';
import { bankDetailsKnobs, bankKeyProblems, devBankKeyProblems } from './bankDetailsKeys';
import { moneyKnobs } from './moneyKnobs';
import { platformKnobs } from './platformKnobs';
import { razorpayKnobs } from './razorpayKnobs';
import { mustUseRealSecrets, sampleSecretProblems, sandboxHostProblems, sandboxOnlyProblems, secretConfigSchema, secretStrengthProblems } from './secretChecks';

export { bankDetailsKeysSchema, bankKeyProblems, DEV_BANK_DETAILS_KEY_ID, devBankKeyProblems, type BankDetailsKey } from './bankDetailsKeys';
export { sdkMetricsAddressSchema, trustProxySchema } from './fields';
export { DEFAULT_PLATFORM_ACCOUNT_ID } from './razorpayKnobs';
export { mustUseRealSecrets, sampleSecretProblems, sandboxHostProblems, sandboxOnlyProblems, secretStrengthProblems } from './secretChecks';

/** Every knob, by concern: each group's file says what its knobs do. */
export const configSchema = z.object({ ...platformKnobs, ...razorpayKnobs, ...moneyKnobs, ...bankDetailsKnobs });

export type Config = z.infer<typeof configSchema>;

export class ConfigError extends Error {
  override name = 'ConfigError';
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
