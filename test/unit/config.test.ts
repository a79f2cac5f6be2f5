import { ConfigError, loadConfig } from '../../src/config/config';

describe('configuration', () => {
  test('when nothing is set, then local defaults apply', () => {
    const config = loadConfig({});
    expect(config.TEMPORAL_ADDRESS).toBe('127.0.0.1:7233');
    expect(config.DATABASE_URL).toBeUndefined();
    expect(config.API_PORT).toBe(3000);
  });

  test('when several values are bad, then one error lists every problem', () => {
    let error: unknown;
    try {
      loadConfig({ API_PORT: 'eighty', DATABASE_URL: 'not a url', RAZORPAY_PLATFORM_ACCOUNT_ID: 'acc_short' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toContain('API_PORT');
    expect(message).toContain('DATABASE_URL');
    expect(message).toContain('RAZORPAY_PLATFORM_ACCOUNT_ID');
  });

  test('when a value is an empty string, then it counts as unset', () => {
    expect(loadConfig({ DATABASE_URL: '' }).DATABASE_URL).toBeUndefined();
  });
});
