/** API keys for tests: one key per role, minted in the test file's own database, as
 * `Authorization` headers. */
import { mintApiKey } from '../../src/auth/apiKeys';
import type { Role } from '../../src/auth/roles';
import type { Db } from '../../src/db/pool';

export type AuthHeader = { authorization: string };

export async function mintKey(db: Db, roles: Role[], name = `test-${roles.join('+')}`): Promise<AuthHeader> {
  const minted = await mintApiKey(db, { name, roles, mintedBy: 'test' });
  return { authorization: `Bearer ${minted.key}` };
}

export interface RoleKeys { ordering: AuthHeader; ops: AuthHeader; admin: AuthHeader; finance: AuthHeader }

export async function mintRoleKeys(db: Db): Promise<RoleKeys> {
  return {
    ordering: await mintKey(db, ['ordering']),
    ops: await mintKey(db, ['ops']),
    admin: await mintKey(db, ['admin']),
    finance: await mintKey(db, ['finance']),
  };
}
