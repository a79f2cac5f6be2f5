/** Runs the app's entry points as their own OS processes, configured only through the
 * environment, the way a deployment runs them. Node itself with tsx's loader (not the `tsx`
 * wrapper, a second process), so a signal reaches the entry point. */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');

export interface AppProcess {
  child: ChildProcess;
  /** stdout and stderr so far. */
  output(): string;
  /** Resolves with the exit code (or the signal's name). */
  exited: Promise<number | string>;
  /** Resolves once the output matches. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  stop(signal?: NodeJS.Signals): Promise<number | string>;
}

export function startAppProcess(entry: 'src/worker.ts' | 'src/api/main.ts' | 'src/cli/keys.ts' | 'src/cli/csvUnsafeReport.ts' | 'src/cli/ledger.ts', env: Record<string, string>, args: string[] = []): AppProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, entry), ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    // Only what the test says, on top of a minimal base: no DATABASE_URL etc. leaks in from jest.
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', LOG_LEVEL: 'info', ...env },
  });
  let out = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => { out += chunk.toString(); for (const l of listeners) l(); };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  return {
    child,
    output: () => out,
    exited,
    waitFor(pattern, timeoutMs = 60_000) {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (pattern.test(out)) { cleanup(); resolve(); }
        };
        const timer = setTimeout(() => { cleanup(); reject(new Error(`${entry}: no ${pattern} within ${timeoutMs} ms; output:\n${out.slice(-4000)}`)); }, timeoutMs);
        const gone = () => { cleanup(); reject(new Error(`${entry} exited before ${pattern}; output:\n${out.slice(-4000)}`)); };
        const cleanup = () => { clearTimeout(timer); listeners.delete(check); child.off('exit', gone); };
        listeners.add(check);
        child.once('exit', gone);
        check();
      });
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
  };
}
