/** `npm run keys`: an operator mints, lists and revokes API keys; the secret is shown once and only
 * its hash is stored; a revoked key stops working at once. */
import { authenticateApiKey } from '../../src/auth/apiKeys';
import { createPool, type Db } from '../../src/db/pool';
import { createIsolatedDatabase } from '../support/db';
import { startAppProcess } from '../support/processes';

describe('keys CLI', () => {
  let url: string;
  let db: Db;

  beforeAll(async () => {
    url = await createIsolatedDatabase();
    db = createPool(url, 2);
  });
  afterAll(async () => {
    await db?.end();
  });

  const keys = async (...args: string[]) => {
    const proc = startAppProcess('src/cli/keys.ts', { DATABASE_URL: url, LOG_LEVEL: 'warn' }, args);
    return { code: await proc.exited, output: proc.output() };
  };

  test('when a key is minted, listed and revoked, then it authenticates with its roles until revoked, and only a hash is stored', async () => {
    const minted = await keys('mint', '--name', 'counter-dosa', '--role', 'vendor:ven_dosa', '--role', 'ops', '--json');
    expect(minted.code).toBe(0);
    const record = JSON.parse(minted.output.trim().split('\n').at(-1)!) as { id: string; key: string; roles: string[] };
    expect(record.roles).toEqual(['vendor:ven_dosa', 'ops']);
    expect(await authenticateApiKey(db, record.key)).toEqual({ keyId: record.id, name: 'counter-dosa', roles: ['vendor:ven_dosa', 'ops'] });
    const stored = await db.query('SELECT secret_sha256 FROM api_keys WHERE id = $1', [record.id]);
    // The secret is what follows `pk_<id>_` (base64url: it may itself hold an underscore).
    expect(JSON.stringify(stored.rows)).not.toContain(record.key.slice(`pk_${record.id}_`.length));

    const listed = await keys('list');
    expect(listed.output).toMatch(/counter-dosa\tvendor:ven_dosa,ops\tcli:/);
    expect(listed.output).not.toContain(record.key);

    expect((await keys('mint', '--name', 'counter-dosa', '--role', 'ops')).code).toBe(1); // one live key per name
    expect((await keys('revoke', 'counter-dosa')).code).toBe(0);
    expect(await authenticateApiKey(db, record.key)).toBeNull();
    expect((await keys('revoke', 'counter-dosa')).code).toBe(1);
    expect((await keys('list', '--all')).output).toMatch(/counter-dosa.*by cli:/);
  });

  test('when the input is bad, then exit 2 with the reason and nothing is written', async () => {
    const before = (await db.query('SELECT count(*)::int AS n FROM api_keys')).rows[0].n;
    for (const args of [['mint', '--name', 'x', '--role', 'ops'], ['mint', '--name', 'okname', '--role', 'root'], ['mint', '--name', 'okname'], ['explode'], ['revoke']]) {
      const answer = await keys(...args);
      expect([args.join(' '), answer.code]).toEqual([args.join(' '), 2]);
      expect(answer.output).toMatch(/^keys: .+\nusage:/m);
    }
    expect((await db.query('SELECT count(*)::int AS n FROM api_keys')).rows[0].n).toBe(before);
  });
});
