/** The frame of a one-off, read-mostly report CLI that talks to PostgreSQL directly (DATABASE_URL),
 * like `npm run keys`: `--json` for machines, plain lines for people. `report` returns the exit code
 * (0 nothing to report, 1 something found); bad input exits 2, a failure 1, each with its command's
 * name. */
import { parseArgs } from 'node:util';
import { loadConfig } from '../config/config';
import { createPool, poolOptionsFrom, type Db } from '../db/pool';

class UsageError extends Error {}

export function runJsonReportCli(command: string, what: string, report: (db: Db, opts: { json: boolean; print: (line: string) => void }) => Promise<number>): void {
  const print = (line: string) => { process.stdout.write(`${line}\n`); };
  const main = async (): Promise<number> => {
    let json = false;
    try {
      json = parseArgs({ args: process.argv.slice(2), options: { json: { type: 'boolean' } } }).values.json === true;
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    const config = loadConfig();
    if (!config.DATABASE_URL) throw new UsageError(`DATABASE_URL is required (${what})`);
    const db = createPool(config.DATABASE_URL, { ...poolOptionsFrom(config), max: 2 });
    try {
      return await report(db, { json, print });
    } finally {
      await db.end();
    }
  };
  main().then((code) => process.exit(code), (err: unknown) => {
    if (err instanceof UsageError) {
      process.stderr.write(`${command}: ${err.message}\nusage: npm run ${command} [-- --json]\n`);
      process.exit(2);
    }
    process.stderr.write(`${command}: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
