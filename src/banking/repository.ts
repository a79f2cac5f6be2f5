/** Vendor bank details in PostgreSQL (vendor_bank_details, and the append-only
 * vendor_bank_detail_changes). Everything read here is masked, except readBankDetailsForFile: the one
 * reader that decrypts, for the settlement bank file. */
import { AppError } from '../appError';
import { inTransaction, type Db, type Tx } from '../db/pool';
import { maskAccountNumber, type BankDetails } from './details';
import type { BankDetailsKeyring, SealedAccountNumber } from './keyring';

type Queryable = Db | Tx;

export interface MaskedBankDetails {
  vendorId: string;
  beneficiaryName: string;
  ifsc: string;
  /** `XXXXXX` and the last four digits. */
  accountMasked: string;
  keyId: string;
  createdAt: string;
  createdBy: string;
  /** When the details last changed (a key rotation does not count). */
  updatedAt: string;
  updatedBy: string;
}

export interface BankDetailsForFile {
  accountNumber: string;
  ifsc: string;
  beneficiaryName: string;
  /** As MaskedBankDetails.updatedAt: a batch frozen before this was frozen with other details. */
  updatedAt: string;
}

interface Row {
  vendor_id: string;
  beneficiary_name: string;
  ifsc: string;
  account_ciphertext: Buffer;
  account_iv: Buffer;
  account_auth_tag: Buffer;
  key_id: string;
  account_masked: string;
  created_at: Date;
  created_by: string;
  updated_at: Date;
  updated_by: string;
}

const masked = (r: Row): MaskedBankDetails => ({
  vendorId: r.vendor_id, beneficiaryName: r.beneficiary_name, ifsc: r.ifsc, accountMasked: r.account_masked, keyId: r.key_id,
  createdAt: r.created_at.toISOString(), createdBy: r.created_by, updatedAt: r.updated_at.toISOString(), updatedBy: r.updated_by,
});

export const sealedOf = (r: Pick<Row, 'key_id' | 'account_iv' | 'account_ciphertext' | 'account_auth_tag'>): SealedAccountNumber => ({
  keyId: r.key_id, iv: r.account_iv, ciphertext: r.account_ciphertext, authTag: r.account_auth_tag,
});

/** Sets or replaces a vendor's bank details and records the change with its actor, in one
 * transaction; 404 vendor_not_found for an unknown vendor (nothing written). */
export async function setBankDetails(
  db: Db,
  keyring: BankDetailsKeyring,
  input: { vendorId: string; details: BankDetails; actor: string },
): Promise<{ created: boolean; bankDetails: MaskedBankDetails }> {
  const { vendorId, details, actor } = input;
  const sealed = keyring.seal(vendorId, details.accountNumber);
  const accountMasked = maskAccountNumber(details.accountNumber);
  return inTransaction(db, async (tx) => {
    const vendor = await tx.query('SELECT 1 FROM vendors WHERE id = $1 FOR KEY SHARE', [vendorId]);
    if (vendor.rowCount === 0) throw new AppError(404, 'vendor_not_found', `vendor ${vendorId} does not exist`);
    const { rows } = await tx.query<Row & { created: boolean }>(
      `INSERT INTO vendor_bank_details AS b (vendor_id, beneficiary_name, ifsc, account_ciphertext, account_iv, account_auth_tag, key_id, account_masked, created_by, updated_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)
       ON CONFLICT (vendor_id) DO UPDATE SET
         beneficiary_name = EXCLUDED.beneficiary_name, ifsc = EXCLUDED.ifsc,
         account_ciphertext = EXCLUDED.account_ciphertext, account_iv = EXCLUDED.account_iv, account_auth_tag = EXCLUDED.account_auth_tag,
         key_id = EXCLUDED.key_id, account_masked = EXCLUDED.account_masked,
         updated_at = now(), updated_by = EXCLUDED.updated_by, key_rotated_at = NULL
       RETURNING b.*, (xmax = 0) AS created`,
      [vendorId, details.beneficiaryName, details.ifsc, sealed.ciphertext, sealed.iv, sealed.authTag, sealed.keyId, accountMasked, actor],
    );
    const row = rows[0]!;
    await recordChange(tx, { vendorId, action: row.created ? 'set' : 'change', actor, beneficiaryName: row.beneficiary_name, ifsc: row.ifsc, accountMasked, keyId: sealed.keyId });
    return { created: row.created, bankDetails: masked(row) };
  });
}

