/** `npm run dev`'s API keys: one per role, minted once into the stack's database and kept in
 * .data/dev-credentials.json (0600, replaced whole at every start) so a second start reuses them.
 * They are marked as minted by the dev stack: `npm run api` against real Razorpay refuses to start
 * while any is live. */
import fs from 'node:fs/promises';
import { writePrivateFile } from '../devstack/privateFiles';
import { authenticateApiKey, DEV_STACK_MINTER, mintApiKey, revokeApiKey } from '../auth/apiKeys';
import type { PlainRole } from '../auth/roles';
import type { Db } from '../db/pool';

export type DevKeys = Record<PlainRole, string>;
const ROLES: PlainRole[] = ['ordering', 'ops', 'admin', 'finance'];

export async function ensureDevCredentials(db: Db, file: string): Promise<{ file: string; keys: DevKeys }> {
  const saved = await fs.readFile(file, 'utf8').then((t) => JSON.parse(t) as Partial<DevKeys>, () => ({} as Partial<DevKeys>));
  const keys = {} as DevKeys;
  for (const role of ROLES) {
    const existing = saved[role];
    const principal = existing ? await authenticateApiKey(db, existing) : null;
    if (existing && principal?.roles.includes(role)) {
      keys[role] = existing;
      continue;
    }
    // A fresh database, or a file from another one: replace the key of that name.
    await revokeApiKey(db, `dev-${role}`, DEV_STACK_MINTER);
    keys[role] = (await mintApiKey(db, { name: `dev-${role}`, roles: [role], mintedBy: DEV_STACK_MINTER })).key;
  }
  await writePrivateFile(file, `${JSON.stringify(keys, null, 2)}\n`);
  return { file, keys };
}
