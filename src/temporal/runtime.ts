/** The Temporal SDK's process-wide runtime. Installed before the first worker connection so the
 * SDK's own logs follow LOG_LEVEL like ours (one step quieter). */
import { DefaultLogger, Runtime, type LogLevel } from '@temporalio/worker';

/** The SDK's own chatter (worker state changes, webpack's bundle report) is for debugging: it shows
 * at LOG_LEVEL=debug or trace; otherwise only its warnings and errors do. */
export function sdkLogger(): DefaultLogger {
  const levels: Record<string, LogLevel> = { trace: 'TRACE', debug: 'DEBUG', info: 'WARN', warn: 'WARN', error: 'ERROR', fatal: 'ERROR', silent: 'ERROR' };
  return new DefaultLogger(levels[process.env.LOG_LEVEL ?? 'info'] ?? 'WARN');
}

let installed = false;
export function installRuntime(): void {
  if (installed) return;
  installed = true;
  try {
    Runtime.install({ logger: sdkLogger() });
  } catch {
    // A runtime already exists in this process: keep it.
  }
}
