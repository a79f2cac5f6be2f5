/** Bank details' encryption keys (issue 20): the knobs, how an entry parses, and the checks on them
 * (the active key among the keys; production never on the embedded development key or a weak one). */
import { z } from 'zod';
import { bankKeyWeakness } from './secretPolicy';

/** The embedded development key for bank details (issue 20): published here, so production refuses
 * it (devBankKeyProblems). Its id says what it is wherever a row names it. */
export const DEV_BANK_DETAILS_KEY_ID = 'dev-not-secret';
const DEV_BANK_DETAILS_KEY = Buffer.from('payouts-dev-bank-key-NOT-SECRET!', 'utf8');
const BANK_KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;

export interface BankDetailsKey { id: string; key: Buffer }

/** One `id:base64` entry of BANK_DETAILS_KEYS; the material is never echoed in a message. */
const bankDetailsKeySchema = z.string().transform((entry, ctx): BankDetailsKey => {
  const colon = entry.indexOf(':');
  const id = colon < 0 ? '' : entry.slice(0, colon).trim();
  const material = colon < 0 ? '' : entry.slice(colon + 1).trim();
  if (!BANK_KEY_ID.test(id)) {
    ctx.addIssue({ code: 'custom', message: 'each key is id:base64, the id 1–32 letters, digits, _ or -' });
    return z.NEVER;
  }
  const key = Buffer.from(material, 'base64');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(material) || key.toString('base64') !== material || key.length !== 32) {
    ctx.addIssue({ code: 'custom', message: `key ${id} must be exactly 32 bytes in base64 (e.g. openssl rand -base64 32)` });
    return z.NEVER;
  }
  return { id, key };
});

export const bankDetailsKeysSchema = z.string().transform((s) => s.split(',').map((v) => v.trim()).filter(Boolean))
  .pipe(z.array(bankDetailsKeySchema).min(1, 'at least one key (id:base64)'))
  .refine((keys) => new Set(keys.map((k) => k.id)).size === keys.length, 'each key id appears once');

export const bankDetailsKnobs = {
  /** Bank details: the AES-256-GCM keys vendors' account numbers are encrypted with, comma-separated
   * `id:base64` (each exactly 32 bytes). Keep an old key listed until `npm run bank-details:rotate`
   * has re-encrypted its rows. Default: the embedded development key (production refuses it). */
  BANK_DETAILS_KEYS: bankDetailsKeysSchema.default([{ id: DEV_BANK_DETAILS_KEY_ID, key: DEV_BANK_DETAILS_KEY }]),
  /** The key new and rotated rows are encrypted with; one of the ids in BANK_DETAILS_KEYS. */
  BANK_DETAILS_ACTIVE_KEY_ID: z.string().trim().regex(BANK_KEY_ID, 'a key id: 1–32 letters, digits, _ or -').default(DEV_BANK_DETAILS_KEY_ID),
};

/** The active key must be one of the keys (in every environment: otherwise nothing can be written). */
export function bankKeyProblems(c: { BANK_DETAILS_KEYS: readonly BankDetailsKey[]; BANK_DETAILS_ACTIVE_KEY_ID: string }): string[] {
  if (c.BANK_DETAILS_KEYS.some((k) => k.id === c.BANK_DETAILS_ACTIVE_KEY_ID)) return [];
  return [`  - BANK_DETAILS_ACTIVE_KEY_ID (${c.BANK_DETAILS_ACTIVE_KEY_ID}) is not one of the ids in BANK_DETAILS_KEYS (${c.BANK_DETAILS_KEYS.map((k) => k.id).join(', ')})`];
}
/** Production encrypts account numbers with its own keys: both keys set, never the embedded
 * development key (by id or material), and none of low entropy. Reads the environment as given (unset is not the default),
 * so the problems are listed even beside keys that do not parse. */
export function devBankKeyProblems(raw: Record<string, string | undefined>): string[] {
  if (raw.NODE_ENV !== 'production') return [];
  const problems: string[] = [];
  const keys = bankDetailsKeysSchema.safeParse(raw.BANK_DETAILS_KEYS ?? '');
  if (!raw.BANK_DETAILS_KEYS) problems.push('  - BANK_DETAILS_KEYS: not set; production needs its own key (id:base64 of 32 random bytes, e.g. openssl rand -base64 32)');
  else if (keys.success && keys.data.some((k) => k.id === DEV_BANK_DETAILS_KEY_ID || k.key.equals(DEV_BANK_DETAILS_KEY))) {
    problems.push(`  - BANK_DETAILS_KEYS: holds the embedded development key (${DEV_BANK_DETAILS_KEY_ID}); production needs its own`);
  }
  // As weak webhook secrets are refused (issue 41): a zero or patterned key seals nothing.
  for (const { id, key } of keys.success ? keys.data : []) {
    const why = id === DEV_BANK_DETAILS_KEY_ID ? null : bankKeyWeakness(key);
    if (why) problems.push(`  - BANK_DETAILS_KEYS: key ${id} has ${why}`);
  }
  if (!raw.BANK_DETAILS_ACTIVE_KEY_ID) problems.push('  - BANK_DETAILS_ACTIVE_KEY_ID: not set; name the key in BANK_DETAILS_KEYS that new rows are encrypted with');
  return problems;
}
