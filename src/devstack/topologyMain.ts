/** `npm run topology [-- --temporal cluster] [--postgres replicated] [--no-smoke]`: starts the production topology
 * (src/devstack/topology.ts), prints its URLs, keys and pids, places one order end to end and
 * stops every process on Ctrl-C or SIGTERM. TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE and DATABASE_URL
 * point it at servers of yours; the rest of this shell's configuration reaches every process. */
import { configSchema } from '../config/config';
import { startTopology } from './topology';
import { TOPOLOGY_ROLES, withoutOwnedKeys } from './topologyEnv';
import { smokeOrder } from './topologyScenario';
import type { TemporalKind, Topology } from './topologyTypes';

/** A database URL fit for a terminal: the password masked, unless it is the embedded server's well-known one. */
function printableUrl(url: string): string {
  const u = new URL(url);
  if (u.password && u.password !== 'postgres') u.password = '****';
  return u.toString();
}

export function describeTopology(t: Topology): string {
  const lines = [
    `production topology up — logs in ${t.stateDir}`,
    `  load balancer   ${t.proxyUrl}  (round robin over ${t.apiUrls.join(', ')}; webhooks: ${t.proxyUrl}/webhooks/razorpay)`,
    ...t.apis.map((a) => `  ${a.name.padEnd(14)}  ${a.url}  pid ${a.pid}  (/health, /ready)`),
    ...t.workers.map((w) => `  ${w.name.padEnd(14)}  pid ${w.pid}  health ${w.healthUrl}/health, ${w.healthUrl}/ready`),
    `  sandbox         ${t.sandboxUrl}  pid ${t.sandboxProcess.pid}  (control: ${t.sandboxUrl}/_sandbox/…)`,
    `  Temporal        ${t.temporalAddress}  namespace ${t.namespace}, task queue ${t.taskQueue}${t.temporalUiUrl ? `, Web UI ${t.temporalUiUrl}` : ''}`,
    ...(t.temporalCluster?.all() ?? []).map((s) => `  ${s.name.padEnd(14)}  pid ${s.pid}  log ${s.logFile}`),
    `  PostgreSQL      ${printableUrl(t.databaseUrl)}`,
    '  API keys (Authorization: Bearer …):',
    ...TOPOLOGY_ROLES.map((r) => `    ${r.padEnd(9)} ${t.keys[r]}`),
  ];
  return lines.join('\n');
}

/** The configuration of this shell that the CLI passes on (all but what the topology owns). */
function forwardedConfig(env: NodeJS.ProcessEnv): Record<string, string> {
  const keys = new Set(Object.keys(configSchema.shape));
  return withoutOwnedKeys(Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => keys.has(e[0]) && typeof e[1] === 'string' && e[1] !== '')));
}

/** `--<flag> <value>` or `--<flag>=<value>`, one of `values` (the first is the default). */
function choice<T extends string>(argv: string[], flag: string, values: readonly T[]): T {
  const i = argv.indexOf(flag);
  const value = i >= 0 ? argv[i + 1] : argv.find((a) => a.startsWith(`${flag}=`))?.slice(flag.length + 1);
  if (value === undefined) return values[0]!;
  if ((values as readonly string[]).includes(value)) return value as T;
  throw new Error(`${flag} takes ${values.join(' or ')}, not ${value}`);
}

async function main(argv: string[]): Promise<void> {
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const aborter = new AbortController();
  let topology: Topology | undefined;
  let exiting: Promise<void> | undefined;
  const stopAndExit = (t: Topology): Promise<void> => {
    exiting ??= t.stop().then(() => process.exit(0), (err: unknown) => {
      process.stderr.write(`stop failed: ${String(err)}\n`);
      process.exit(1);
    });
    return exiting;
  };
  const shutdown = (why: string) => {
    if (aborter.signal.aborted) return;
    out(`\n${why}: stopping every process of the topology`);
    aborter.abort();
    // During start-up, startTopology stops what it started once it sees the abort; main exits then.
    if (topology) void stopAndExit(topology);
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));

  const started = Date.now();
  try {
    topology = await startTopology({
      temporalAddress: process.env.TEMPORAL_ADDRESS || undefined,
      namespace: process.env.TEMPORAL_NAMESPACE || undefined,
      databaseUrl: process.env.DATABASE_URL || undefined,
      temporal: choice<TemporalKind>(argv, '--temporal', ['dev', 'cluster']),
      postgres: choice(argv, '--postgres', ['single', 'replicated'] as const),
      temporalUi: true,
      env: forwardedConfig(process.env),
      log: (line) => out(`topology: ${line}`),
      signal: aborter.signal,
    });
  } catch (err) {
    if (aborter.signal.aborted) process.exit(0); // everything it started is stopped already
    throw err;
  }
  if (aborter.signal.aborted) return stopAndExit(topology);
  out(`\n${describeTopology(topology)}\n  (up in ${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
  if (!argv.includes('--no-smoke')) {
    try {
      await smokeOrder(topology, out);
    } catch (err) {
      if (!aborter.signal.aborted) out(`smoke check FAILED: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  if (!aborter.signal.aborted) out('\nrunning; Ctrl-C (or SIGTERM) stops every process');
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    process.stderr.write(`topology failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exit(1);
  });
}
