/** `npm run api`: the HTTP API alone (DATABASE_URL and a reachable Temporal required). */
import { loadConfig } from '../config/config';
import { createPool } from '../db/pool';
import { logger } from '../logger';
import { connectClient } from '../temporal/connection';
import { buildApi } from './server';
import { productionDeps } from '../wiring';

async function main(): Promise<void> {
  const config = loadConfig();
  if (!config.DATABASE_URL) throw new Error('DATABASE_URL is required to run the API alone (npm run dev starts everything)');
  const db = createPool(config.DATABASE_URL);
  const client = await connectClient(config);
  const app = await buildApi(productionDeps(config, db, client).api);
  await app.listen({ port: config.API_PORT, host: '0.0.0.0' });
  logger.info({ port: config.API_PORT }, 'API listening');
  const stop = async () => { await app.close(); await db.end(); await client.connection.close(); process.exit(0); };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

main().catch((err) => {
  logger.fatal({ err }, 'API failed to start');
  process.exit(1);
});
