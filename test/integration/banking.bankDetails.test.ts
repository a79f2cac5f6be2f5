/** Vendor bank details through the admin API (issue 20 item 2), against real PostgreSQL and the
 * in-process API: set by admin, read masked by admin and finance, refused to everyone else; the
 * account number never leaves masked (answers, audit log, the table's own columns) except through
 * readBankDetailsForFile; bad input changes nothing; every change is audited with its actor. */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../src/api/server';
import { AccountNumberUnreadable, keyringFromConfig } from '../../src/banking/keyring';
import { readBankDetailsForFile } from '../../src/banking/repository';
import { loadConfig, type Config } from '../../src/config/config';
import type { Db } from '../../src/db/pool';
import { createVendor } from '../../src/moneyin/referenceData';
import { mintKey, mintRoleKeys, type RoleKeys } from '../support/apiKeys';
import { isolatedPool } from '../support/db';

const ACCOUNT = '50100123456789';
const NEW_ACCOUNT = '918020012345678';
const DETAILS = { accountNumber: ACCOUNT, ifsc: 'hdfc0001234', beneficiaryName: 'Dosa Corner' };
const route = (vendorId: string) => `/v1/admin/vendors/${vendorId}/bank-details`;

describe('vendor bank details (admin API)', () => {
  let db: Db;
  let api: FastifyInstance;
  let base: string;
  let config: Config;
  let keys: RoleKeys & { vendor: { authorization: string } };
  let asAdmin: Record<string, string>;

  beforeAll(async () => {
    ({ db } = await isolatedPool());
    config = loadConfig({ ...process.env, BANK_DETAILS_KEYS: `k_it:${randomBytes(32).toString('base64')}`, BANK_DETAILS_ACTIVE_KEY_ID: 'k_it' });
    for (const id of ['ven_dosa', 'ven_chai', 'ven_idli', 'ven_vada']) await createVendor(db, { id, name: id, linkedAccountId: null });
    keys = { ...(await mintRoleKeys(db)), vendor: await mintKey(db, ['vendor:ven_dosa'], 'counter-dosa') };
    asAdmin = { ...keys.admin, 'x-actor': 'Asha' };
    api = await buildApi({ config, db });
    base = await api.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await api?.close();
    await db?.end();
  });

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are checked field by field
  async function call(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; body: any; text: string }> {
    const res = await fetch(base + path, { method, headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, text };
  }

  /** Every column of both tables, bytea as hex and as text, for plaintext searches and before/after. */
  const tables = async () => ({
    details: (await db.query('SELECT * FROM vendor_bank_details ORDER BY vendor_id')).rows,
    changes: (await db.query('SELECT * FROM vendor_bank_detail_changes ORDER BY id')).rows,
  });
  const rawText = (rows: unknown): string => JSON.stringify(rows, (_k, v: unknown) => {
    if (v && typeof v === 'object' && (v as { type?: string }).type === 'Buffer') {
      const bytes = Buffer.from((v as { data: number[] }).data);
      return `${bytes.toString('hex')} ${bytes.toString('utf8')} ${bytes.toString('latin1')}`;
    }
    return v;
  });

  test('when an admin sets bank details, then 201 with the masked form, the row holds no plaintext, and finance reads the masked form', async () => {
    const set = await call('PUT', route('ven_dosa'), asAdmin, DETAILS);
    expect(set.status).toBe(201);
    expect(set.body.bankDetails).toEqual({
      vendorId: 'ven_dosa', beneficiaryName: 'Dosa Corner', ifsc: 'HDFC0001234', accountMasked: 'XXXXXX6789', keyId: 'k_it',
      createdAt: expect.any(String), createdBy: 'key:test-admin (Asha)', updatedAt: expect.any(String), updatedBy: 'key:test-admin (Asha)',
    });
    expect(set.text).not.toContain(ACCOUNT.slice(0, 10));

    const raw = rawText(await tables());
    expect(raw).not.toContain(ACCOUNT);
    expect(raw).not.toContain(ACCOUNT.slice(0, 8));
    const [row] = (await db.query('SELECT key_id, account_masked, length(account_iv) AS iv, length(account_auth_tag) AS tag FROM vendor_bank_details')).rows;
    expect(row).toEqual({ key_id: 'k_it', account_masked: 'XXXXXX6789', iv: 12, tag: 16 });

    for (const reader of [keys.admin, keys.finance]) {
      const read = await call('GET', route('ven_dosa'), reader);
      expect([read.status, read.body.bankDetails]).toEqual([200, set.body.bankDetails]);
      expect(read.text).not.toContain(ACCOUNT.slice(0, 10));
    }
    // The one reader that decrypts, for the bank file, with the keys from config.
    const forFile = await readBankDetailsForFile(db, keyringFromConfig(config), ['ven_dosa', 'ven_chai']);
    expect([...forFile.entries()]).toEqual([['ven_dosa', { accountNumber: ACCOUNT, ifsc: 'HDFC0001234', beneficiaryName: 'Dosa Corner', updatedAt: set.body.bankDetails.updatedAt }]]);
  });

  test('when the details change, then 200, and the audit log shows set and change with the actor, masked only', async () => {
    const before = (await call('GET', route('ven_dosa'), keys.admin)).body.bankDetails;
    const changed = await call('PUT', route('ven_dosa'), { ...keys.admin, 'x-actor': 'Ravi' }, { accountNumber: NEW_ACCOUNT, ifsc: 'ICIC0000042', beneficiaryName: 'Dosa Corner LLP' });
    expect(changed.status).toBe(200);
    expect(changed.body.bankDetails).toMatchObject({ accountMasked: 'XXXXXX5678', ifsc: 'ICIC0000042', createdBy: 'key:test-admin (Asha)', createdAt: before.createdAt, updatedBy: 'key:test-admin (Ravi)' });
    expect(Date.parse(changed.body.bankDetails.updatedAt)).toBeGreaterThan(Date.parse(before.updatedAt));
    expect((await readBankDetailsForFile(db, keyringFromConfig(config), ['ven_dosa'])).get('ven_dosa')?.accountNumber).toBe(NEW_ACCOUNT);

    const audit = await call('GET', '/ops/audit?limit=50', keys.ops);
    expect(audit.status).toBe(200);
    const entries = (audit.body.entries as Array<{ kind: string }>).filter((e) => e.kind === 'bank_details');
    expect(entries).toEqual([
      { at: expect.any(String), actor: 'key:test-admin (Ravi)', kind: 'bank_details', action: 'change', subject: 'ven_dosa', reason: null, reference: 'XXXXXX5678 ICIC0000042 Dosa Corner LLP (key k_it)' },
      { at: expect.any(String), actor: 'key:test-admin (Asha)', kind: 'bank_details', action: 'set', subject: 'ven_dosa', reason: null, reference: 'XXXXXX6789 HDFC0001234 Dosa Corner (key k_it)' },
    ]);
    const raw = audit.text + rawText(await tables());
    for (const plain of [ACCOUNT, NEW_ACCOUNT]) expect(raw).not.toContain(plain.slice(0, 8));
  });

  test('when the details are invalid, then 400 invalid_bank_details naming each field, the number not echoed, and nothing changes', async () => {
    const before = await tables();
    const bad = await call('PUT', route('ven_dosa'), keys.admin, { accountNumber: '98765-43210-999', ifsc: 'HDFC1001234', beneficiaryName: 'Dosa Corner' });
    expect([bad.status, bad.body.error.code]).toEqual([400, 'invalid_bank_details']);
    expect(bad.body.error.details.fields.map((f: { field: string }) => f.field)).toEqual(['accountNumber', 'ifsc']);
    expect(bad.body.error.message).toMatch(/^accountNumber: .*; ifsc: /);
    expect(bad.text).not.toContain('98765-43210-999');

    const cases = [{ ...DETAILS, beneficiaryName: 'x'.repeat(101) }, { ...DETAILS, upi: 'dosa@okhdfc' }, { ifsc: 'HDFC0001234' }, undefined];
    for (const body of cases) {
      const res = await call('PUT', route('ven_dosa'), keys.admin, body);
      expect([res.status, res.body.error.code]).toEqual([400, 'invalid_bank_details']);
    }
    const firstTime = await call('PUT', route('ven_chai'), keys.admin, { ...DETAILS, ifsc: 'nope' });
    expect(firstTime.body.error.details.fields).toEqual([{ field: 'ifsc', message: expect.stringMatching(/IFSC/) }]);
    expect(await tables()).toEqual(before);
  });

  test('when the vendor is unknown, then 404 vendor_not_found and nothing is written; a known vendor without details reads 404 bank_details_not_set', async () => {
    const before = await tables();
    const put = await call('PUT', route('ven_nobody'), keys.admin, DETAILS);
    expect([put.status, put.body.error.code]).toEqual([404, 'vendor_not_found']);
    expect([(await call('GET', route('ven_nobody'), keys.admin)).body.error.code]).toEqual(['vendor_not_found']);
    const unset = await call('GET', route('ven_idli'), keys.finance);
    expect([unset.status, unset.body.error.code]).toEqual([404, 'bank_details_not_set']);
    expect(await tables()).toEqual(before);
  });

  test('when the caller has no key or a role other than admin (finance: reading only), then 401 or 403 and nothing is written', async () => {
    const before = await tables();
    for (const method of ['PUT', 'GET']) {
      const anonymous = await call(method, route('ven_dosa'), {}, method === 'PUT' ? DETAILS : undefined);
      expect([method, anonymous.status, anonymous.body.error.code]).toEqual([method, 401, 'unauthorized']);
      for (const [role, key] of [['ordering', keys.ordering], ['ops', keys.ops], ['vendor', keys.vendor]] as const) {
        const refused = await call(method, route('ven_dosa'), key, method === 'PUT' ? DETAILS : undefined);
        expect([method, role, refused.status, refused.body.error.code]).toEqual([method, role, 403, 'forbidden']);
      }
    }
    const financeWrites = await call('PUT', route('ven_dosa'), keys.finance, DETAILS);
    expect([financeWrites.status, financeWrites.body.error.message]).toEqual([403, expect.stringContaining('needs the role admin')]);
    expect(await tables()).toEqual(before);
  });

  test("when one vendor's encrypted account is copied onto another vendor's row, then the bank file reader refuses it, naming the vendor", async () => {
    expect((await call('PUT', route('ven_vada'), keys.admin, { ...DETAILS, accountNumber: '333322221111' })).status).toBe(201);
    await db.query(`UPDATE vendor_bank_details v SET account_ciphertext = d.account_ciphertext, account_iv = d.account_iv, account_auth_tag = d.account_auth_tag
                      FROM vendor_bank_details d WHERE v.vendor_id = 'ven_vada' AND d.vendor_id = 'ven_dosa'`);
    const reading = readBankDetailsForFile(db, keyringFromConfig(config), ['ven_vada']);
    await expect(reading).rejects.toBeInstanceOf(AccountNumberUnreadable);
    await expect(readBankDetailsForFile(db, keyringFromConfig(config), ['ven_vada'])).rejects.toThrow(/vendor ven_vada .*do not authenticate/);
  });

  test('when anyone tries to rewrite the change log or put an unmasked number in it, then the database refuses', async () => {
    await db.query(`INSERT INTO vendor_bank_detail_changes (vendor_id, action, actor, beneficiary_name, ifsc, account_masked, key_id) VALUES ('ven_idli', 'set', 'key:test', 'Idli', 'HDFC0001234', 'XXXXXX1111', 'k_it')`);
    await expect(db.query(`INSERT INTO vendor_bank_detail_changes (vendor_id, action, actor, beneficiary_name, ifsc, account_masked, key_id) VALUES ('ven_idli', 'set', 'key:test', 'Idli', 'HDFC0001234', '123456781111', 'k_it')`)).rejects.toThrow(/account_masked/);
    await expect(db.query(`UPDATE vendor_bank_detail_changes SET actor = 'someone else'`)).rejects.toThrow(/append-only/);
    await expect(db.query('DELETE FROM vendor_bank_detail_changes')).rejects.toThrow(/append-only/);
  });

  test('when the openapi document is read, then both routes are there with their roles and the body schema', async () => {
    const doc = (await call('GET', '/openapi.json', {})).body;
    const path = doc.paths['/v1/admin/vendors/{vendorId}/bank-details'];
    expect([path.put['x-roles'], path.get['x-roles']]).toEqual([['admin'], ['admin', 'finance']]);
    expect(path.put.requestBody.content['application/json'].schema.required).toEqual(['accountNumber', 'ifsc', 'beneficiaryName']);
  });
});
