/** Issue 21, items 1 and 2: sample secrets only against our sandbox (decided by the base URL's host,
 * whatever NODE_ENV says), and strong, distinct secrets wherever real ones are required. */
import { randomBytes } from 'node:crypto';
import { ConfigError, loadConfig } from '../../src/config/config';
import {
  estimatedBits, isSandboxGateway, MIN_WEBHOOK_SECRET_BITS, MIN_WEBHOOK_SECRET_LENGTH, SANDBOX_GATEWAY_HOSTS, webhookSecretWeakness,
} from '../../src/config/secretPolicy';

const strong = () => randomBytes(24).toString('base64url'); // 32 characters, 192 random bits
const bankKey = `k2026a:${randomBytes(32).toString('base64')}`;
/** Everything a production process needs, each value strong and its own. */
const production = (): Record<string, string> => ({
  NODE_ENV: 'production',
  RAZORPAY_KEY_ID: 'rzp_live_Q8m2xKp0aZ19Lt',
  RAZORPAY_KEY_SECRET: strong(),
  RAZORPAY_WEBHOOK_SECRET: strong(),
  RAZORPAY_PLATFORM_ACCOUNT_ID: 'acc_Q8m2xKp0aZ19Lt',
  DATABASE_URL: `postgres://payouts:${randomBytes(18).toString('hex')}@db.internal:5432/payouts`,
  BANK_DETAILS_KEYS: bankKey,
  BANK_DETAILS_ACTIVE_KEY_ID: 'k2026a',
});

