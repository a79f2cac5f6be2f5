/** Key rotation: re-encrypts every row still under an older key with the active key, in batches, each
 * batch one transaction holding its rows' locks (a concurrent change waits, then seals with the active
 * key itself). The details, and so updated_at, stay as they were; each row gets a rotate_key change
 * with the actor. Rows that do not decrypt are reported and left as they are; a rerun rotates only
 * what is left. */
import { inTransaction, type Db } from '../db/pool';
import { AccountNumberUnreadable, type BankDetailsKeyring } from './keyring';
import { recordChange, sealedOf } from './repository';

export interface RotationProgress { done: number; total: number }

export interface RotationResult {
  activeKeyId: string;
  /** Rows found under another key when the rotation started, by key id. */
  before: Record<string, number>;
  rotated: number;
  failed: Array<{ vendorId: string; keyId: string; reason: string }>;
}

export async function rotateBankDetailsKeys(
  db: Db,
  keyring: BankDetailsKeyring,
  opts: { actor: string; batchSize?: number; onProgress?: (p: RotationProgress) => void },
): Promise<RotationResult> {
  const active = keyring.activeKeyId;
  const batchSize = opts.batchSize ?? 100;
  const { [active]: _underActive, ...before } = await rowsByKey(db);
  const total = Object.values(before).reduce((sum, n) => sum + n, 0);
  const result: RotationResult = { activeKeyId: active, before, rotated: 0, failed: [] };
  let after = '';
  for (;;) {
    const last = await inTransaction(db, async (tx) => {
      const { rows } = await tx.query<{ vendor_id: string; key_id: string; account_iv: Buffer; account_ciphertext: Buffer; account_auth_tag: Buffer; beneficiary_name: string; ifsc: string; account_masked: string }>(
        `SELECT vendor_id, key_id, account_iv, account_ciphertext, account_auth_tag, beneficiary_name, ifsc, account_masked
           FROM vendor_bank_details WHERE key_id <> $1 AND vendor_id > $2 ORDER BY vendor_id LIMIT $3 FOR UPDATE`,
        [active, after, batchSize],
      );
      for (const row of rows) {
        let accountNumber: string;
        try {
          accountNumber = keyring.open(row.vendor_id, sealedOf(row));
        } catch (err) {
          if (!(err instanceof AccountNumberUnreadable)) throw err;
          result.failed.push({ vendorId: row.vendor_id, keyId: row.key_id, reason: err.message });
          continue;
        }
        const sealed = keyring.seal(row.vendor_id, accountNumber);
        await tx.query(
          `UPDATE vendor_bank_details SET account_ciphertext = $2, account_iv = $3, account_auth_tag = $4, key_id = $5, key_rotated_at = now()
            WHERE vendor_id = $1`,
          [row.vendor_id, sealed.ciphertext, sealed.iv, sealed.authTag, sealed.keyId],
        );
        await recordChange(tx, { vendorId: row.vendor_id, action: 'rotate_key', actor: opts.actor, beneficiaryName: row.beneficiary_name, ifsc: row.ifsc, accountMasked: row.account_masked, keyId: sealed.keyId });
        result.rotated += 1;
      }
      return rows.at(-1)?.vendor_id ?? null;
    });
    if (last === null) break;
    after = last;
    opts.onProgress?.({ done: result.rotated + result.failed.length, total: Math.max(total, result.rotated + result.failed.length) });
  }
  return result;
}

/** How many rows each key still encrypts (what an operator checks before dropping an old key). */
export async function rowsByKey(db: Db): Promise<Record<string, number>> {
  const { rows } = await db.query<{ key_id: string; n: number }>('SELECT key_id, count(*)::int AS n FROM vendor_bank_details GROUP BY key_id ORDER BY key_id');
  return Object.fromEntries(rows.map((r) => [r.key_id, r.n]));
}