/** The masked details of each vendor that has them (a vendor without is absent from the map). */
export async function readMaskedBankDetails(q: Queryable, vendorIds: readonly string[]): Promise<Map<string, MaskedBankDetails>> {
  const { rows } = await q.query<Row>('SELECT * FROM vendor_bank_details WHERE vendor_id = ANY($1::text[]) ORDER BY vendor_id', [vendorIds]);
  return new Map(rows.map((r) => [r.vendor_id, masked(r)]));
}

/** The plaintext details to write into the bank bulk-payment file, for each vendor that has them; the
 * only reader that decrypts. A row that does not decrypt throws AccountNumberUnreadable (naming the
 * vendor and key): a file must not be written with a row missing or wrong. */
export async function readBankDetailsForFile(q: Queryable, keyring: BankDetailsKeyring, vendorIds: readonly string[]): Promise<Map<string, BankDetailsForFile>> {
  const { rows } = await q.query<Row>('SELECT * FROM vendor_bank_details WHERE vendor_id = ANY($1::text[]) ORDER BY vendor_id', [vendorIds]);
  return new Map(rows.map((r) => [r.vendor_id, {
    accountNumber: keyring.open(r.vendor_id, sealedOf(r)),
    ifsc: r.ifsc,
    beneficiaryName: r.beneficiary_name,
    updatedAt: r.updated_at.toISOString(),
  }]));
}

export interface BankDetailChange {
  vendorId: string;
  action: 'set' | 'change' | 'rotate_key';
  actor: string;
  beneficiaryName: string;
  ifsc: string;
  accountMasked: string;
  keyId: string;
}

export async function recordChange(tx: Tx, c: BankDetailChange): Promise<void> {
  await tx.query(
    `INSERT INTO vendor_bank_detail_changes (vendor_id, action, actor, beneficiary_name, ifsc, account_masked, key_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [c.vendorId, c.action, c.actor, c.beneficiaryName, c.ifsc, c.accountMasked, c.keyId],
  );
}

export interface VendorBankDetailsEntry {
  vendorId: string;
  vendorName: string;
  /** Paid by Route transfers when set; bank details pay what is owed offline. */
  linkedAccountId: string | null;
  details: MaskedBankDetails | null;
}

/** Every vendor (or those whose id or name contains `search`), by id, with its masked bank details
 * or none; and how many match, how many of them have details. */
export async function listVendorBankDetails(q: Queryable, filter: { search?: string; limit: number }): Promise<{ vendors: VendorBankDetailsEntry[]; matching: number; withDetails: number }> {
  const where = `($1::text IS NULL OR v.id ILIKE '%' || $1 || '%' OR v.name ILIKE '%' || $1 || '%')`;
  const [list, counts] = await Promise.all([
    q.query<Row & { id: string; name: string; linked_account_id: string | null }>(
      `SELECT v.id, v.name, v.linked_account_id, d.* FROM vendors v LEFT JOIN vendor_bank_details d ON d.vendor_id = v.id WHERE ${where} ORDER BY v.id LIMIT $2`,
      [filter.search ?? null, filter.limit]),
    q.query<{ matching: number; with_details: number }>(
      `SELECT count(*)::int AS matching, count(d.vendor_id)::int AS with_details FROM vendors v LEFT JOIN vendor_bank_details d ON d.vendor_id = v.id WHERE ${where}`,
      [filter.search ?? null]),
  ]);
  return {
    vendors: list.rows.map((r) => ({ vendorId: r.id, vendorName: r.name, linkedAccountId: r.linked_account_id, details: r.vendor_id ? masked(r) : null })),
    matching: counts.rows[0]!.matching, withDetails: counts.rows[0]!.with_details,
  };
}

export interface BankDetailChangeEntry extends BankDetailChange { at: string }

/** A vendor's bank detail changes, newest first (masked: the change log holds no account number). */
export async function bankDetailChanges(q: Queryable, vendorId: string): Promise<BankDetailChangeEntry[]> {
  const { rows } = await q.query<{ vendor_id: string; action: BankDetailChange['action']; actor: string; beneficiary_name: string; ifsc: string; account_masked: string; key_id: string; created_at: Date }>(
    'SELECT vendor_id, action, actor, beneficiary_name, ifsc, account_masked, key_id, created_at FROM vendor_bank_detail_changes WHERE vendor_id = $1 ORDER BY id DESC LIMIT 100', [vendorId]);
  return rows.map((r) => ({ vendorId: r.vendor_id, action: r.action, actor: r.actor, beneficiaryName: r.beneficiary_name, ifsc: r.ifsc, accountMasked: r.account_masked, keyId: r.key_id, at: r.created_at.toISOString() }));
}