function refusal(env: Record<string, string>): string {
  try {
    loadConfig(env, { refuseSampleSecrets: true });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  return '';
}

describe('item 1: the sandbox is decided by an allow-list of gateway hosts', () => {
  test.each([
    'http://127.0.0.1:4010', 'http://127.8.9.10:4010', 'http://localhost:4010', 'http://LOCALHOST:4010', 'http://[::1]:4010', 'http://sandbox:4010',
  ])('%s is our sandbox', (url) => {
    expect(isSandboxGateway(url)).toBe(true);
  });

  test.each([
    undefined, 'https://api.razorpay.com', 'http://api.razorpay.com:4010', 'http://sandbox.razorpay.com', 'http://egress-proxy:8080',
    'http://10.0.0.5:4010', 'http://128.0.0.1:4010', 'http://localhost.evil.example:4010', 'http://sandbox.example.com', 'http://[::2]:4010',
  ])('%s is not', (url) => {
    expect(isSandboxGateway(url)).toBe(false);
  });

  test('the allow-list is one documented constant, extended by RAZORPAY_SANDBOX_HOSTS but never to a Razorpay host', () => {
    expect(SANDBOX_GATEWAY_HOSTS).toEqual(['localhost', 'sandbox']);
    expect(isSandboxGateway('http://razorpay-sandbox.payments.svc:4010', ['razorpay-sandbox.payments.svc'])).toBe(true);
    expect(isSandboxGateway('https://api.razorpay.com', ['api.razorpay.com'])).toBe(false);
  });

  test('when RAZORPAY_BASE_URL is real Razorpay and NODE_ENV is unset, then the sample secrets are refused and the message says why', () => {
    const message = refusal({ RAZORPAY_BASE_URL: 'https://api.razorpay.com' });
    for (const key of ['RAZORPAY_KEY_ID', 'RAZORPAY_KEY_SECRET', 'RAZORPAY_WEBHOOK_SECRET']) expect(message).toContain(`${key}: a default or sample value`);
    expect(message).toContain('api.razorpay.com is not our sandbox');
  });

  test('when an egress proxy or any other host is the gateway, then the sample secrets are refused too', () => {
    expect(refusal({ RAZORPAY_BASE_URL: 'http://egress-proxy:8080', NODE_ENV: 'development' })).toContain('RAZORPAY_WEBHOOK_SECRET: a default or sample value');
  });

  test('when the gateway is the compose sandbox service or loopback, then the sample secrets are accepted outside production', () => {
    expect(refusal({ RAZORPAY_BASE_URL: 'http://sandbox:4010', NODE_ENV: 'development' })).toBe('');
    expect(refusal({ RAZORPAY_BASE_URL: 'http://localhost:4010' })).toBe('');
  });

  test('when RAZORPAY_SANDBOX_HOSTS names a Razorpay host, then start-up refuses it', () => {
    expect(refusal({ RAZORPAY_BASE_URL: 'http://127.0.0.1:4010', RAZORPAY_SANDBOX_HOSTS: 'sandbox.razorpay.com' })).toContain('RAZORPAY_SANDBOX_HOSTS');
  });
});

describe('item 2: secret strength where real secrets are required', () => {
  test('the estimate: length of the shortest repeating unit times the entropy per character, of the characters or of their steps, whichever is lower', () => {
    expect(estimatedBits('a'.repeat(40))).toBe(0);
    expect(estimatedBits('ab'.repeat(20))).toBeLessThanOrEqual(2);
    expect(estimatedBits('password'.repeat(5))).toBeLessThan(30);
    expect(estimatedBits('abcdefghijklmnopqrstuvwxyz0123456789')).toBeLessThan(30);
    expect(estimatedBits(randomBytes(24).toString('base64url'))).toBeGreaterThan(MIN_WEBHOOK_SECRET_BITS);
  });

  test('random secrets pass: 1,000 of 32 hex characters (openssl rand -hex 16), 32 base64 characters, 64 hex characters', () => {
    for (let i = 0; i < 1000; i++) {
      expect(webhookSecretWeakness(randomBytes(16).toString('hex'))).toBeNull();
      expect(webhookSecretWeakness(randomBytes(24).toString('base64'))).toBeNull();
      expect(webhookSecretWeakness(randomBytes(32).toString('hex'))).toBeNull();
    }
  });

  test.each([
    ['12345678', /shorter than 32/], ['password', /shorter than 32/], ['x'.repeat(40), /too little randomness/],
    ['password'.repeat(4), /too little randomness/], ['0123456789'.repeat(4), /too little randomness/], ['abcdefghijklmnopqrstuvwxyz0123456789', /too little randomness/],
  ])('a webhook secret %s is refused', (value, why) => {
    expect(webhookSecretWeakness(value)).toMatch(why);
    expect(MIN_WEBHOOK_SECRET_LENGTH).toBe(32);
  });

  test('when production has every value right, then it starts', () => {
    expect(refusal(production())).toBe('');
  });

  test('when production is given weak, reused, test-mode and default values, then one message lists every problem and echoes no secret', () => {
    const env = production();
    const keySecret = env.RAZORPAY_KEY_SECRET!;
    const message = refusal({
      ...env,
      RAZORPAY_WEBHOOK_SECRET: keySecret,
      RAZORPAY_WEBHOOK_PREVIOUS_SECRETS: `${keySecret},12345678`,
      RAZORPAY_KEY_ID: 'rzp_test_Q8m2xKp0aZ19Lt',
      RAZORPAY_PLATFORM_ACCOUNT_ID: '',
      DATABASE_URL: 'postgres://payouts:payouts@db.internal:5432/payouts',
      API_PORT: 'eighty',
    });
    for (const problem of [
      'API_PORT',
      'RAZORPAY_WEBHOOK_SECRET: the same value as RAZORPAY_KEY_SECRET',
      'RAZORPAY_WEBHOOK_PREVIOUS_SECRETS: the same value as RAZORPAY_KEY_SECRET',
      'RAZORPAY_WEBHOOK_PREVIOUS_SECRETS: shorter than 32 characters',
      'RAZORPAY_KEY_ID: a test-mode key (rzp_test_…) in production',
      'RAZORPAY_PLATFORM_ACCOUNT_ID: the default (acc_PlatformMeals1)',
      'DATABASE_URL: a well-known database password',
    ]) expect(message).toContain(problem);
    expect(message).not.toContain(keySecret);
    expect(message).not.toContain(':payouts@');
  });

  test('when the previous webhook secret is the current one, then it is refused as reuse', () => {
    const env = production();
    expect(refusal({ ...env, RAZORPAY_WEBHOOK_PREVIOUS_SECRETS: env.RAZORPAY_WEBHOOK_SECRET! })).toContain('RAZORPAY_WEBHOOK_PREVIOUS_SECRETS: the same value as RAZORPAY_WEBHOOK_SECRET');
  });

  test.each([
    ['postgres://postgres:postgres@db:5432/payouts', 'a well-known database password'],
    ['postgres://payouts:Payouts@db:5432/payouts', 'a well-known database password'],
    ['postgres://temporal:temporal@db:5432/payouts', 'a well-known database password'],
    ['postgres://app_user:app_user@db:5432/payouts', 'the password is the user name'],
    ['postgres://payouts:@db:5432/payouts', 'an empty password'],
  ])('when production connects with %s, then it is refused', (url, why) => {
    expect(refusal({ ...production(), DATABASE_URL: url })).toContain(`DATABASE_URL: ${why}`);
  });

  test('when DATABASE_URL has no password and PGPASSWORD is a well-known one, then it is refused', () => {
    expect(refusal({ ...production(), DATABASE_URL: 'postgres://payouts@db:5432/payouts', PGPASSWORD: 'postgres' })).toContain('PGPASSWORD: a well-known database password');
    expect(refusal({ ...production(), DATABASE_URL: 'postgres://payouts@db:5432/payouts' })).toBe('');
  });

  test('when the gateway is not the sandbox outside production, then a weak webhook secret is refused but a Razorpay test key is fine (test mode)', () => {
    const env = { ...production(), NODE_ENV: 'development', RAZORPAY_KEY_ID: 'rzp_test_Q8m2xKp0aZ19Lt', RAZORPAY_WEBHOOK_SECRET: 'whk-7f3a9c2e51b84d06' };
    const message = refusal(env);
    expect(message).toContain('RAZORPAY_WEBHOOK_SECRET: shorter than 32 characters');
    expect(message).not.toContain('RAZORPAY_KEY_ID');
  });

  test('when the gateway is our sandbox outside production, then none of this applies (the sandbox values are weak on purpose)', () => {
    expect(refusal({ RAZORPAY_BASE_URL: 'http://127.0.0.1:4010', DATABASE_URL: 'postgres://postgres:postgres@127.0.0.1:5433/payouts' })).toBe('');
  });
});
