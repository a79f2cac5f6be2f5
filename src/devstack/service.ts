/** The one shape every long-running process of the topology has (an API, a worker, the sandbox, a
 * Temporal cluster service), so that the topology, the campaign's faults and the tests compose them
 * the same way: start, ready, stop, kill, restart. A service is a process spec that can be started
 * again (same environment, same ports), and a readiness probe. */
import { startProcess, type ManagedProcess, type ProcessExit, type ProcessSpec } from './topologyProcesses';

export interface TopologyService {
  readonly name: string;
  /** The current process's pid (-1 before the first start). */
  readonly pid: number;
  readonly logFile: string;
  readonly running: boolean;
  /** Spawns the process unless it runs, and resolves once it is ready. */
  start(): Promise<void>;
  /** Resolves once the current process serves (fails at once if it exits first). */
  ready(): Promise<void>;
  /** SIGTERM to its process group, SIGKILL after the grace period; resolves once it has exited. */
  stop(): Promise<ProcessExit | null>;
  /** Signals its process group (default SIGKILL) and resolves once it has exited. */
  kill(signal?: NodeJS.Signals): Promise<ProcessExit | null>;
  /** Stops it if it still runs, starts it again with the same spec, and resolves once ready. */
  restart(): Promise<void>;
}

export interface ServiceOptions {
  spec: ProcessSpec;
  /** Resolves once `proc` serves; rejects when it cannot (e.g. it exited). */
  ready: (proc: ManagedProcess) => Promise<unknown>;
  graceMs: number;
  /** Told of every process spawned (the topology stops each one it knows of). */
  onSpawn?: (proc: ManagedProcess) => void;
  /** Refuses start/restart once this answers true (the topology is stopped). */
  closed?: () => boolean;
  log?: (line: string) => void;
}

export function processService(opts: ServiceOptions): TopologyService {
  let current: ManagedProcess | null = null;
  const spawnNow = (): ManagedProcess => {
    if (opts.closed?.()) throw new Error(`${opts.spec.name}: the topology is stopped`);
    const proc = startProcess(opts.spec);
    current = proc;
    opts.onSpawn?.(proc);
    return proc;
  };
  const service: TopologyService = {
    get name() { return opts.spec.name; },
    get pid() { return current?.pid ?? -1; },
    get logFile() { return current?.logFile ?? `${opts.spec.logDir}/${opts.spec.name}.log`; },
    get running() { return current?.running ?? false; },
    async start() {
      if (!current?.running) spawnNow();
      await service.ready();
    },
    async ready() {
      if (!current) throw new Error(`${opts.spec.name} was never started`);
      await opts.ready(current);
    },
    async stop() {
      return current ? current.stop(opts.graceMs) : null;
    },
    async kill(signal: NodeJS.Signals = 'SIGKILL') {
      if (!current) return null;
      current.signal(signal);
      return current.exited;
    },
    async restart() {
      if (current?.running) await current.stop(opts.graceMs);
      const proc = spawnNow();
      opts.log?.(`${opts.spec.name} restarted as pid ${proc.pid}`);
      await service.ready();
    },
  };
  return service;
}
