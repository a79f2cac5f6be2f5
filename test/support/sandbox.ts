/** The Razorpay sandbox for tests: started in-process on a free port, with a full Config (and the
 * env strings behind it) pointing the gateway adapter at it. Webhook retries are fast so tests do
 * not wait on backoff. Close it in afterAll: `await sandbox.close()`. */
import { loadConfig, type Config } from '../../src/config/config';
import { createGateway } from '../../src/gateway';
import type { Gateway } from '../../src/gateway/types';
import { sandboxOptionsFrom, startSandbox, type RunningSandbox, type SandboxOptions } from '../../src/sandbox';

export interface TestSandbox {
  sandbox: RunningSandbox;
  /** loadConfig() of the test environment with the Razorpay keys and base URL of this sandbox. */
  config: Config;
  /** The same values as env strings, to merge into loadConfig({...process.env, ...env}) or a child process env. */
  env: Record<string, string>;
  /** createGateway(config). */
  gateway: Gateway;
}

export async function startTestSandbox(overrides: Partial<SandboxOptions> = {}): Promise<TestSandbox> {
  const base = loadConfig();
  const sandbox = await startSandbox({ ...sandboxOptionsFrom(base), port: 0, webhookUrl: null, transferProcessingDelayMs: 0, webhookRetryBaseMs: 50, ...overrides });
  const env: Record<string, string> = {
    RAZORPAY_BASE_URL: sandbox.baseUrl,
    RAZORPAY_KEY_ID: overrides.keyId ?? base.RAZORPAY_KEY_ID,
    RAZORPAY_KEY_SECRET: overrides.keySecret ?? base.RAZORPAY_KEY_SECRET,
    RAZORPAY_WEBHOOK_SECRET: overrides.webhookSecret ?? base.RAZORPAY_WEBHOOK_SECRET,
    RAZORPAY_PLATFORM_ACCOUNT_ID: overrides.platformAccountId ?? base.RAZORPAY_PLATFORM_ACCOUNT_ID,
  };
  const config = loadConfig({ ...process.env, ...env });
  return { sandbox, config, env, gateway: createGateway(config) };
}
