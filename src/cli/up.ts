/** `npm run dev`: the whole system on embedded defaults, in one command. Starts the Temporal dev
 * server (Web UI on a fixed port, state in .data/), PostgreSQL (embedded unless DATABASE_URL),
 * migrates, then runs the worker and the API in this process and prints the URLs. Ctrl-C stops
 * everything it started; a second start reuses the state in .data/. */
import path from 'node:path';
import { loadConfig } from '../config/config';
import { migrate } from '../db/migrate';
import { createPool } from '../db/pool';
import { ensureDatabase, startServices } from '../devstack/services';
import { connectClient, connectWorker } from '../temporal/connection';
import { buildApi } from '../api/server';
import { createWorker } from '../worker';
import { logger } from '../logger';

const projectRoot = path.resolve(__dirname, '../..');

async function main(): Promise<void> {
  const config = loadConfig();
  const stateDir = path.join(projectRoot, '.data');
  logger.info('starting Temporal dev server and PostgreSQL (first run installs the Temporal CLI: a few minutes)');
  const services = await startServices({
    projectRoot,
    stateDir,
    persistent: true,
    temporalPort: config.TEMPORAL_PORT,
    temporalUiPort: config.TEMPORAL_UI_PORT,
    postgresPort: Number(process.env.EMBEDDED_POSTGRES_PORT ?? 5433),
    externalDatabaseUrl: config.DATABASE_URL,
  });
  const stops: Array<() => Promise<unknown>> = [() => services.stop()];
  const stopAll = async (code: number) => {
    for (const stop of stops.reverse()) await stop().catch((err) => logger.error({ err }, 'stop failed'));
    process.exit(code);
  };
  process.once('SIGINT', () => void stopAll(0));
  process.once('SIGTERM', () => void stopAll(0));
  try {
    const databaseUrl = config.DATABASE_URL ?? (await ensureDatabase(services.adminDatabaseUrl, 'payouts'));
    const db = createPool(databaseUrl);
    stops.push(() => db.end());
    const applied = await migrate(db);
    logger.info({ applied: applied.length }, 'database migrated');

    const runtimeConfig = { ...config, DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: services.temporalAddress };
    const client = await connectClient(runtimeConfig);
    stops.push(() => client.connection.close());
    const workerConnection = await connectWorker(runtimeConfig);
    const worker = await createWorker({
      connection: workerConnection,
      namespace: config.TEMPORAL_NAMESPACE,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      deps: { db, config: runtimeConfig, gateway: undefined as never },
    });
    const workerRun = worker.run();
    stops.push(async () => {
      // The SDK also stops the worker on SIGINT by itself; only ask when it is still running.
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await workerRun;
      await workerConnection.close();
    });

    const api = await buildApi({ config: runtimeConfig, db });
    await api.listen({ port: config.API_PORT, host: '127.0.0.1' });
    stops.push(() => api.close());

    const lines = [
      '',
      'Payouts is running:',
      `  Temporal Web UI   ${services.temporalUiUrl}`,
      `  Temporal gRPC     ${services.temporalAddress}`,
      `  API               http://127.0.0.1:${config.API_PORT}  (GET /health)`,
      `  PostgreSQL        ${databaseUrl.replace(/:[^:@/]+@/, ':***@')}`,
      'Press Ctrl-C to stop everything.',
      '',
    ];
    process.stdout.write(lines.join('\n'));
  } catch (err) {
    logger.fatal({ err }, 'stack failed to start');
    await stopAll(1);
  }
}

main().catch((err) => {
  logger.fatal({ err }, 'stack failed');
  process.exit(1);
});
