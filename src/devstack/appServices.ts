/** The app's own long-running processes in the topology, one kind each: the Razorpay sandbox, an
 * API, a worker. Each is a TopologyService (start, ready, stop, kill, restart) over its program
 * run as `node --import tsx <script>`, configured only by its environment; its readiness is what
 * production checks (an API's and a worker's GET /ready, the sandbox's listening line). */
import os from 'node:os';
import { processService, type TopologyService } from './service';
import { nodeProcessSpec, waitForHttp200, type ManagedProcess } from './topologyProcesses';
import type { TopologyApi, TopologyWorker } from './topologyTypes';

export interface AppServiceContext {
  projectRoot: string;
  /** Logs go to `<logDir>/<name>.log`. */
  logDir: string;
  readyTimeoutMs: number;
  graceMs: number;
  /** Aborts a readiness wait (the topology's start-up was aborted). */
  signal?: AbortSignal;
  onSpawn?: (proc: ManagedProcess) => void;
  closed?: () => boolean;
  log?: (line: string) => void;
}

function nodeService(ctx: AppServiceContext, name: string, script: string, env: NodeJS.ProcessEnv, ready: (proc: ManagedProcess) => Promise<unknown>): TopologyService {
  return processService({
    spec: nodeProcessSpec({ name, script, env, cwd: ctx.projectRoot, logDir: ctx.logDir }),
    ready, graceMs: ctx.graceMs, onSpawn: ctx.onSpawn, closed: ctx.closed, log: ctx.log,
  });
}

const readyAt = (ctx: AppServiceContext, url: string) => (proc: ManagedProcess) =>
  waitForHttp200(url, { process: proc, timeoutMs: ctx.readyTimeoutMs, signal: ctx.signal });

/** The sandbox is ready once it prints the address it listens at, and that is `url`. */
export function sandboxService(ctx: AppServiceContext, url: string, env: NodeJS.ProcessEnv): TopologyService {
  return nodeService(ctx, 'sandbox', 'src/sandbox/main.ts', env, async (proc) => {
    const [, listening] = await proc.waitForOutput(/Razorpay sandbox listening at (\S+)/, ctx.readyTimeoutMs);
    if (listening !== url) throw proc.failure(`listens at ${listening}, not at ${url} as the APIs were told`);
  });
}

/** `env` carries API_PORT; `url` is that port's address. */
export function apiService(ctx: AppServiceContext, name: string, url: string, env: NodeJS.ProcessEnv): TopologyApi {
  const service = nodeService(ctx, name, 'src/api/main.ts', env, readyAt(ctx, `${url}/ready`));
  return Object.defineProperty(service, 'url', { value: url, enumerable: true }) as TopologyApi;
}

/** `env` carries WORKER_HEALTH_PORT; `healthUrl` is that port's address (the same across restarts). */
export function workerService(ctx: AppServiceContext, name: string, healthUrl: string, env: NodeJS.ProcessEnv): TopologyWorker {
  const service = nodeService(ctx, name, 'src/worker.ts', env, readyAt(ctx, `${healthUrl}/ready`));
  return Object.defineProperties(service, {
    healthUrl: { value: healthUrl, enumerable: true },
    // What the Temporal SDK names a worker by default.
    identity: { get: () => `${service.pid}@${os.hostname()}`, enumerable: true },
  }) as TopologyWorker;
}
