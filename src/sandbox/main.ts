/** `npm run sandbox`: the Razorpay sandbox alone, configured from the environment (loadConfig). It
 * refuses production and any key or webhook secret that is not a sandbox value (sandboxOnlyProblems). */
import { loadConfig } from '../config/config';
import { logger } from '../logger';
import { sandboxOptionsFrom, startSandbox } from './index';

async function main(): Promise<void> {
  const config = loadConfig(process.env, { asSandbox: true });
  const sandbox = await startSandbox(sandboxOptionsFrom(config));
  // The one line scripts look for: RAZORPAY_BASE_URL for the platform.
  process.stdout.write(`Razorpay sandbox listening at ${sandbox.baseUrl} (RAZORPAY_BASE_URL=${sandbox.baseUrl})\n`);
  logger.info({ baseUrl: sandbox.baseUrl, webhookUrl: config.SANDBOX_WEBHOOK_URL ?? null }, 'razorpay sandbox started');
  const stop = (): void => {
    void sandbox.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err) => {
  logger.fatal({ err }, 'sandbox failed');
  process.exit(1);
});
