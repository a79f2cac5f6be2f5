/** Starts Jaeger v2 (scripts/install-jaeger.sh builds it) with its traces in memory, on loopback
 * ports of its own: for `npm run dev` and the tests. Its OTLP receiver is where the app sends its
 * spans (TRACES_OTLP_URL) and its query API is what the console reads (TRACES_QUERY_URL). */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './ports';

const run = promisify(execFile);

export interface RunningJaeger { otlpUrl: string; queryUrl: string; process: ChildProcess; stop(): Promise<void> }

const JAEGER_VERSION = 'v1.76.0';
/** Where install-jaeger.sh leaves the binary (PAYOUTS_CACHE_DIR as the script reads it). */
export const jaegerBinaryPath = (): string => process.env.JAEGER_PATH
  ?? path.join(process.env.PAYOUTS_CACHE_DIR ?? path.join(process.env.HOME ?? '/root', '.cache', 'payouts'), `jaeger-${JAEGER_VERSION}`, 'jaeger');

/** The binary when it is built, else null (building it takes minutes: the caller decides). */
export const installedJaeger = (): string | null => (fs.existsSync(jaegerBinaryPath()) ? jaegerBinaryPath() : null);

/** Starts its build in the background, at the lowest CPU priority, when Go is here and no build
 * runs yet; the build's output goes to `logFile`. Answers whether a build is running now. */
export function buildJaegerInBackground(projectRoot: string, logFile: string): boolean {
  const lock = `${logFile}.pid`;
  const running = fs.existsSync(lock) && (() => { try { process.kill(Number(fs.readFileSync(lock, 'utf8')), 0); return true; } catch { return false; } })();
  if (running) return true;
  const out = fs.openSync(logFile, 'w', 0o600);
  const child = spawn('nice', ['-n', '19', 'bash', path.join(projectRoot, 'scripts/install-jaeger.sh')], { detached: true, stdio: ['ignore', out, out] });
  child.on('error', () => undefined);
  if (child.pid === undefined) return false;
  fs.writeFileSync(lock, String(child.pid), { mode: 0o600 });
  child.unref();
  return true;
}

/** Builds it when missing (several minutes the first time), and answers its path. */
export async function installJaeger(projectRoot: string): Promise<string> {
  const { stdout } = await run('bash', [path.join(projectRoot, 'scripts/install-jaeger.sh')], { maxBuffer: 1 << 20 });
  const bin = stdout.trim().split('\n').pop();
  if (!bin) throw new Error('install-jaeger.sh printed no path');
  return bin;
}

async function healthy(url: string, deadline: number, child: ChildProcess): Promise<void> {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`jaeger exited with ${child.exitCode} before it was healthy`);
    const ok = await fetch(url).then((r) => r.ok, () => false);
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`jaeger not healthy at ${url} within its deadline`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function startJaeger(opts: { binary: string; projectRoot: string; log?: (line: string) => void }): Promise<RunningJaeger> {
  const [otlp, query, grpc, health] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  const env = {
    ...process.env,
    JAEGER_OTLP_HTTP_ADDRESS: `127.0.0.1:${otlp}`, JAEGER_QUERY_ADDRESS: `127.0.0.1:${query}`,
    JAEGER_QUERY_GRPC_ADDRESS: `127.0.0.1:${grpc}`, JAEGER_HEALTH_ADDRESS: `127.0.0.1:${health}`,
  };
  const child = spawn(opts.binary, [`--config=${path.join(opts.projectRoot, 'deploy/jaeger/jaeger.yaml')}`], { env, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  const killOnExit = () => child.kill('SIGTERM');
  process.once('exit', killOnExit);
  child.once('exit', () => process.off('exit', killOnExit));
  // Its log lines are `time<TAB>level<TAB>…`: only its errors are passed on.
  child.stderr?.on('data', (chunk: Buffer) => { for (const line of chunk.toString('utf8').split('\n')) if (/\t(error|fatal|panic)\t/.test(line)) opts.log?.(`jaeger: ${line}`); });
  await healthy(`http://127.0.0.1:${health}/status`, Date.now() + 20_000, child);
  return {
    otlpUrl: `http://127.0.0.1:${otlp}`, queryUrl: `http://127.0.0.1:${query}`, process: child,
    stop: () => new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    }),
  };
}
