/** The production topology on one machine, as separate OS processes configured only through their
 * environment (issue 9, item 8) — none of `npm run dev`'s in-process wiring:
 *
 *   Temporal              the CLI's dev server, a self-hosted cluster (temporal: 'cluster'), or TEMPORAL_ADDRESS
 *   PostgreSQL            embedded, or a fresh database on DATABASE_URL's server
 *   migrations            node --import tsx src/cli/migrate.ts
 *   API keys              node --import tsx src/cli/keys.ts mint --name … --role … --json   (ordering, ops, admin, finance)
 *   Razorpay sandbox      node --import tsx src/sandbox/main.ts     → webhooks to the load balancer
 *   load balancer         a round-robin reverse proxy (node:http, in this process) in front of the APIs
 *   api-1, api-2          node --import tsx src/api/main.ts         (/health, /ready)
 *   worker-1, worker-2    node --import tsx src/worker.ts           (WORKER_SCHEDULES=on; /health, /ready on WORKER_HEALTH_PORT)
 *
 * Each process kind has its own module (appServices.ts, temporalCluster.ts, temporal.ts,
 * postgres.ts, loadBalancer.ts); this one composes them. Logs of every process go to
 * `<stateDir>/<name>.log` (default stateDir: .data/topology/<timestamp>). `startTopology()`
 * resolves once every API and worker answers 200 on /ready; `stop()` stops every process it
 * started (SIGTERM to each process group, SIGKILL after a grace period) and waits for their exits.
 * `npm run topology` (topologyMain.ts) starts it, places one order end to end and stops
 * everything on Ctrl-C. */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { apiService, sandboxService, workerService, type AppServiceContext } from './appServices';
import { startRoundRobinProxy } from './loadBalancer';
import { freePort } from './ports';
import { ensurePrivateDir, PRIVATE_FILE_MODE } from './privateFiles';
import { ensureDatabase, startEmbeddedPostgres } from './postgres';
import { startReplicatedPostgres, type FailoverReport } from './postgresReplication';
import { sandboxHttpControl } from './sandboxHttpControl';
import { installTemporalCli, startTemporalDevServer, type RunningTemporal } from './temporal';
import { installTemporalServer, startTemporalCluster, type TemporalCluster } from './temporalCluster';
import { ensureNamespace } from './temporalNamespace';
import { baseEnv, SANDBOX_SECRETS, timestamp, TOPOLOGY_ROLES, TOPOLOGY_TUNING, withoutOwnedKeys, type TopologyRole } from './topologyEnv';
import { runNodeProcess, type ManagedProcess } from './topologyProcesses';
import { rollWorkers, type WorkerBuild } from './rollingDeploy';
import { setCurrentVersion } from '../temporal/workerDeployment';
import { Client, Connection } from '@temporalio/client';
import type { Topology, TopologyOptions } from './topologyTypes';

const PROJECT_ROOT = path.resolve(__dirname, '../..');

/** The key a `keys mint --json` line carries, or null for any other line (a log line, say). */
function mintedKeyOf(line: string): string | null {
  if (!line.trim().startsWith('{')) return null;
  try {
    const parsed = JSON.parse(line) as { key?: unknown };
    return typeof parsed.key === 'string' ? parsed.key : null;
  } catch {
    return null;
  }
}

