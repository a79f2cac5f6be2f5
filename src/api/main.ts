/** `npm run api`: the HTTP API alone (DATABASE_URL and a reachable Temporal required; the first
 * connection to each is retried until STARTUP_CONNECT_DEADLINE_MS). */
import { loadConfig, mustUseRealSecrets } from '../config/config';
import { createPool, poolOptionsFrom } from '../db/pool';
import { logger } from '../logger';
import { startTracing } from '../observability/tracing';
import { liveDevStackKeys } from '../auth/apiKeys';
import { connectClientWithRetry, waitForDatabase } from '../startup/retry';
import { buildApi } from './server';
import { warmUpApi } from './warmUp';
import { productionDeps } from '../wiring';

async function main(): Promise<void> {
  const config = loadConfig(process.env, { refuseSampleSecrets: true });
  if (!config.DATABASE_URL) throw new Error('DATABASE_URL is required to run the API alone (npm run dev starts everything)');
  const tracing = startTracing('payouts-api', config.TRACES_OTLP_URL);
  const poolOptions = poolOptionsFrom(config);
  const db = createPool(config.DATABASE_URL, poolOptions);
  await waitForDatabase(db, config, logger);
  if (mustUseRealSecrets(config)) {
    // The dev stack's keys are written to .data/ in clear: never valid against real money.
    const devKeys = await liveDevStackKeys(db).catch(() => []);
    if (devKeys.length > 0) throw new Error(`refusing to serve real Razorpay with keys minted by npm run dev: revoke ${devKeys.join(', ')} (npm run keys -- revoke NAME)`);
  }
  const client = await connectClientWithRetry(config, logger);
  const app = await buildApi(productionDeps(config, db, client).api);
  await warmUpApi(db, poolOptions.min ?? 0);
  await app.listen({ port: config.API_PORT, host: config.HTTP_HOST });
  logger.info({ port: config.API_PORT, adminPort: config.ADMIN_PORT ?? null }, 'API listening');
  const stop = async () => { await app.close(); await tracing.shutdown(); await db.end(); await client.connection.close(); process.exit(0); };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

main().catch((err) => {
  logger.fatal({ err }, 'API failed to start');
  process.exit(1);
});
