/** Where real secrets are required and what they must be (issue 21): never a sample where the
 * gateway is real Razorpay or the deployment is production, strong and each its own there; the
 * sandbox only ever on sandbox values. Reads the keys it needs, parsed on their own, so that their
 * problems are listed even beside an unrelated bad key. */
import { z } from 'zod';
import { platformKnobs } from './platformKnobs';
import { DEFAULT_PLATFORM_ACCOUNT_ID, razorpayKnobs } from './razorpayKnobs';
import {
  databasePasswordWeakness, isRazorpayHost, isSandboxGateway, isSandboxKeyId, isSandboxValue, reusedSecretProblems,
  SANDBOX_GATEWAY_HOSTS, urlPassword, webhookSecretWeakness,
} from './secretPolicy';

export const secretConfigSchema = z.object({ ...platformKnobs, ...razorpayKnobs }).pick({
  NODE_ENV: true, RAZORPAY_BASE_URL: true, RAZORPAY_SANDBOX_HOSTS: true, RAZORPAY_KEY_ID: true, RAZORPAY_KEY_SECRET: true,
  RAZORPAY_WEBHOOK_SECRET: true, RAZORPAY_WEBHOOK_PREVIOUS_SECRETS: true, TEMPORAL_API_KEY: true, DATABASE_URL: true, RAZORPAY_PLATFORM_ACCOUNT_ID: true,
});
export type SecretConfig = z.infer<typeof secretConfigSchema>;

/** Secrets that must never reach real Razorpay: this repository's defaults and every value it
 * publishes (compose, README, docs), and anything that reads like a placeholder. */
const PUBLISHED_SECRETS = new Set([
  'rzp_test_sandboxkey0001', 'sandbox_secret_change_me', 'sandbox_webhook_secret',
  'rzp_test_1DP5mmOlF5G5ag', 'thisissupersecret', 'secret', 'webhook_secret',
]);
const PLACEHOLDER = /change[_-]?me|sandbox|example|placeholder|dummy|your[_-]|^x+$|^test$/i;

const SECRET_KEYS = ['RAZORPAY_KEY_ID', 'RAZORPAY_KEY_SECRET', 'RAZORPAY_WEBHOOK_SECRET', 'RAZORPAY_WEBHOOK_PREVIOUS_SECRETS', 'TEMPORAL_API_KEY'] as const;

const isSampleSecret = (v: string): boolean => PUBLISHED_SECRETS.has(v) || PLACEHOLDER.test(v);

type GatewayChoice = Pick<SecretConfig, 'NODE_ENV' | 'RAZORPAY_BASE_URL' | 'RAZORPAY_SANDBOX_HOSTS'>;

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
export function sandboxHostProblems(c: Pick<SecretConfig, 'RAZORPAY_SANDBOX_HOSTS'>): string[] {
  const razorpay = c.RAZORPAY_SANDBOX_HOSTS.filter(isRazorpayHost);
  return razorpay.length === 0 ? [] : [`  - RAZORPAY_SANDBOX_HOSTS: ${razorpay.join(', ')} is Razorpay, never our sandbox`];
}

/** The sandbox (issue 21, item 8) is a test double whose control routes need no credential: it never
 * runs in production, and signs and accepts only sandbox values (see isSandboxValue), so it cannot
 * hold, and forge webhooks with, a real secret. */
export function sandboxOnlyProblems(c: Pick<SecretConfig, 'NODE_ENV' | 'RAZORPAY_KEY_ID' | 'RAZORPAY_KEY_SECRET' | 'RAZORPAY_WEBHOOK_SECRET'>): string[] {
  const problems: string[] = [];
  if (c.NODE_ENV === 'production') problems.push('  - NODE_ENV=production: the Razorpay sandbox is a test double (its /_sandbox control routes need no credential) and never runs in production');
  const notSandbox = 'not a sandbox value (one containing "sandbox", as the defaults do); the sandbox must never hold a real secret';
  if (!isSandboxKeyId(c.RAZORPAY_KEY_ID)) problems.push(`  - RAZORPAY_KEY_ID: ${notSandbox} (and a sandbox key id starts rzp_test_)`);
  if (!isSandboxValue(c.RAZORPAY_KEY_SECRET)) problems.push(`  - RAZORPAY_KEY_SECRET: ${notSandbox}`);
  if (!isSandboxValue(c.RAZORPAY_WEBHOOK_SECRET)) problems.push(`  - RAZORPAY_WEBHOOK_SECRET: ${notSandbox}`);
  return problems;
}
