import { ConfigError, loadConfig } from '../../src/config/config';

const REAL = {
  RAZORPAY_KEY_ID: 'rzp_live_Q8m2xKp0aZ19Lt',
  RAZORPAY_KEY_SECRET: 'Xq3v9LmP2sT8wK1nB7cR4yHd',
  RAZORPAY_WEBHOOK_SECRET: 'whk-7f3a9c2e51b84d06',
};

function refusal(env: Record<string, string>): string {
  try {
    loadConfig(env, { refuseSampleSecrets: true });
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
