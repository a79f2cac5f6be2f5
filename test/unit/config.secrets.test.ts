import { randomBytes } from 'node:crypto';
import { ConfigError, loadConfig } from '../../src/config/config';
import { bankKeyWeakness } from '../../src/config/secretPolicy';

// Real secrets must also be strong and an account of our own (test/unit/config.secretPolicy.test.ts).
const REAL = {
  RAZORPAY_KEY_ID: 'rzp_live_Q8m2xKp0aZ19Lt',
  RAZORPAY_KEY_SECRET: 'Xq3v9LmP2sT8wK1nB7cR4yHd',
  RAZORPAY_WEBHOOK_SECRET: 'whk-7f3a9c2e51b84d06e4a1f7c93b2d58a6',
  RAZORPAY_PLATFORM_ACCOUNT_ID: 'acc_Q8m2xKp0aZ19Lt',
};

function refusal(env: Record<string, string>, opts: Parameters<typeof loadConfig>[1] = { refuseSampleSecrets: true }): string {
  try {
    loadConfig(env, opts);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  return '';
}

describe('config: default and sample secrets', () => {
  test('when the app would talk to real Razorpay with the defaults, then one error names every offending key', () => {
    const message = refusal({});
    for (const key of ['RAZORPAY_KEY_ID', 'RAZORPAY_KEY_SECRET', 'RAZORPAY_WEBHOOK_SECRET']) expect(message).toContain(`${key}: a default or sample value`);
  });

  test('when a sandbox URL is configured outside production, then the sandbox defaults are accepted', () => {
    expect(refusal({ RAZORPAY_BASE_URL: 'http://127.0.0.1:4010' })).toBe('');
  });

  test('when NODE_ENV=production, then the defaults are refused even with a sandbox URL', () => {
    expect(refusal({ RAZORPAY_BASE_URL: 'http://127.0.0.1:4010', NODE_ENV: 'production' })).toMatch(/RAZORPAY_KEY_SECRET/);
  });

  test('when real secrets are set, then real Razorpay is allowed; a placeholder or a sample previous secret is not', () => {
    expect(refusal(REAL)).toBe('');
    expect(refusal({ ...REAL, RAZORPAY_KEY_SECRET: 'your_secret_here' })).toContain('RAZORPAY_KEY_SECRET');
    expect(refusal({ ...REAL, RAZORPAY_WEBHOOK_PREVIOUS_SECRETS: 'whk-old-51b84d06a,sandbox_webhook_secret' })).toContain('RAZORPAY_WEBHOOK_PREVIOUS_SECRETS');
    expect(refusal({ ...REAL, TEMPORAL_API_KEY: 'changeme' })).toContain('TEMPORAL_API_KEY');
  });

  test('when a secret is refused, then its value is never echoed', () => {
    const message = refusal({ ...REAL, RAZORPAY_KEY_SECRET: 'sandbox_secret_change_me' });
    expect(message).not.toContain('sandbox_secret_change_me');
  });

  test('when the check is not asked for (CLIs, the sandbox itself), then the defaults load', () => {
    expect(loadConfig({}).RAZORPAY_WEBHOOK_SECRET).toBe('sandbox_webhook_secret');
  });

  test('when previous webhook secrets are listed, then they are parsed as a list', () => {
    expect(loadConfig({ RAZORPAY_WEBHOOK_PREVIOUS_SECRETS: ' old-secret-1 , old-secret-2 ' }).RAZORPAY_WEBHOOK_PREVIOUS_SECRETS).toEqual(['old-secret-1', 'old-secret-2']);
  });
});

describe('config: timeouts that protect a transfer in flight', () => {
  test('when the gateway timeout is not below the transfer timeout, or the stale-claim horizon not above it, then start-up refuses and says which', () => {
    expect(() => loadConfig({ GATEWAY_TIMEOUT_MS: '30000', PAYOUT_TRANSFER_TIMEOUT_MS: '30000' })).toThrow(/PAYOUT_TRANSFER_TIMEOUT_MS \(30000\) must exceed GATEWAY_TIMEOUT_MS \(30000\)/);
    expect(() => loadConfig({ PAYOUT_STALE_CLAIM_MS: '20000' })).toThrow(/PAYOUT_STALE_CLAIM_MS \(20000\) must exceed PAYOUT_TRANSFER_TIMEOUT_MS \(30000\)/);
    expect(loadConfig({}).PAYOUT_STALE_CLAIM_MS).toBeGreaterThan(loadConfig({}).PAYOUT_TRANSFER_TIMEOUT_MS);
  });
});

const b64 = (bytes: number) => randomBytes(bytes).toString('base64');
const A = b64(32);
const B = b64(32);
const DEV = Buffer.from('payouts-dev-bank-key-NOT-SECRET!').toString('base64');
// Everything production needs besides the bank keys, so only their problems are left.
const PRODUCTION = { NODE_ENV: 'production', ...REAL };

describe('config: bank details keys', () => {
  test('when nothing is set, then the embedded development key is the one key and active', () => {
    const config = loadConfig({});
    expect(config.BANK_DETAILS_KEYS.map((k) => [k.id, k.key.length])).toEqual([['dev-not-secret', 32]]);
    expect(config.BANK_DETAILS_ACTIVE_KEY_ID).toBe('dev-not-secret');
  });

  test('when keys are listed as id:base64, then each is decoded and the active one named', () => {
    const config = loadConfig({ BANK_DETAILS_KEYS: ` k2026a:${A} , k2026b:${B} `, BANK_DETAILS_ACTIVE_KEY_ID: 'k2026b' });
    expect(config.BANK_DETAILS_KEYS.map((k) => [k.id, k.key.toString('base64')])).toEqual([['k2026a', A], ['k2026b', B]]);
    expect(config.BANK_DETAILS_ACTIVE_KEY_ID).toBe('k2026b');
  });

  test.each([
    ['a key of 16 bytes', `k1:${b64(16)}`, /key k1 must be exactly 32 bytes/],
    ['a key of 33 bytes', `k1:${b64(33)}`, /key k1 must be exactly 32 bytes/],
    ['a key that is not base64', `k1:${'!'.repeat(44)}`, /key k1 must be exactly 32 bytes in base64/],
    ['an entry without an id', A, /id:base64/],
    ['an id twice', `k1:${A},k1:${B}`, /each key id appears once/],
  ])('when BANK_DETAILS_KEYS holds %s, then start-up refuses naming the key, never its material', (_what, value, message) => {
    const problems = refusal({ BANK_DETAILS_KEYS: value, BANK_DETAILS_ACTIVE_KEY_ID: 'k1' }, {});
    expect(problems).toMatch(/BANK_DETAILS_KEYS/);
    expect(problems).toMatch(message);
    for (const secret of value.split(',').map((e) => e.split(':').at(-1)!)) expect(problems).not.toContain(secret);
  });

  test('when the active key id is not among the keys, then start-up refuses in any environment', () => {
    expect(refusal({ BANK_DETAILS_KEYS: `k2026a:${A}` }, {})).toContain('BANK_DETAILS_ACTIVE_KEY_ID (dev-not-secret) is not one of the ids in BANK_DETAILS_KEYS (k2026a)');
    expect(refusal({ BANK_DETAILS_KEYS: `k2026a:${A}`, BANK_DETAILS_ACTIVE_KEY_ID: 'k2026b' }, {})).toContain('BANK_DETAILS_ACTIVE_KEY_ID (k2026b)');
  });

  test('when production starts with no bank keys, then the one start-up error names both keys beside the other problems', () => {
    const message = refusal({ ...PRODUCTION, API_PORT: 'eighty' });
    for (const problem of ['API_PORT', 'BANK_DETAILS_KEYS: not set', 'BANK_DETAILS_ACTIVE_KEY_ID: not set']) expect(message).toContain(problem);
    expect(refusal({ ...PRODUCTION, RAZORPAY_KEY_SECRET: 'sandbox_secret_change_me' })).toMatch(/RAZORPAY_KEY_SECRET[\s\S]*BANK_DETAILS_KEYS: not set/);
  });

  test('when production is given the development key, by its id or its material, then start-up refuses it', () => {
    const devById = refusal({ ...PRODUCTION, BANK_DETAILS_KEYS: `k2026a:${A},dev-not-secret:${B}`, BANK_DETAILS_ACTIVE_KEY_ID: 'k2026a' });
    expect(devById).toContain('BANK_DETAILS_KEYS: holds the embedded development key');
    const devByMaterial = refusal({ ...PRODUCTION, BANK_DETAILS_KEYS: `k2026a:${DEV}`, BANK_DETAILS_ACTIVE_KEY_ID: 'k2026a' }, { refuseDevBankKeys: true });
    expect(devByMaterial).toContain('BANK_DETAILS_KEYS: holds the embedded development key');
    expect(devByMaterial).not.toContain(DEV);
  });

  const bytes = (fill: (i: number) => number) => Buffer.from(Array.from({ length: 32 }, (_, i) => fill(i) & 0xff)).toString('base64');
  test.each([
    ['32 zero bytes', bytes(() => 0)],
    ['one byte repeated', bytes(() => 0x41)],
    ['an 8-byte pattern repeated', bytes((i) => [0xde, 0xad, 0xbe, 0xef, 0x01, 0x02, 0x03, 0x04][i % 8]!)],
    ['a counting sequence', bytes((i) => i)],
    ['a sequence stepping by 7', bytes((i) => 0x30 + 7 * i)],
  ])('when production is given a bank key of %s, then start-up refuses it by id, never echoing it', (_what, weak) => {
    const message = refusal({ ...PRODUCTION, BANK_DETAILS_KEYS: `k2026a:${A},k2026weak:${weak}`, BANK_DETAILS_ACTIVE_KEY_ID: 'k2026a' });
    expect(message).toContain('BANK_DETAILS_KEYS: key k2026weak has too little randomness');
    expect(message).not.toContain('k2026a has');
    expect(message).not.toContain(weak);
    expect(refusal({ ...PRODUCTION, BANK_DETAILS_KEYS: `k2026weak:${weak}`, BANK_DETAILS_ACTIVE_KEY_ID: 'k2026weak' }, { refuseDevBankKeys: true })).toContain('key k2026weak has too little randomness');
    // Outside production (tests, npm run dev) any well-formed key is accepted, as before.
    expect(refusal({ RAZORPAY_BASE_URL: 'http://127.0.0.1:4010', BANK_DETAILS_KEYS: `k2026weak:${weak}`, BANK_DETAILS_ACTIVE_KEY_ID: 'k2026weak' })).toBe('');
  });

  test('when production is given random bank keys, then none is refused for its randomness (10,000 draws)', () => {
    for (let n = 0; n < 10_000; n++) expect(bankKeyWeakness(randomBytes(32))).toBeNull();
  });

  test('when production has its own keys, then it starts; outside production the development key is fine', () => {
    expect(refusal({ ...PRODUCTION, BANK_DETAILS_KEYS: `k2026a:${A}`, BANK_DETAILS_ACTIVE_KEY_ID: 'k2026a' })).toBe('');
    expect(refusal({ RAZORPAY_BASE_URL: 'http://127.0.0.1:4010' })).toBe('');
    expect(refusal({}, { refuseDevBankKeys: true })).toBe('');
  });

  test('when a tool that never handles bank details loads production config, then the bank keys are not asked for', () => {
    expect(refusal({ NODE_ENV: 'production' }, {})).toBe('');
  });
});
