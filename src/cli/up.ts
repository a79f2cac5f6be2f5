/** `npm run dev`: the whole system on embedded defaults, in one command. Starts the Temporal dev
 * server (Web UI on a fixed port, state in .data/), PostgreSQL (embedded unless DATABASE_URL), the
 * Razorpay sandbox (unless real Razorpay is configured), migrates, runs the worker (which ensures
 * the Schedules, as `npm run worker` does) and the API in this process, mints a dev API key per role
 * (.data/dev-credentials.json), prints the URLs and runs the demo (`-- --no-demo` skips it).
 * Ctrl-C stops everything it started; a second start reuses the state in .data/. */
import fs from 'node:fs/promises';
import path from 'node:path';
import { loadConfig, type Config } from '../config/config';
import { ensureDevCredentials } from './devCredentials';
import { consoleDevLines } from '../console/devSignIn';
import { startPacingFrom } from '../outbox/drainer';
import { startWorkerPollers } from '../startup/pollers';
import { stackFilePath, writeStackFile } from './payouts/stack';
import { migrate } from '../db/migrate';
import { createPool } from '../db/pool';
import { rebuildLedgerUntilDone } from '../ledger/upgrade';
import { nodeVersionProblem } from '../startup/nodeVersion';
import { ensureDatabase, startServices } from '../devstack/services';
import { connectClient, connectWorker } from '../temporal/connection';
import { buildApi } from '../api/server';
import { sandboxOptionsFrom, startSandbox, type RunningSandbox } from '../sandbox';
import { bootProductionWorker } from '../worker';
import { buildJaegerInBackground, installedJaeger, startJaeger } from '../devstack/jaeger';
import { startTracing } from '../observability/tracing';
import { productionDeps } from '../wiring';
import { runDemo } from './demo';
import { logger } from '../logger';

const projectRoot = path.resolve(__dirname, '../..');

