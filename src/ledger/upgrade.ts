/** The upgrade to rails that write the ledger (migration 127): the ledger is rebuilt once from the
 * rails' rows in the same run that applied it, so every payout in flight finds its transfer's
 * discharge (named by its payout) and every paid order its obligations, and the rails write on from
 * there. Differences from what the rails wrote are expected here (they wrote nothing yet). */
import type { Db } from '../db/pool';
import { rebuildLedger, type BackfillResult } from './backfill';

export const RAILS_WRITE_LEDGER_MIGRATION = '127_ledger_written_by_rails.sql';

export async function rebuildLedgerIfRailsJustStarted(db: Db, applied: readonly string[]): Promise<BackfillResult | null> {
  return applied.includes(RAILS_WRITE_LEDGER_MIGRATION) ? rebuildLedger(db) : null;
}
