/** The campaign's rolling deploy (--rolling-deploy; issue 23 item 5): the topology's workers start
 * as the previous build and are replaced, one at a time mid-run, by this checkout's build. The
 * previous build is this commit with one shipped workflow change taken out
 * (`deploy/previous-build.patch`: the payout's `payout-patches-up-front` patch, which changes the
 * first commands of every payout run), checked out beside the project as a git
 * worktree. The checker then reads every worker's log for a nondeterminism error. */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import type { WorkerBuild } from '../../src/devstack/rollingDeploy';

const run = promisify(execFile);
const PATCH = path.join(__dirname, 'deploy', 'previous-build.patch');

export interface DeployBuilds {
  previous: WorkerBuild;
  current: WorkerBuild;
  /** Removes the previous build's checkout. */
  remove(): Promise<void>;
}

export async function prepareDeployBuilds(projectRoot: string, log: (line: string) => void): Promise<DeployBuilds> {
  const git = (...args: string[]) => run('git', ['-C', projectRoot, ...args]).then((r) => r.stdout.trim());
  const sha = await git('rev-parse', '--short=10', 'HEAD');
  const dirty = (await git('status', '--porcelain', '--untracked-files=no')) !== '';
  const dir = path.join(projectRoot, '.data', 'builds', `${sha}-previous-${randomBytes(3).toString('hex')}`);
  await fs.mkdir(path.dirname(dir), { recursive: true });
  await git('worktree', 'add', '--detach', '--force', dir, 'HEAD');
  await fs.symlink(path.join(projectRoot, 'node_modules'), path.join(dir, 'node_modules'));
  await run('git', ['-C', dir, 'apply', PATCH]);
  log(`deploy: the previous build is ${sha} without its payout-local-db-steps branch (${dir}); the new one is this checkout${dirty ? ' (with uncommitted changes)' : ''}`);
  return {
    previous: { buildId: `${sha}-previous`, projectRoot: dir },
    current: { buildId: `${sha}${dirty ? '-dirty' : ''}` },
    remove: async () => { await git('worktree', 'remove', '--force', dir).catch(() => fs.rm(dir, { recursive: true, force: true })); },
  };
}

/** Lines of the workers' logs that report a nondeterminism error (the SDK's, or core's TMPRL1100). */
export async function nondeterminismErrors(stateDir: string): Promise<string[]> {
  const found: string[] = [];
  for (const name of (await fs.readdir(stateDir)).filter((n) => n.startsWith('worker-') && n.endsWith('.log'))) {
    const text = await fs.readFile(path.join(stateDir, name), 'utf8');
    for (const line of text.split('\n')) if (/nondeterminism|TMPRL1100|DeterminismViolation/i.test(line)) found.push(`${name}: ${line.slice(0, 300)}`);
  }
  return found;
}
