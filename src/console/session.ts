/** Console sessions: sign in with an API key, get a random 256-bit token in an HttpOnly cookie
 * (stored only as its SHA-256), bound to the key's id. Each request re-reads the key, so a revoked
 * key ends its sessions at once. CSRF: the token in each form is an HMAC of the session token, keyed
 * by nothing the page can see — it needs no second cookie, no server secret shared between API
 * processes, and it dies with the session (@fastify/csrf-protection would add a cookie or a
 * session store for the same guarantee). */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Db } from '../db/pool';
import { authenticateApiKey, type Principal } from '../auth/apiKeys';
import { roleSchema } from '../auth/roles';

export const SESSION_COOKIE = 'payouts_console';
export const SESSION_HOURS = 8;

// One cookie with fixed attributes, read and written here: @fastify/cookie loads its parser with a
// dynamic import() that jest's CommonJS runtime cannot run, and a token of [A-Za-z0-9_-] needs no
// encoding.
/** The session token from a Cookie header, if any. */
export function sessionCookie(header: string | undefined): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === SESSION_COOKIE) return value.join('=');
  }
  return undefined;
}

/** Set-Cookie for the session (an empty token with max age 0 clears it). */
export function sessionSetCookie(token: string, opts: { secure: boolean; maxAgeSeconds: number }): string {
  return [`${SESSION_COOKIE}=${token}`, 'Path=/console', 'HttpOnly', 'SameSite=Strict', `Max-Age=${opts.maxAgeSeconds}`, ...(opts.secure ? ['Secure'] : [])].join('; ');
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

export interface ConsoleSession {
  principal: Principal;
  person: string | null;
  /** The cookie's token; kept in memory for the request only, to derive the CSRF token. */
  token: string;
}

/** A new session for a presented API key, or null when the key is malformed, unknown or revoked. */
export async function signIn(db: Pick<Db, 'query'>, presentedKey: string, person: string | null): Promise<{ token: string; principal: Principal } | null> {
  const principal = await authenticateApiKey(db, presentedKey.trim());
  if (!principal) return null;
  const token = randomBytes(32).toString('base64url');
  await db.query(
    `INSERT INTO console_sessions (token_sha256, key_id, person, expires_at) VALUES ($1, $2, $3, now() + make_interval(hours => $4))`,
    [sha256(token), principal.keyId, person, SESSION_HOURS],
  );
  return { token, principal };
}

/** The live session behind a cookie token; a session whose key was revoked is ended here. */
export async function readSession(db: Pick<Db, 'query'>, token: string | undefined): Promise<ConsoleSession | null> {
  if (!token || !/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
  const { rows } = await db.query<{ key_id: string; person: string | null; name: string | null; roles: string[] | null }>(
    `SELECT s.key_id, s.person, k.name, k.roles FROM console_sessions s
     LEFT JOIN api_keys k ON k.id = s.key_id AND k.revoked_at IS NULL
     WHERE s.token_sha256 = $1 AND s.revoked_at IS NULL AND s.expires_at > now()`,
    [sha256(token)],
  );
  const row = rows[0];
  if (!row) return null;
  if (!row.name || !row.roles) {
    await endSession(db, token);
    return null;
  }
  return { principal: { keyId: row.key_id, name: row.name, roles: row.roles.map((r) => roleSchema.parse(r)) }, person: row.person, token };
}

export async function endSession(db: Pick<Db, 'query'>, token: string): Promise<void> {
  await db.query('UPDATE console_sessions SET revoked_at = now() WHERE token_sha256 = $1 AND revoked_at IS NULL', [sha256(token)]);
}

export const csrfToken = (session: Pick<ConsoleSession, 'token'>): string => createHmac('sha256', session.token).update('console-csrf').digest('base64url');

export function csrfMatches(session: Pick<ConsoleSession, 'token'>, presented: unknown): boolean {
  if (typeof presented !== 'string') return false;
  const expected = Buffer.from(csrfToken(session));
  const actual = Buffer.from(presented);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
