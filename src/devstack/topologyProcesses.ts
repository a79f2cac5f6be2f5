/** Child processes of the production topology (src/devstack/topology.ts): an app process is Node
 * itself with tsx's loader (`node --import tsx file.ts`, never the `tsx` wrapper, so a signal reaches
 * the program and not a launcher); a server (the Temporal cluster's services) is its binary. Each
 * runs in its own process group (the terminal's Ctrl-C reaches only the
 * topology, which stops its children in order; a signal to the group also reaches anything the
 * child started, such as esbuild's service), its stdout and stderr appended to `<logDir>/<name>.log`
 * and the last 64 KiB kept in memory for error messages. */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PRIVATE_FILE_MODE } from './privateFiles';

const TAIL_BYTES = 64 * 1024;

export interface ProcessSpec {
  /** Also the log file's name: `<logDir>/<name>.log`. */
  name: string;
  /** The executable and its arguments. */
  command: string;
  args: string[];
  cwd: string;
  /** The whole environment of the process: nothing else is inherited. */
  env: NodeJS.ProcessEnv;
  logDir: string;
  /** Its stdout carries a secret (a minted API key): kept out of the log file and the tail. */
  secretStdout?: boolean;
}

export interface NodeProcessSpec extends Omit<ProcessSpec, 'command' | 'args'> {
  /** The script, relative to `cwd` (e.g. `src/worker.ts`), and its arguments. */
  script: string;
  args?: string[];
}

/** `node --import tsx <script> <args>`. */
export function nodeProcessSpec(spec: NodeProcessSpec): ProcessSpec {
  return { ...spec, command: process.execPath, args: ['--import', 'tsx', spec.script, ...(spec.args ?? [])] };
}

export interface ProcessExit { code: number | null; signal: NodeJS.Signals | null }

/** Every child still alive, so that a topology whose parent dies without stop() leaves nothing. */
const live = new Set<ManagedProcess>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const p of live) p.signal('SIGKILL');
  });
}

export class ManagedProcess {
  readonly name: string;
  readonly logFile: string;
  readonly child: ChildProcess;
  /** Resolves when the process has exited (never rejects; a spawn error counts as an exit). */
  readonly exited: Promise<ProcessExit>;
  private exit: ProcessExit | null = null;
  private tail = '';
  private readonly listeners = new Set<(text: string) => void>();

