/** Files of the local stack that hold secrets or money state (issue 21, item 11): `.data/` and every
 * directory made under it owner-only (0700), files 0600, a secret file always replaced whole by a
 * temporary file and a rename (so its mode is set on every write, and a reader never sees half). */
import fs from 'node:fs';
import path from 'node:path';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;
/** `.data/` when the embedded PostgreSQL runs as another user (root starts it as `postgres`): that
 * user's group may traverse it to reach its data directory, nothing more. */
export const TRAVERSABLE_DIR_MODE = 0o710;
const DATA_DIR_NAME = '.data';

/** `dir` and, up to the nearest `.data` above it, each directory between (a directory outside
 * `.data`: only itself). */
function privateChain(dir: string): string[] {
  const chain: string[] = [];
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    chain.push(at);
    if (path.basename(at) === DATA_DIR_NAME) return chain;
    if (path.dirname(at) === at) return chain.slice(0, 1);
  }
}

const ownedByUs = (st: fs.Stats): boolean => process.getuid === undefined || st.uid === process.getuid();

/** Creates `dir` (0700) and tightens it and the directories up to `.data` that already exist; a
 * directory opened to the PostgreSQL user's group (0710) stays so. */
export function ensurePrivateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  for (const at of privateChain(dir)) {
    const st = fs.statSync(at);
    const mode = st.mode & 0o777;
    if (ownedByUs(st) && mode !== PRIVATE_DIR_MODE && mode !== TRAVERSABLE_DIR_MODE) fs.chmodSync(at, PRIVATE_DIR_MODE);
  }
}

/** Lets group `gid` traverse (never list or read) the private directories above `dataDir`, so
 * that a PostgreSQL running as another user reaches its data directory. */
export function letGroupTraverse(dataDir: string, gid: number): void {
  for (const at of privateChain(path.dirname(dataDir))) {
    const st = fs.statSync(at, { throwIfNoEntry: false });
    if (!st || !ownedByUs(st) || (st.mode & 0o001) !== 0) continue;
    if (st.gid !== gid) fs.chownSync(at, st.uid, gid);
    fs.chmodSync(at, TRAVERSABLE_DIR_MODE);
  }
}

/** Makes an existing file 0600 (a missing one is fine). */
export function restrictFile(file: string): void {
  try {
    fs.chmodSync(file, PRIVATE_FILE_MODE);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/** Writes `text` to `file` (0600) through a temporary file beside it and a rename, every time. */
export async function writePrivateFile(file: string, text: string): Promise<void> {
  ensurePrivateDir(path.dirname(file));
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    await fs.promises.writeFile(temporary, text, { mode: PRIVATE_FILE_MODE, flag: 'w' });
    await fs.promises.chmod(temporary, PRIVATE_FILE_MODE); // a leftover temporary file kept its old mode
    await fs.promises.rename(temporary, file);
  } catch (err) {
    await fs.promises.rm(temporary, { force: true });
    throw err;
  }
}

/** Runs `spawn` (synchronous) with umask 077, so what the child creates is owner-only. */
export function withPrivateUmask<T>(spawn: () => T): T {
  const previous = process.umask(0o077);
  try {
    return spawn();
  } finally {
    process.umask(previous);
  }
}
