/** The keys vendors' account numbers are encrypted with at rest: AES-256-GCM, a fresh 96-bit IV per
 * seal, the key's id kept beside each ciphertext so keys rotate (BANK_DETAILS_KEYS lists every key
 * still needed; BANK_DETAILS_ACTIVE_KEY_ID seals). The associated data names the vendor: a
 * ciphertext copied to another vendor's row fails authentication instead of paying the wrong
 * account. Opening is for the bank file and the key rotation only (src/banking/repository.ts,
 * rotation.ts). */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { BankDetailsKey, Config } from '../config/config';

export interface SealedAccountNumber {
  keyId: string;
  iv: Buffer;
  ciphertext: Buffer;
  authTag: Buffer;
}

export interface BankDetailsKeyring {
  readonly activeKeyId: string;
  /** The ids of every key held, active first. */
  readonly keyIds: readonly string[];
  seal(vendorId: string, accountNumber: string): SealedAccountNumber;
  /** Throws AccountNumberUnreadable when the key is not held or the ciphertext does not authenticate. */
  open(vendorId: string, sealed: SealedAccountNumber): string;
}

/** A row that cannot be decrypted: says which vendor and key, never any of the bytes. */
export class AccountNumberUnreadable extends Error {
  override name = 'AccountNumberUnreadable';
  constructor(readonly vendorId: string, readonly keyId: string, readonly why: 'key_not_held' | 'not_authentic') {
    super(why === 'key_not_held'
      ? `the bank details of vendor ${vendorId} are encrypted under key ${keyId}, which BANK_DETAILS_KEYS does not hold`
      : `the bank details of vendor ${vendorId} (key ${keyId}) do not authenticate: altered, or copied from another vendor`);
  }
}

const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;

const associatedData = (vendorId: string): Buffer => Buffer.from(`vendor_bank_details.account_number/v1/${vendorId}`, 'utf8');

export function createKeyring(keys: readonly BankDetailsKey[], activeKeyId: string): BankDetailsKeyring {
  const byId = new Map<string, Buffer>();
  for (const { id, key } of keys) {
    if (key.length !== 32) throw new RangeError(`bank details key ${id} must be 32 bytes`);
    if (byId.has(id)) throw new RangeError(`bank details key ${id} is listed twice`);
    byId.set(id, Buffer.from(key));
  }
  const active = byId.get(activeKeyId);
  if (!active) throw new RangeError(`the active bank details key ${activeKeyId} is not among the keys held`);
  return {
    activeKeyId,
    keyIds: [activeKeyId, ...[...byId.keys()].filter((id) => id !== activeKeyId)],
    seal(vendorId, accountNumber) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv(ALGORITHM, active, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(associatedData(vendorId));
      const ciphertext = Buffer.concat([cipher.update(accountNumber, 'utf8'), cipher.final()]);
      return { keyId: activeKeyId, iv, ciphertext, authTag: cipher.getAuthTag() };
    },
    open(vendorId, sealed) {
      const key = byId.get(sealed.keyId);
      if (!key) throw new AccountNumberUnreadable(vendorId, sealed.keyId, 'key_not_held');
      if (sealed.iv.length !== IV_BYTES || sealed.authTag.length !== TAG_BYTES) throw new AccountNumberUnreadable(vendorId, sealed.keyId, 'not_authentic');
      try {
        const decipher = createDecipheriv(ALGORITHM, key, sealed.iv, { authTagLength: TAG_BYTES });
        decipher.setAAD(associatedData(vendorId));
        decipher.setAuthTag(sealed.authTag);
        return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]).toString('utf8');
      } catch {
        throw new AccountNumberUnreadable(vendorId, sealed.keyId, 'not_authentic');
      }
    },
  };
}

export const keyringFromConfig = (config: Pick<Config, 'BANK_DETAILS_KEYS' | 'BANK_DETAILS_ACTIVE_KEY_ID'>): BankDetailsKeyring =>
  createKeyring(config.BANK_DETAILS_KEYS, config.BANK_DETAILS_ACTIVE_KEY_ID);
