/** Files that carry money details (a settlement batch's bank file holds vendors' full account
 * numbers): written only where git will not pick them up. A path inside a git work tree that git
 * would track is refused, so one `git add .` cannot commit account numbers; an ignored path (this
 * project's .gitignore ignores `*-bank-file.csv`) or one outside any work tree is fine. */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { UsageError } from './context';

const run = promisify(execFile);

/** Exit 0 of `git <args>` in `cwd`; false when it fails or git is not installed. */
async function gitSays(cwd: string, args: string[]): Promise<boolean> {
  try {
    await run('git', args, { cwd, timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
}

/** The absolute path to write `file` at, or a UsageError when git would track it there. */
export async function moneyFilePath(file: string): Promise<string> {
  const target = path.resolve(file);
  const dir = path.dirname(target);
  if (!(await gitSays(dir, ['rev-parse', '--is-inside-work-tree']))) return target;
  // A tracked file is never "ignored" here, whatever the patterns say: writing it would change it.
  if (await gitSays(dir, ['check-ignore', '--quiet', target])) return target;
  throw new UsageError(`refusing to write vendors' account numbers to ${target}: it is inside a git work tree and git does not ignore it, `
    + 'so `git add` would commit it. Write it outside the work tree (--out ~/bank/…) or add a pattern for it to .gitignore');
}
