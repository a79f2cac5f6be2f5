/** The ledger check a flow test ends with: what the rails wrote is what their rows say, the ledger
 * built from the rails places every row, the database accepts it, and every vendor's balance ties
 * to its statement (src/ledger). */
import type { Db } from '../../src/db/pool';
import { rebuildLedger } from '../../src/ledger/backfill';
import { readVendorTies, tieDifferences } from '../../src/statements/ledgerTie';

export async function expectLedgerTies(db: Db): Promise<void> {
  const built = await rebuildLedger(db);
  expect(built.disagreements).toEqual([]);
  expect(built.unplaced).toEqual([]);
  expect((await readVendorTies(db)).flatMap(tieDifferences)).toEqual([]);
}
