/** `npm run bank-details:rotate [-- --batch-size N]`: re-encrypts every vendor's bank details still
 * under an older key with BANK_DETAILS_ACTIVE_KEY_ID, and says which keys no row needs any more.
 * Talks to PostgreSQL directly (DATABASE_URL) with the keys from the environment, as the API and
 * the worker do. To rotate: add the new key to BANK_DETAILS_KEYS, make it active, deploy, run this,
 * then drop the old key once no row needs it. Exit codes: 0 done, 1 failure or rows left unreadable,
 * 2 bad input. */
import os from 'node:os';
import { parseArgs } from 'node:util';
import { keyringFromConfig } from '../banking/keyring';
import { rotateBankDetailsKeys, rowsByKey } from '../banking/rotation';
import { loadConfig } from '../config/config';
import { createPool, poolOptionsFrom } from '../db/pool';

class UsageError extends Error {}

const USAGE = 'usage: npm run bank-details:rotate [-- --batch-size N]   (N: 1–1000, default 100)';

const print = (line: string): void => { process.stdout.write(`${line}\n`); };
const counted = (byKey: Record<string, number>): string => Object.entries(byKey).map(([id, n]) => `${id}: ${n}`).join(', ') || 'none';

async function main(argv: string[]): Promise<number> {
  const { values } = (() => {
    try {
      return parseArgs({ args: argv, options: { 'batch-size': { type: 'string' } } });
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  })();
  const batchSize = Number(values['batch-size'] ?? '100');
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 1_000) throw new UsageError(`--batch-size ${values['batch-size']}: a whole number from 1 to 1000`);

  const config = loadConfig(process.env, { refuseDevBankKeys: true });
  if (!config.DATABASE_URL) throw new UsageError('DATABASE_URL is required (the bank details live in the app database)');
  const keyring = keyringFromConfig(config);
  const db = createPool(config.DATABASE_URL, { ...poolOptionsFrom(config), max: 1 });
  try {
    print(`bank details: active key ${keyring.activeKeyId}; keys held: ${keyring.keyIds.join(', ')}`);
    print(`rows by key before: ${counted(await rowsByKey(db))}`);
    const result = await rotateBankDetailsKeys(db, keyring, {
      actor: `cli:${os.userInfo().username}`,
      batchSize,
      onProgress: ({ done, total }) => print(`  ${done}/${total} row(s) done`),
    });
    const after = await rowsByKey(db);
    print(`done: ${result.rotated} row(s) re-encrypted under ${keyring.activeKeyId}${result.failed.length ? `, ${result.failed.length} left unreadable` : ''}`);
    for (const f of result.failed) print(`  ${f.vendorId}: ${f.reason}`);
    print(`rows by key after: ${counted(after)}`);
    const unused = keyring.keyIds.filter((id) => id !== keyring.activeKeyId && !after[id]);
    if (unused.length) print(`no row needs ${unused.join(', ')} any more: it can leave BANK_DETAILS_KEYS once every process runs with ${keyring.activeKeyId} active`);
    return result.failed.length ? 1 : 0;
  } finally {
    await db.end();
  }
}

main(process.argv.slice(2)).then((code) => process.exit(code), (err: unknown) => {
  if (err instanceof UsageError) {
    process.stderr.write(`bank-details:rotate: ${err.message}\n${USAGE}\n`);
    process.exit(2);
  }
  process.stderr.write(`bank-details:rotate: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
