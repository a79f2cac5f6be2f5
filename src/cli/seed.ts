/** `npm run seed -- acc_… acc_… acc_…`: idempotent demo reference data — employers, vendors and
 * pairs covering every settlement mode, and a vendor without a linked account. The linked account
 * ids come from the sandbox (`control.createLinkedAccount`) or from Razorpay; pass three. Running it
 * again changes nothing (pair terms are reset to the demo values). Wallets are funded by top-ups. */
import { z } from 'zod';
import type { BankDetails } from '../banking/details';
import { keyringFromConfig, type BankDetailsKeyring } from '../banking/keyring';
import { readMaskedBankDetails, setBankDetails } from '../banking/repository';
import { loadConfig } from '../config/config';
import type { Db } from '../db/pool';
import { createPool } from '../db/pool';
import type { SettlementMode } from '../domain/routing';
import { logger } from '../logger';
import { createEmployer, createVendor, upsertPairTerms } from '../moneyin/referenceData';

const linkedAccountsSchema = z.tuple([
  z.string().regex(/^acc_[A-Za-z0-9]{14}$/),
  z.string().regex(/^acc_[A-Za-z0-9]{14}$/),
  z.string().regex(/^acc_[A-Za-z0-9]{14}$/),
]);

export interface DemoReferenceData {
  employers: string[];
  vendors: Array<{ id: string; linkedAccountId: string | null; bankDetails: BankDetails }>;
  pairs: Array<{ employerId: string; vendorId: string; settlementMode: SettlementMode; commissionBps: number }>;
}

export function demoReferenceData(linkedAccountIds: [string, string, string]): DemoReferenceData {
  const [dosa, biryani, salad] = linkedAccountIds;
  return {
    employers: ['emp_acme', 'emp_globex'],
    vendors: [
      // Bank details (made up) so a settlement run can pay any of them by bank file.
      { id: 'ven_dosa_corner', linkedAccountId: dosa, bankDetails: { accountNumber: '50100000000101', ifsc: 'HDFC0000101', beneficiaryName: 'Dosa Corner' } },
      { id: 'ven_biryani_house', linkedAccountId: biryani, bankDetails: { accountNumber: '31200000000102', ifsc: 'SBIN0000102', beneficiaryName: 'Biryani House' } },
      { id: 'ven_salad_bar', linkedAccountId: salad, bankDetails: { accountNumber: '00400000000103', ifsc: 'ICIC0000103', beneficiaryName: 'Salad Bar' } },
      { id: 'ven_chai_stall', linkedAccountId: null, bankDetails: { accountNumber: '91800000000104', ifsc: 'UTIB0000104', beneficiaryName: 'Chai Stall' } }, // paid offline: no linked account
    ],
    pairs: [
      { employerId: 'emp_acme', vendorId: 'ven_dosa_corner', settlementMode: 'platform_transfer', commissionBps: 1_900 },
      { employerId: 'emp_acme', vendorId: 'ven_biryani_house', settlementMode: 'platform_transfer', commissionBps: 1_500 },
      { employerId: 'emp_acme', vendorId: 'ven_chai_stall', settlementMode: 'platform_transfer', commissionBps: 1_000 },
      { employerId: 'emp_globex', vendorId: 'ven_dosa_corner', settlementMode: 'corporate_direct', commissionBps: 1_200 },
      { employerId: 'emp_globex', vendorId: 'ven_salad_bar', settlementMode: 'manual_offline', commissionBps: 1_800 },
    ],
  };
}

const NAMES: Record<string, string> = {
  emp_acme: 'Acme Technologies', emp_globex: 'Globex India', ven_dosa_corner: 'Dosa Corner', ven_biryani_house: 'Biryani House',
  ven_salad_bar: 'Salad Bar', ven_chai_stall: 'Chai Stall',
};

/** Bank details are set only where a vendor has none: a rerun never overwrites what someone entered. */
export async function seedDemoReferenceData(db: Db, linkedAccountIds: [string, string, string], keyring: BankDetailsKeyring = keyringFromConfig(loadConfig())): Promise<DemoReferenceData> {
  const data = demoReferenceData(linkedAccountsSchema.parse(linkedAccountIds));
  for (const id of data.employers) await createEmployer(db, { id, name: NAMES[id] ?? id });
  for (const v of data.vendors) await createVendor(db, { id: v.id, name: NAMES[v.id] ?? v.id, linkedAccountId: v.linkedAccountId });
  const withDetails = await readMaskedBankDetails(db, data.vendors.map((v) => v.id));
  for (const v of data.vendors) if (!withDetails.has(v.id)) await setBankDetails(db, keyring, { vendorId: v.id, details: v.bankDetails, actor: 'seed' });
  for (const pair of data.pairs) await upsertPairTerms(db, pair);
  return data;
}

async function main(): Promise<void> {
  const config = loadConfig();
  if (!config.DATABASE_URL) throw new Error('DATABASE_URL is required');
  const accounts = linkedAccountsSchema.safeParse(process.argv.slice(2));
  if (!accounts.success) throw new Error('usage: npm run seed -- acc_<14> acc_<14> acc_<14> (three linked account ids, e.g. from the sandbox)');
  const db = createPool(config.DATABASE_URL, 2);
  try {
    const data = await seedDemoReferenceData(db, accounts.data, keyringFromConfig(config));
    logger.info({ employers: data.employers.length, vendors: data.vendors.length, pairs: data.pairs.length }, 'demo reference data seeded');
  } finally {
    await db.end();
  }
}

if (require.main === module) {
  main().catch((err) => {
    logger.fatal({ err }, 'seed failed');
    process.exit(1);
  });
}
