/** The Temporal SDK's process-wide runtime. Installed before the first worker connection so the
 * SDK's own logs follow LOG_LEVEL like ours. */
import { DefaultLogger, Runtime, type LogLevel } from '@temporalio/worker';

export function sdkLogger(): DefaultLogger {
  const levels: Record<string, LogLevel> = { trace: 'TRACE', debug: 'DEBUG', info: 'INFO', warn: 'WARN', error: 'ERROR', fatal: 'ERROR', silent: 'ERROR' };
  return new DefaultLogger(levels[process.env.LOG_LEVEL ?? 'info'] ?? 'INFO');
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
