import { seedDemoReferenceData } from '../../src/cli/seed';
import type { Db } from '../../src/db/pool';
import { isolatedPool } from '../support/db';

describe('demo seed', () => {
  let db: Db;
  beforeAll(async () => { ({ db } = await isolatedPool()); });
  afterAll(async () => { await db?.end(); });

  const counts = async () => (await db.query(`SELECT
      (SELECT count(*)::int FROM employers) AS employers, (SELECT count(*)::int FROM vendors) AS vendors,
      (SELECT count(*)::int FROM employer_vendor) AS pairs, (SELECT count(*)::int FROM wallets) AS wallets,
      (SELECT count(*)::int FROM vendor_bank_details) AS bank_details, (SELECT count(*)::int FROM vendor_bank_detail_changes) AS bank_detail_changes`)).rows[0];

  test('when the seed runs twice, then the reference data exists once and covers every settlement mode and a vendor without a linked account', async () => {
    const accounts: [string, string, string] = ['acc_DemoDosa000001', 'acc_DemoBiryani001', 'acc_DemoSalad00001'];
    await seedDemoReferenceData(db, accounts);
    const first = await counts();
    await seedDemoReferenceData(db, accounts);
    expect(await counts()).toEqual(first);
    expect(first).toEqual({ employers: 2, vendors: 4, pairs: 5, wallets: 2, bank_details: 4, bank_detail_changes: 4 });
    const modes = await db.query('SELECT DISTINCT settlement_mode FROM employer_vendor ORDER BY 1');
    expect(modes.rows.map((r) => r.settlement_mode)).toEqual(['corporate_direct', 'manual_offline', 'platform_transfer']);
    expect((await db.query('SELECT id FROM vendors WHERE linked_account_id IS NULL')).rows).toEqual([{ id: 'ven_chai_stall' }]);
  });

  test('when a linked account id is malformed, then the seed refuses before writing', async () => {
    await expect(seedDemoReferenceData(db, ['acc_short', 'acc_DemoBiryani001', 'acc_DemoSalad00001'])).rejects.toThrow();
  });
});
