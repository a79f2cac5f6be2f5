/** The upgrade to rails that write the ledger (migration 127): the ledger is rebuilt once from the
 * rails' rows, so every payout in flight finds its transfer's discharge (named by its payout) and
 * every paid order its obligations, and the rails write on from there. Done when recorded
 * (migration 133's ledger_rebuilds), not when 127 was applied: a rebuild that failed or was stopped
 * after the migrations committed runs again at the next migrate or start, until one completes (a
 * rebuild is idempotent). Differences from what the rails wrote are expected here (they wrote
 * nothing yet). Run it before any worker of this build starts. */
import type { Db } from '../db/pool';
import { rebuildLedger, type BackfillResult } from './backfill';

const RAILS_WRITE_LEDGER = 'rails write the ledger (migration 127)';

export async function rebuildLedgerUntilDone(db: Db): Promise<BackfillResult | null> {
  const { rowCount } = await db.query('SELECT 1 FROM ledger_rebuilds WHERE reason = $1', [RAILS_WRITE_LEDGER]);
  if (rowCount) return null;
  const rebuilt = await rebuildLedger(db);
  await db.query('INSERT INTO ledger_rebuilds (reason) VALUES ($1) ON CONFLICT (reason) DO NOTHING', [RAILS_WRITE_LEDGER]);
  return rebuilt;
}