  constructor(spec: ProcessSpec) {
    this.name = spec.name;
    fs.mkdirSync(spec.logDir, { recursive: true });
    this.logFile = path.join(spec.logDir, `${spec.name}.log`);
    const log = fs.createWriteStream(this.logFile, { flags: 'a', mode: PRIVATE_FILE_MODE });
    this.child = spawn(spec.command, spec.args, { cwd: spec.cwd, env: spec.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    log.write(`--- ${new Date().toISOString()} started pid ${this.child.pid ?? '?'}: ${path.basename(spec.command)} ${spec.args.join(' ')}\n`);
    if (spec.secretStdout) log.write('(stdout withheld from this log: it carries a secret)\n');
    const take = (chunk: Buffer) => {
      const text = chunk.toString();
      log.write(text);
      this.tail = (this.tail + text).slice(-TAIL_BYTES);
      for (const listener of this.listeners) listener(text);
    };
    if (!spec.secretStdout) this.child.stdout!.on('data', take);
    this.child.stderr!.on('data', take);
    live.add(this);
    installExitHook();
    this.exited = new Promise<ProcessExit>((resolve) => {
      const done = (exit: ProcessExit, note: string) => {
        if (this.exit) return;
        this.exit = exit;
        live.delete(this);
        log.end(`--- ${new Date().toISOString()} ${note}\n`);
        resolve(exit);
      };
      this.child.once('exit', (code, signal) => done({ code, signal }, `exited (code ${code}, signal ${signal})`));
      this.child.once('error', (err) => done({ code: null, signal: null }, `could not run: ${err.message}`));
    });
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get running(): boolean {
    return this.exit === null;
  }

  get exitInfo(): ProcessExit | null {
    return this.exit;
  }

  /** The last 64 KiB the process wrote (stdout and stderr interleaved). */
  output(): string {
    return this.tail;
  }

  /** Sends `signal` to the process group (the child and anything it started). No-op once exited. */
  signal(signal: NodeJS.Signals): void {
    if (!this.running || this.child.pid === undefined) return;
    try {
      process.kill(-this.child.pid, signal);
    } catch {
      try { this.child.kill(signal); } catch { /* already gone */ }
    }
  }

  /** SIGTERM to the group, SIGKILL after `graceMs`; resolves once the process has exited. */
  async stop(graceMs = 10_000): Promise<ProcessExit> {
    if (!this.running) return this.exit!;
    this.signal('SIGTERM');
    const timer = setTimeout(() => this.signal('SIGKILL'), graceMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Resolves with the first match of `pattern` in the output from now on (or already in the tail). */
  waitForOutput(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      let seen = this.tail;
      const finish = (err: Error | null, match?: RegExpMatchArray) => {
        clearTimeout(timer);
        this.listeners.delete(listener);
        if (err) reject(err); else resolve(match!);
      };
      const listener = (text: string) => {
        seen = (seen + text).slice(-TAIL_BYTES);
        const match = seen.match(pattern);
        if (match) finish(null, match);
      };
      const timer = setTimeout(() => finish(this.failure(`did not print ${pattern} within ${timeoutMs} ms`)), timeoutMs);
      this.listeners.add(listener);
      void this.exited.then((exit) => finish(this.failure(`exited (code ${exit.code}, signal ${exit.signal}) before printing ${pattern}`)));
      const already = seen.match(pattern);
      if (already) finish(null, already);
    });
  }

  /** An error naming the process, with its log file and the end of its output. */
  failure(what: string): Error {
    return new Error(`${this.name} (pid ${this.pid}) ${what}; log ${this.logFile}; last output:\n${this.tail.slice(-4000).trimEnd()}`);
  }
}

export function startProcess(spec: ProcessSpec): ManagedProcess {
  return new ManagedProcess(spec);
}

export function startNodeProcess(spec: NodeProcessSpec): ManagedProcess {
  return startProcess(nodeProcessSpec(spec));
}

/** Runs a one-shot process (migrations, a CLI command) to completion; its stdout, or an error with
 * its output when it exits non-zero or outlives `timeoutMs` (then it is killed). `onSpawn` gets the
 * process at once (so that a caller stopping everything can stop it too). */
export async function runProcess(spec: ProcessSpec, timeoutMs = 120_000, onSpawn?: (proc: ManagedProcess) => void): Promise<string> {
  const proc = startProcess(spec);
  onSpawn?.(proc);
  let stdout = '';
  proc.child.stdout!.on('data', (chunk: Buffer) => { stdout += chunk.toString(); });
  // 'exit' may come before the last of stdout is read (Node's stdio can still be open then): the
  // output is whole once the stream closes (bounded, in case a grandchild holds it open).
  const stdoutClosed = new Promise<void>((resolve) => proc.child.stdout!.once('close', () => resolve()));
  const timer = setTimeout(() => proc.signal('SIGKILL'), timeoutMs);
  const exit = await proc.exited;
  clearTimeout(timer);
  await Promise.race([stdoutClosed, new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
  if (exit.code !== 0) throw proc.failure(exit.signal === 'SIGKILL' ? `was killed after ${timeoutMs} ms` : `failed (code ${exit.code}, signal ${exit.signal})`);
  return stdout;
}

export function runNodeProcess(spec: NodeProcessSpec, timeoutMs = 120_000, onSpawn?: (proc: ManagedProcess) => void): Promise<string> {
  return runProcess(nodeProcessSpec(spec), timeoutMs, onSpawn);
}

export interface ReadyOptions {
  /** The process behind the URL: its exit fails the wait at once. */
  process?: ManagedProcess;
  timeoutMs: number;
  intervalMs?: number;
  /** Stops waiting (rejects) once aborted. */
  signal?: AbortSignal;
}

/** Polls `url` until it answers 200; fails on the deadline (with the last answer and the process's
 * output) or as soon as the process exits. */
export async function waitForHttp200(url: string, opts: ReadyOptions): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  let last = 'no answer yet';
  for (;;) {
    if (opts.signal?.aborted) throw new Error(`stopped waiting for ${url}: aborted`);
    if (opts.process && !opts.process.running) {
      const exit = opts.process.exitInfo!;
      throw opts.process.failure(`exited (code ${exit.code}, signal ${exit.signal}) before ${url} answered 200 (last: ${last})`);
    }
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(3_000) });
      const body = await res.text();
      if (res.status === 200) return;
      last = `${res.status} ${body.slice(0, 1000)}`;
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() > deadline) {
      const what = `did not answer 200 on ${url} within ${opts.timeoutMs} ms (last: ${last})`;
      throw opts.process ? opts.process.failure(what) : new Error(what);
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 250));
  }
}
