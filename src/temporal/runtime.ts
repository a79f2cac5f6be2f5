/** The Temporal SDK's process-wide runtime. Installed before the first worker connection so the
 * SDK's own logs follow LOG_LEVEL like ours (one step quieter), and so its worker metrics (task
 * latencies, slots, polls) are exported for Prometheus when WORKER_SDK_METRICS_ADDRESS says where. */
import { IllegalStateError } from '@temporalio/common';
import { sdkMetricsAddressSchema } from '../config/config';
import { DefaultLogger, Runtime, type LogEntry, type LogLevel, type RuntimeOptions } from '@temporalio/worker';
import { logger } from '../logger';

/** SDK warnings that describe this design, not a problem: the provider budget's workers poll only
 * activity tasks, on purpose (issue 39: two such lines greeted every `npm run dev`). */
const EXPECTED_SDK_WARNINGS: ReadonlySet<string> = new Set(['No workflows registered, not polling for workflow tasks']);

const PINO_METHOD = { TRACE: 'trace', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' } as const;

/** The SDK's log lines as ours: JSON in production, human lines in `npm run dev` (logger.ts). */
export function sdkLogFunction(entry: LogEntry): void {
  const level = entry.level === 'WARN' && EXPECTED_SDK_WARNINGS.has(entry.message) ? 'DEBUG' : entry.level;
  logger[PINO_METHOD[level]]({ ...entry.meta, source: 'temporal-sdk' }, entry.message);
}

/** The SDK's own chatter (worker state changes, webpack's bundle report) is for debugging: it shows
 * at LOG_LEVEL=debug or trace; otherwise only its warnings and errors do. */
export function sdkLogger(): DefaultLogger {
  const levels: Record<string, LogLevel> = { trace: 'TRACE', debug: 'DEBUG', info: 'WARN', warn: 'WARN', error: 'ERROR', fatal: 'ERROR', silent: 'ERROR' };
  return new DefaultLogger(levels[process.env.LOG_LEVEL ?? 'info'] ?? 'WARN', sdkLogFunction);
}

export function sdkMetricsAddressFrom(env: NodeJS.ProcessEnv): string | null {
  const parsed = sdkMetricsAddressSchema.safeParse(env.WORKER_SDK_METRICS_ADDRESS ?? 'off');
  if (!parsed.success) {
    throw new Error(`WORKER_SDK_METRICS_ADDRESS=${JSON.stringify(env.WORKER_SDK_METRICS_ADDRESS)}: ${parsed.error.issues.map((i) => i.message).join('; ')}`);
  }
  return parsed.data;
}

/** Prometheus naming: counters end in _total, durations are seconds and say so. */
export function runtimeOptions(metricsAddress: string | null): RuntimeOptions {
  return {
    logger: sdkLogger(),
    ...(metricsAddress === null ? {} : {
      telemetryOptions: { metrics: { prometheus: { bindAddress: metricsAddress, countersTotalSuffix: true, useSecondsForDurations: true, unitSuffix: true } } },
    }),
  };
}

let installed = false;
let exporterAddress: string | null = null;

export function installRuntime(): void {
  if (installed) return;
  const address = sdkMetricsAddressFrom(process.env);
  installed = true;
  try {
    Runtime.install(runtimeOptions(address));
    exporterAddress = address;
  } catch (err) {
    // A runtime already exists in this process: keep it. Anything else (the exporter's port is
    // taken) is a start-up error.
    if (!(err instanceof IllegalStateError)) throw err;
  }
}

/** Where this process's SDK metrics can be read, or null when the exporter is off. */
export function sdkMetricsUrl(): string | null {
  if (exporterAddress === null) return null;
  const port = exporterAddress.slice(exporterAddress.lastIndexOf(':') + 1);
  const host = exporterAddress.slice(0, exporterAddress.lastIndexOf(':'));
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '[::]' ? '[::1]' : host;
  return `http://${reachable}:${port}/metrics`;
}