export async function startTopology(opts: TopologyOptions = {}): Promise<Topology> {
  const log = opts.log ?? (() => undefined);
  const readyTimeoutMs = opts.readyTimeoutMs ?? 180_000;
  const graceMs = opts.stopGraceMs ?? 10_000;
  const stamp = timestamp();
  const suffix = randomBytes(3).toString('hex');
  const stateDir = path.resolve(opts.stateDir ?? path.join(PROJECT_ROOT, '.data', 'topology', `${stamp}-${suffix}`));
  ensurePrivateDir(stateDir);
  const taskQueue = opts.taskQueue ?? `topology-${suffix}`;
  const databaseName = opts.databaseName ?? `topology_${stamp.replace('-', '_')}_${suffix}`;
  const extraEnv = withoutOwnedKeys(opts.env);
  const workerExtraEnv = withoutOwnedKeys(opts.workerEnv);

  // What to stop: phase 1 the app processes (workers finish what they hold), phase 2 the sandbox
  // and the load balancer, phase 3 the servers and their log files, newest first, one at a time.
  const stops: Array<{ phase: 1 | 2 | 3; what: string; stop: () => Promise<unknown> }> = [];
  let stopped: Promise<void> | undefined;
  const stopAll = (): Promise<void> => {
    stopped ??= (async () => {
      const report = (what: string) => (err: unknown) => log(`stopping ${what} failed: ${String(err)}`);
      for (const phase of [1, 2] as const) {
        await Promise.all(stops.filter((s) => s.phase === phase).map((s) => s.stop().catch(report(s.what))));
      }
      for (const s of stops.filter((x) => x.phase === 3).reverse()) await s.stop().catch(report(s.what));
      log('topology stopped');
    })();
    return stopped;
  };
  const abortIfAsked = () => {
    if (opts.signal?.aborted) throw new Error('topology start-up aborted');
  };
  const fileLog = (name: string) => {
    const stream = fs.createWriteStream(path.join(stateDir, `${name}.log`), { flags: 'a', mode: PRIVATE_FILE_MODE });
    stops.push({ phase: 3, what: `${name} log`, stop: () => new Promise((r) => stream.end(r)) });
    return (line: string) => { if (!stream.writableEnded) stream.write(`${line}\n`); };
  };

  const temporalKind = opts.temporalAddress ? null : (opts.temporal ?? 'dev');
  // The servers this topology started, as they are now (a restart replaces the process).
  let ownTemporal: { current: RunningTemporal; restart(): Promise<void> } | undefined;
  let ownPostgres: { adminUrl: string; restart(): Promise<void>; failover?: () => Promise<FailoverReport> } | undefined;

  try {
    // 1. Temporal and PostgreSQL: reuse what was given, start the rest (both settle before a
    // failure of one is thrown, so that the other is stopped too).
    log(`state and logs in ${stateDir}`);
    const servers = await Promise.allSettled([
      temporalKind !== 'dev' ? Promise.resolve(null) : (async (): Promise<RunningTemporal> => {
        log('starting a Temporal dev server');
        const cli = await installTemporalCli(PROJECT_ROOT);
        const port = await freePort();
        const uiPort = opts.temporalUi ? await freePort() : null;
        const store = { file: path.join(stateDir, 'temporal.sqlite'), durable: opts.durableServers ?? false };
        const temporalLog = fileLog('temporal');
        const start = () => startTemporalDevServer({ cli, port, uiPort, store, log: temporalLog });
        const server = await start();
        stops.push({ phase: 3, what: 'temporal', stop: () => ownTemporal!.current.stop() });
        ownTemporal = { current: server, restart: async () => {
          await ownTemporal!.current.stop();
          ownTemporal!.current = await start();
        } };
        return server;
      })(),
      opts.databaseUrl ? Promise.resolve(null) : (async () => {
        if (opts.postgres === 'replicated') {
          log('starting an embedded PostgreSQL primary with a synchronous streaming replica behind one address');
          const pair = await startReplicatedPostgres({ stateDir, log: fileLog('postgres') });
          stops.push({ phase: 3, what: 'postgres', stop: () => pair.stop() });
          ownPostgres = { adminUrl: pair.adminUrl, restart: () => pair.crashAndRestartPrimary(), failover: () => pair.failover() };
          return ownPostgres;
        }
        log('starting an embedded PostgreSQL');
        const pgOpts = { dataDir: path.join(stateDir, 'postgres'), port: await freePort(), persistent: false, synchronousCommit: opts.durableServers ?? false, log: fileLog('postgres') };
        let current = await startEmbeddedPostgres(pgOpts);
        stops.push({ phase: 3, what: 'postgres', stop: () => current.stop() });
        ownPostgres = { adminUrl: current.adminUrl, restart: async () => {
          await current.crash();
          current = await startEmbeddedPostgres(pgOpts);
        } };
        return ownPostgres;
      })(),
    ]);
    for (const s of servers) if (s.status === 'rejected') throw s.reason;
    const [temporal, postgres] = servers.map((s) => (s.status === 'fulfilled' ? s.value : null)) as [RunningTemporal | null, { adminUrl: string } | null];
    abortIfAsked();
    const postgresUrl = opts.databaseUrl ?? postgres!.adminUrl;
    // A cluster's persistence is PostgreSQL: the topology's own server, in databases of its own.
    let cluster: TemporalCluster | null = null;
    if (temporalKind === 'cluster') {
      log('starting a self-hosted Temporal cluster (frontend, history, matching, worker) on PostgreSQL');
      cluster = await startTemporalCluster({
        install: await installTemporalServer(PROJECT_ROOT), adminUrl: postgresUrl, databasePrefix: `${databaseName}_temporal`, stateDir,
        ui: opts.temporalUi, readyTimeoutMs, graceMs, log,
        onSpawn: (proc) => { stops.push({ phase: 3, what: proc.name, stop: () => proc.stop(graceMs) }); },
        closed: () => stopped !== undefined,
      });
      abortIfAsked();
    }
    const temporalAddress = opts.temporalAddress ?? cluster?.address ?? temporal!.address;
    const namespace = opts.namespace ?? 'default';
    await ensureNamespace(temporalAddress, namespace);
    const databaseUrl = await ensureDatabase(postgresUrl, databaseName);
    log(`database ${databaseName}; Temporal ${temporalAddress}, namespace ${namespace}, task queue ${taskQueue}`);

    // 2. The load balancer first: the sandbox posts webhooks to it. Every port is chosen up front.
    const apiPorts = [await freePort(), await freePort()];
    const apiUrls = apiPorts.map((p) => `http://127.0.0.1:${p}`);
    const proxy = await startRoundRobinProxy({ upstreams: apiUrls });
    stops.push({ phase: 2, what: 'load balancer', stop: () => proxy.close() });
    const sandboxPort = await freePort();
    const workerPorts = [await freePort(), await freePort()];

    const common: NodeJS.ProcessEnv = {
      ...baseEnv(),
      LOG_LEVEL: 'info',
      ...SANDBOX_SECRETS,
      ...TOPOLOGY_TUNING,
      ...extraEnv,
      NODE_ENV: 'development',
    };
    const spawnSpec = (name: string, script: string, env: NodeJS.ProcessEnv, args?: string[], secretStdout = false) => ({ name, script, args, env, cwd: PROJECT_ROOT, logDir: stateDir, secretStdout });
    const track = (proc: ManagedProcess, phase: 1 | 2 = 1): ManagedProcess => {
      stops.push({ phase, what: proc.name, stop: () => proc.stop(graceMs) });
      return proc;
    };

    // 3. Migrations, as their own process.
    log('migrating (node --import tsx src/cli/migrate.ts)');
    await runNodeProcess(spawnSpec('migrate', 'src/cli/migrate.ts', { ...common, DATABASE_URL: databaseUrl }), undefined, track);
    abortIfAsked();

    // 4. Everything else at once: the keys, the sandbox, two APIs, two workers.
    log('minting API keys, starting the sandbox, 2 APIs and 2 workers');
    const keysMinted = Promise.all(TOPOLOGY_ROLES.map(async (role) => {
      const out = await runNodeProcess(spawnSpec(`keys-${role}`, 'src/cli/keys.ts', { ...common, LOG_LEVEL: 'warn', DATABASE_URL: databaseUrl },
        ['mint', '--name', `topology-${role}`, '--role', role, '--json'], true), undefined, track);
      // The key's own line, not the last JSON line: a log line (a slow start under load warns) may
      // come after it on the same stream.
      const key = out.split('\n').map(mintedKeyOf).find((k) => k !== null);
      if (!key) throw new Error(`keys mint --role ${role} printed no key: ${out}`);
      return [role, key] as const;
    }));
    keysMinted.catch(() => undefined); // awaited below; a failure must not be unhandled meanwhile

    const services: AppServiceContext = {
      projectRoot: PROJECT_ROOT, logDir: stateDir, readyTimeoutMs, graceMs, signal: opts.signal, log,
      onSpawn: (proc) => { track(proc); },
      closed: () => stopped !== undefined,
    };
    const sandboxUrl = `http://127.0.0.1:${sandboxPort}`;
    // The sandbox stops with the load balancer, after the app processes (their last calls reach it).
    const sandboxProcess = sandboxService({ ...services, onSpawn: (proc) => { track(proc, 2); } }, sandboxUrl, {
      ...common,
      SANDBOX_HOST: '127.0.0.1',
      SANDBOX_PORT: String(sandboxPort),
      SANDBOX_WEBHOOK_URL: `${proxy.url}/webhooks/razorpay`,
      SANDBOX_TRANSFER_DELAY_MS: String(opts.sandboxTransferDelayMs ?? 200),
      SANDBOX_WEBHOOK_RETRY_BASE_MS: String(opts.sandboxWebhookRetryBaseMs ?? 200),
    });
    const appEnv: NodeJS.ProcessEnv = {
      ...common,
      HTTP_HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: temporalAddress,
      TEMPORAL_NAMESPACE: namespace,
      TEMPORAL_TASK_QUEUE: taskQueue,
      RAZORPAY_BASE_URL: sandboxUrl,
    };
    const apis = apiPorts.map((port, i) => apiService(services, `api-${i + 1}`, apiUrls[i]!, { ...appEnv, API_PORT: String(port) }));
    // Versioned workers (workerBuild): a deployment of this topology's own, so that topologies on one
    // Temporal server do not share its current version.
    const deploymentName = opts.workerBuild ? `payouts-${suffix}` : null;
    const workerOf = (name: string, port: number, build: WorkerBuild | undefined) => workerService(
      { ...services, projectRoot: build?.projectRoot ?? PROJECT_ROOT }, name, `http://127.0.0.1:${port}`, {
        ...appEnv, ...workerExtraEnv, WORKER_HEALTH_PORT: String(port), WORKER_SCHEDULES: 'on',
        ...(deploymentName && build ? { WORKER_DEPLOYMENT_NAME: deploymentName, WORKER_BUILD_ID: build.buildId } : {}),
      });
    const workers = workerPorts.map((port, i) => workerOf(`worker-${i + 1}`, port, opts.workerBuild));
    // start() spawns at once and then waits: all five boot together.
    await Promise.all([sandboxProcess, ...apis, ...workers].map((service) => service.start()));
    const keys = Object.fromEntries(await keysMinted) as Record<TopologyRole, string>;
    abortIfAsked();
    let deployClient: Client | null = null;
    const makeCurrent = async (buildId: string) => {
      if (!deployClient) {
        const connection = await Connection.connect({ address: temporalAddress });
        stops.push({ phase: 3, what: 'deploy client', stop: () => connection.close() });
        deployClient = new Client({ connection, namespace });
      }
      await setCurrentVersion(deployClient, { namespace, deploymentName: deploymentName!, buildId });
    };
    if (deploymentName) {
      await makeCurrent(opts.workerBuild!.buildId);
      log(`workers are versioned: deployment ${deploymentName}, build ${opts.workerBuild!.buildId} current`);
    }

    log('every API and worker answers 200 on /ready');
    return {
      stateDir, proxyUrl: proxy.url, apiUrls, apis, sandboxUrl, sandbox: sandboxHttpControl(sandboxUrl), sandboxProcess, workers, keys,
      databaseUrl, temporalAddress, temporalUiUrl: cluster?.uiUrl ?? temporal?.uiUrl ?? null, temporalCluster: cluster, namespace, taskQueue,
      proxyServed: () => proxy.served(),
      processes: () => [sandboxProcess, ...apis, ...workers, ...(cluster?.all() ?? [])],
      restartTemporal: async () => {
        if (cluster) {
          for (const service of cluster.all()) await service.restart();
          log('Temporal cluster restarted, one service at a time');
          return;
        }
        if (!ownTemporal) throw new Error('restartTemporal: this topology uses a Temporal server it did not start');
        await ownTemporal.restart();
        log('Temporal dev server restarted');
      },
      workerDeployment: deploymentName,
      deployWorkers: async (build) => {
        if (!deploymentName) throw new Error('deployWorkers: this topology\'s workers are not versioned (workerBuild)');
        return rollWorkers({
          workers, build, makeCurrent, log,
          replacement: async (i) => workerOf(`worker-${i + 1}@${build.buildId}`, await freePort(), build),
        });
      },
      crashAndRestartPostgres: async () => {
        if (!ownPostgres) throw new Error('crashAndRestartPostgres: this topology uses a PostgreSQL server it did not start');
        await ownPostgres.restart();
        log('PostgreSQL restarted after an immediate shutdown');
      },
      failoverPostgres: async () => {
        if (!ownPostgres?.failover) throw new Error('failoverPostgres: this topology has no PostgreSQL replica (postgres: \'replicated\')');
        const report = await ownPostgres.failover();
        log(`PostgreSQL failed over: the replica promoted and the address re-pointed in ${report.unavailableMs} ms; a new replica streams after ${report.withoutStandbyMs} ms more`);
        return report;
      },
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
