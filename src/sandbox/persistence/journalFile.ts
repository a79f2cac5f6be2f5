/** The state file on disk: owner-only (0600), appended to by saves, replaced whole by a rewrite (a
 * temporary file beside it, then a rename, so a crash leaves the old file or the new one). Writes
 * are synchronous: a save is a few kilobytes, and a rewrite writes slices of bounded size. */
import fs from 'node:fs';
import path from 'node:path';
import { ensurePrivateDir } from '../../devstack/privateFiles';

const OWNER_ONLY = 0o600;

export class JournalFile {
  private constructor(public path: string, private fd: number, public bytes: number) {}

  /** Opens `file` to append to it (it exists: a rewrite created it). */
  static append(file: string): JournalFile {
    const fd = fs.openSync(file, 'a', OWNER_ONLY);
    fs.fchmodSync(fd, OWNER_ONLY);
    return new JournalFile(file, fd, fs.fstatSync(fd).size);
  }

  /** A new file beside `file`, to be put in its place by `replace`. */
  static rewriteOf(file: string): JournalFile {
    const temporary = rewritePath(file);
    fs.rmSync(temporary, { force: true });
    return new JournalFile(temporary, fs.openSync(temporary, 'wx', OWNER_ONLY), 0);
  }

  write(text: string): void {
    const data = Buffer.from(text);
    for (let at = 0; at < data.length;) at += fs.writeSync(this.fd, data, at);
    this.bytes += data.length;
  }

  /** This (rewritten) file takes the place of `file`; it stays open, for appending. */
  replace(file: string): void {
    fs.renameSync(this.path, file);
    this.path = file;
  }

  close(): void {
    fs.closeSync(this.fd);
  }

  /** Closes and deletes a rewrite that will not be used. */
  discard(): void {
    this.close();
    fs.rmSync(this.path, { force: true });
  }
}

const rewritePath = (file: string): string => `${file}.rewrite`;

export function readStateFile(file: string): string | null {
  ensurePrivateDir(path.dirname(file));
  // A rewrite a crash interrupted was never put in place: the file beside it is the state.
  fs.rmSync(rewritePath(file), { force: true });
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : null;
}

/** Cuts what a crash left after the last commit, so that saves append after whole records. */
export function truncateStateFile(file: string, bytes: number): void {
  fs.truncateSync(file, bytes);
}

/** A file that cannot be read is kept aside, renamed, and never half-loaded. */
export function setAside(file: string, why: string): void {
  const aside = `${file}.unreadable-${Date.now()}`;
  fs.renameSync(file, aside);
  process.stderr.write(`sandbox: ${file} could not be read (${why}); set aside as ${path.basename(aside)}, starting empty\n`);
}
