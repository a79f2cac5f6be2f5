/** `npm run keys -- mint|list|revoke`: API keys for the callers of the API. Talks to PostgreSQL
 * directly (DATABASE_URL): it is how the first key comes to exist. The secret is printed once.
 *   npm run keys -- mint --name ordering-service --role ordering
 *   npm run keys -- mint --name counter-dosa --role vendor:ven_dosa
 *   npm run keys -- list [--all] [--json]
 *   npm run keys -- revoke NAME_OR_ID
 * Exit codes: 0 ok, 1 failure, 2 bad input. */
import os from 'node:os';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { ApiKeyNameTaken, listApiKeys, mintApiKey, revokeApiKey } from '../auth/apiKeys';
import { roleSchema } from '../auth/roles';
import { loadConfig } from '../config/config';
import { formatIst } from '../domain/istTime';
import { createPool, poolOptionsFrom } from '../db/pool';

class UsageError extends Error {}

const USAGE = `usage: npm run keys -- mint --name NAME --role ROLE [--role ROLE…] [--json]
       npm run keys -- list [--all] [--json]
       npm run keys -- revoke NAME_OR_ID
roles: ordering, ops, admin, finance, vendor:<vendorId>`;

const nameSchema = z.string().regex(/^[A-Za-z0-9_.:-]{3,64}$/, 'a key name is 3–64 letters, digits, _ . : -');

async function main(argv: string[]): Promise<void> {
  const { positionals, values } = (() => {
    try {
      return parseArgs({ args: argv, allowPositionals: true, options: { name: { type: 'string' }, role: { type: 'string', multiple: true }, json: { type: 'boolean' }, all: { type: 'boolean' } } });
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  })();
  const [command, target] = positionals;
  if (!command || !['mint', 'list', 'revoke'].includes(command)) throw new UsageError(command ? `unknown command ${command}` : 'a command is required');
  const input = command === 'mint' ? parseMint(values) : null;
  if (command === 'revoke' && !target) throw new UsageError('revoke needs the key name or id');

  const config = loadConfig();
  if (!config.DATABASE_URL) throw new UsageError('DATABASE_URL is required (the key table lives in the app database)');
  const db = createPool(config.DATABASE_URL, { ...poolOptionsFrom(config), max: 1 });
  const by = `cli:${os.userInfo().username}`;
  try {
    if (input) {
      const minted = await mintApiKey(db, { ...input, mintedBy: by });
      if (values.json) return print(JSON.stringify(minted));
      print(`minted ${minted.name} (${minted.id}) with roles ${minted.roles.join(', ')}`);
      print(`key (shown once; send it as Authorization: Bearer …):\n${minted.key}`);
    } else if (command === 'list') {
      const keys = await listApiKeys(db, { includeRevoked: values.all });
      if (values.json) return print(JSON.stringify(keys));
      if (keys.length === 0) return print('no API keys');
      print(['id', 'name', 'roles', 'minted by', 'created', 'revoked'].join('\t'));
      for (const k of keys) print([k.id, k.name, k.roles.join(','), k.mintedBy, formatIst(k.createdAt), k.revokedAt ? `${formatIst(k.revokedAt)} by ${k.revokedBy}` : '-'].join('\t'));
    } else {
      const revoked = await revokeApiKey(db, target!, by);
      if (!revoked) throw new Error(`no live API key named or with id ${target}`);
      print(values.json ? JSON.stringify(revoked) : `revoked ${revoked.name} (${revoked.id})`);
    }
  } finally {
    await db.end();
  }
}

function parseMint(values: { name?: string; role?: string[] }) {
  const name = nameSchema.safeParse(values.name ?? '');
  if (!name.success) throw new UsageError(`--name: ${name.error.issues[0]!.message}`);
  if (!values.role?.length) throw new UsageError('--role is required (at least one)');
  const roles = values.role.flatMap((r) => r.split(',')).map((r) => {
    const parsed = roleSchema.safeParse(r);
    if (!parsed.success) throw new UsageError(`--role ${r}: ${parsed.error.issues[0]!.message}`);
    return parsed.data;
  });
  return { name: name.data, roles };
}

function print(line: string): void {
  process.stdout.write(`${line}\n`);
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof UsageError) {
    process.stderr.write(`keys: ${err.message}\n${USAGE}\n`);
    process.exit(2);
  }
  process.stderr.write(`keys: ${err instanceof ApiKeyNameTaken || err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