async function main(): Promise<void> {
  const unsupported = nodeVersionProblem();
  if (unsupported) {
    process.stderr.write(`${unsupported}\n`);
    process.exit(1);
  }
  // With the sandbox on, Razorpay is the sandbox this command starts: say so before validating, so
  // that only a stack pointed at real Razorpay has its sample secrets refused, and the sandbox (in
  // this process) gets only sandbox values and never production.
  const sandboxOn = process.env.DEV_SANDBOX !== 'off' && !process.env.RAZORPAY_BASE_URL;
  const sandboxPort = process.env.SANDBOX_PORT || '4010';
  const config = loadConfig({ ...process.env, ...(sandboxOn ? { RAZORPAY_BASE_URL: `http://127.0.0.1:${sandboxPort}` } : {}) }, { refuseSampleSecrets: true, asSandbox: sandboxOn });
  const withDemo = !process.argv.includes('--no-demo');
  logger.info('starting Temporal dev server and PostgreSQL (the first run builds the Temporal CLI: a few minutes)');
  const services = await startServices({
    projectRoot,
    stateDir: path.join(projectRoot, '.data'),
    persistent: true,
    temporalPort: config.TEMPORAL_PORT,
    temporalUiPort: config.TEMPORAL_UI_PORT,
    postgresPort: Number(process.env.EMBEDDED_POSTGRES_PORT ?? 5433),
    externalDatabaseUrl: config.DATABASE_URL,
  });
  const stops: Array<() => Promise<unknown>> = [() => services.stop()];
  let stopping = false;
  const stopAll = async (code: number) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write('\nStopping: the API and the worker first, PostgreSQL and Temporal last…\n');
    for (const stop of stops.reverse()) await stop().catch((err) => logger.error({ err }, 'stop failed'));
    process.stdout.write('Stopped: nothing this command started is running.\n');
    process.exit(code);
  };
  // `on`, not `once`: a terminal's Ctrl-C reaches this process twice (directly and relayed by tsx),
  // and a second signal with no listener would kill it mid-stop and leave the servers running.
  process.on('SIGINT', () => void stopAll(0));
  process.on('SIGTERM', () => void stopAll(0));
  try {
    const databaseUrl = config.DATABASE_URL ?? (await ensureDatabase(services.adminDatabaseUrl, 'payouts'));
    const db = createPool(databaseUrl);
    stops.push(() => db.end());
    const applied = await migrate(db);
    logger.info({ applied: applied.length }, 'database migrated');
    await rebuildLedgerUntilDone(db);

    const apiUrl = `http://127.0.0.1:${config.API_PORT}`;
    let sandbox: RunningSandbox | undefined;
    if (sandboxOn) {
      sandbox = await startSandbox({
        ...sandboxOptionsFrom(config),
        webhookUrl: `${apiUrl}/webhooks/razorpay`,
        // A visible pending → processed step in the demo, unless configured otherwise (0 means 0).
        transferProcessingDelayMs: process.env.SANDBOX_TRANSFER_DELAY_MS ? config.SANDBOX_TRANSFER_DELAY_MS : 2_000,
        // A second start is the same world: the demo's linked accounts, balances and transfers remain.
        stateFile: path.join(projectRoot, '.data', 'sandbox-state.json'),
      });
      const running = sandbox;
      stops.push(() => running.close());
    }
    // Traces: Jaeger when scripts/install-jaeger.sh has built it (CI does; a first build takes minutes).
    const jaegerBinary = process.env.DEV_TRACES === 'off' || config.TRACES_OTLP_URL ? null : installedJaeger();
    const jaeger = jaegerBinary ? await startJaeger({ binary: jaegerBinary, projectRoot, log: (line) => logger.warn(line) }) : null;
    if (jaeger) stops.push(() => jaeger.stop());
    else if (!config.TRACES_OTLP_URL && process.env.DEV_TRACES !== 'off') {
      // Its first build takes minutes: it runs beside this stack, and the next start uses it.
      const log = path.join(projectRoot, '.data', 'jaeger-build.log');
      if (buildJaegerInBackground(projectRoot, log)) logger.info(`traces: Jaeger is being built in the background (log: ${path.relative(process.cwd(), log)}; several minutes, once); the next npm run dev starts it`);
      else logger.info('traces: Jaeger is not built here and could not be built (bash scripts/install-jaeger.sh needs Go); no trace is kept');
    }
    const runtimeConfig: Config = {
      ...config,
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: services.temporalAddress,
      RAZORPAY_BASE_URL: sandbox?.baseUrl ?? config.RAZORPAY_BASE_URL,
      TRACES_OTLP_URL: jaeger?.otlpUrl ?? config.TRACES_OTLP_URL,
      TRACES_QUERY_URL: jaeger?.queryUrl ?? config.TRACES_QUERY_URL,
    };
    const tracing = startTracing('payouts', runtimeConfig.TRACES_OTLP_URL);
    stops.push(() => tracing.shutdown());
    const client = await connectClient(runtimeConfig);
    stops.push(() => client.connection.close());
    const deps = productionDeps(runtimeConfig, db, client);

    const workerConnection = await connectWorker(runtimeConfig);
    // The same boot as `npm run worker`: the Schedules first, then the worker.
    const worker = await bootProductionWorker({ config: runtimeConfig, db, client, connection: workerConnection });
    const workerRun = worker.run();
    const drainer = startWorkerPollers({ db, gateway: deps.activities.gateway, payoutStarter: deps.activities.payoutStarter!, attemptCap: config.PAYOUT_ATTEMPT_CAP, pacing: startPacingFrom(config) });
    stops.push(async () => {
      await drainer.stop();
      // The SDK also stops the worker on SIGINT by itself; only ask when it is still running.
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await workerRun;
      await workerConnection.close();
    });

    const api = await buildApi(deps.api);
    await api.listen({ port: config.API_PORT, host: '127.0.0.1' });
    stops.push(() => api.close());

    const credentials = await ensureDevCredentials(db, path.join(projectRoot, '.data', 'dev-credentials.json'));
    // The `payouts` CLI finds this stack (its URLs and dev keys) by itself.
    await writeStackFile(projectRoot, { apiUrl, temporalUiUrl: services.temporalUiUrl ?? config.TEMPORAL_UI_URL, keys: credentials.keys });
    stops.push(() => fs.rm(stackFilePath(projectRoot), { force: true }));

    process.stdout.write([
      '',
      'Payouts is running:',
      `  Temporal Web UI   ${services.temporalUiUrl}`,
      `  Temporal gRPC     ${services.temporalAddress}`,
      `  API               ${apiUrl}  (GET /health)`,
      `  Razorpay          ${sandbox ? `sandbox at ${sandbox.baseUrl} (webhooks → ${apiUrl}/webhooks/razorpay)` : runtimeConfig.RAZORPAY_BASE_URL ?? 'https://api.razorpay.com'}`,
      `  PostgreSQL        ${databaseUrl.replace(/:[^:@/]+@/, ':***@')}`,
      `  Traces (Jaeger)   ${jaeger ? `${jaeger.queryUrl}/api/traces?service=payouts (each payout's console page draws its trace)` : 'off (bash scripts/install-jaeger.sh, then restart)'}`,
      ...consoleDevLines({ apiUrl }),
      `  API keys (dev)    in ${path.relative(process.cwd(), credentials.file)}; the payouts CLI finds them (npm run payouts -- queue)`,
      ...Object.entries(credentials.keys).map(([role, key]) => `    ${role.padEnd(9)} ${key}`),
      'Press Ctrl-C to stop everything.',
      '',
    ].join('\n'));
    if (withDemo && sandbox) {
      const rows = await runDemo({
        apiUrl, keys: credentials.keys, sandboxControl: sandbox.control, client,
        temporalUiUrl: services.temporalUiUrl, log: (line) => process.stdout.write(`${line}\n`),
      });
      const agrees = rows.every((r) => r.agrees);
      process.stdout.write(`\nDemo done: ${agrees ? 'every vendor total agrees with the sandbox' : 'A VENDOR TOTAL DISAGREES WITH THE SANDBOX'}. The stack keeps running; Ctrl-C stops it.\n`);
    }
  } catch (err) {
    logger.fatal({ err }, 'stack failed to start');
    await stopAll(1);
  }
}

main().catch((err) => {
  logger.fatal({ err }, 'stack failed');
  process.exit(1);
});
