/** Runs the `payouts` CLI as ops and finance run it: its own OS process (node with tsx's loader),
 * with only the environment given (and PATH, HOME, a USER), never this checkout's own stack file
 * unless told. What it wrote and its exit code come back whole. */
import { spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

export interface CliRun { code: number | null; stdout: string; stderr: string }

export function runPayoutsCli(args: string[], env: Record<string, string>): Promise<CliRun> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/cli/payouts/main.ts'), ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', USER: 'ci-runner', ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString(); });
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
  const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
  return new Promise((resolve) => child.once('close', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); }));
}
