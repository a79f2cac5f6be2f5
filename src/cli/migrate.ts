/** `npm run migrate`: applies pending migrations to DATABASE_URL. */
import { loadConfig } from '../config/config';
import { migrate } from '../db/migrate';
import { createPool } from '../db/pool';
import { rebuildLedgerUntilDone } from '../ledger/upgrade';
import { logger } from '../logger';

async function main(): Promise<void> {
  const config = loadConfig();
  if (!config.DATABASE_URL) throw new Error('DATABASE_URL is required (npm run dev migrates its embedded database itself)');
  const db = createPool(config.DATABASE_URL, 1);
  try {
    const applied = await migrate(db);
    logger.info({ applied }, applied.length ? 'migrations applied' : 'database already up to date');
    const rebuilt = await rebuildLedgerUntilDone(db);
    if (rebuilt) logger.info({ obligations: rebuilt.obligations, discharges: rebuilt.discharges, unplaced: rebuilt.unplaced }, 'ledger rebuilt from the rails once: they write it from now on');
  } finally {
    await db.end();
  }
}

main().catch((err) => {
  logger.fatal({ err }, 'migration failed');
  process.exit(1);
});
