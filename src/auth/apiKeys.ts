/** API keys in PostgreSQL: minted with a random 256-bit secret shown once, stored as its SHA-256
 * (a slow password hash buys nothing for a secret with that much entropy, and every request checks
 * one), looked up by the public id in the key, revoked by name or id. */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Db } from '../db/pool';
import { roleSchema, type Role } from './roles';

/** The key a caller presents: `pk_<id>_<secret>`; the id part is what lists and logs show. */
const KEY_PATTERN = /^pk_(key_[a-z0-9]{12})_([A-Za-z0-9_-]{43})$/;

export interface ApiKeyRecord {
  id: string;
  name: string;
  roles: Role[];
  mintedBy: string;
  createdAt: string;
  revokedAt: string | null;
  revokedBy: string | null;
}

export interface MintedApiKey extends ApiKeyRecord {
  /** The whole credential; shown once, never stored. */
  key: string;
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

type Row = { id: string; name: string; roles: string[]; minted_by: string; created_at: Date; revoked_at: Date | null; revoked_by: string | null };
const toRecord = (r: Row): ApiKeyRecord => ({
  id: r.id, name: r.name, roles: r.roles.map((x) => roleSchema.parse(x)), mintedBy: r.minted_by,
  createdAt: r.created_at.toISOString(), revokedAt: r.revoked_at?.toISOString() ?? null, revokedBy: r.revoked_by,
});

export class ApiKeyNameTaken extends Error {
  override name = 'ApiKeyNameTaken';
}

export async function mintApiKey(db: Db, input: { name: string; roles: Role[]; mintedBy: string }): Promise<MintedApiKey> {
  const roles = [...new Set(input.roles.map((r) => roleSchema.parse(r)))];
  if (roles.length === 0) throw new Error('an API key needs at least one role');
  const id = `key_${randomBytes(6).toString('hex')}`;
  const secret = randomBytes(32).toString('base64url');
  try {
    const { rows } = await db.query<Row>(
      `INSERT INTO api_keys (id, name, roles, secret_sha256, minted_by) VALUES ($1, $2, $3, $4, $5)
       RETURNING id, name, roles, minted_by, created_at, revoked_at, revoked_by`,
      [id, input.name, roles, sha256(secret), input.mintedBy],
    );
    return { ...toRecord(rows[0]!), key: `pk_${id}_${secret}` };
  } catch (err) {
    if ((err as { code?: string }).code === '23505') throw new ApiKeyNameTaken(`a live API key is already named ${input.name}; revoke it first or pick another name`);
    throw err;
  }
}

export async function listApiKeys(db: Db, opts: { includeRevoked?: boolean } = {}): Promise<ApiKeyRecord[]> {
  const { rows } = await db.query<Row>(
    `SELECT id, name, roles, minted_by, created_at, revoked_at, revoked_by FROM api_keys
     ${opts.includeRevoked ? '' : 'WHERE revoked_at IS NULL'} ORDER BY created_at, id`,
  );
  return rows.map(toRecord);
}

/** Revokes the live key with this id or name; null when there is none. */
export async function revokeApiKey(db: Db, idOrName: string, revokedBy: string): Promise<ApiKeyRecord | null> {
  const { rows } = await db.query<Row>(
    `UPDATE api_keys SET revoked_at = now(), revoked_by = $2 WHERE (id = $1 OR name = $1) AND revoked_at IS NULL
     RETURNING id, name, roles, minted_by, created_at, revoked_at, revoked_by`,
    [idOrName, revokedBy],
  );
  return rows[0] ? toRecord(rows[0]) : null;
}

export interface Principal {
  keyId: string;
  name: string;
  roles: Role[];
}

/** The key id a presented key names, whether or not its secret is right (null when malformed):
 * what failed authentications are counted by before any lookup (src/api/rateLimit.ts). */
export function presentedKeyId(presented: string): string | null {
  return KEY_PATTERN.exec(presented.trim())?.[1] ?? null;
}

/** The principal behind a presented key, or null (malformed, unknown, revoked or wrong secret). */
export async function authenticateApiKey(db: Pick<Db, 'query'>, presented: string): Promise<Principal | null> {
  const match = KEY_PATTERN.exec(presented);
  if (!match) return null;
  const [, id, secret] = match as unknown as [string, string, string];
  const { rows } = await db.query<{ name: string; roles: string[]; secret_sha256: string }>(
    'SELECT name, roles, secret_sha256 FROM api_keys WHERE id = $1 AND revoked_at IS NULL', [id]);
  const row = rows[0];
  if (!row) return null;
  const expected = Buffer.from(row.secret_sha256, 'hex');
  const actual = createHash('sha256').update(secret).digest();
  if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) return null;
  return { keyId: id, name: row.name, roles: row.roles.map((r) => roleSchema.parse(r)) };
}

/** Names of live keys minted by `npm run dev` (their secrets sit in .data/ in clear). */
export async function liveDevStackKeys(db: Pick<Db, 'query'>): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>(`SELECT name FROM api_keys WHERE minted_by = $1 AND revoked_at IS NULL ORDER BY name`, [DEV_STACK_MINTER]);
  return rows.map((r) => r.name);
}

export const DEV_STACK_MINTER = 'dev-stack';
