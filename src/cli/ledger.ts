/** `npm run ledger [-- --json]`: builds the ledger from today's rail tables (src/ledger/backfill.ts:
 * one transaction, the database's constraints checked on all of it), says where it differs from what
 * the rails wrote as they moved, and ties each vendor's balance to
 * its statement (src/statements/ledgerTie.ts). Talks to PostgreSQL directly (DATABASE_URL). Exit
 * codes: 0 every vendor ties, 1 a difference, a row the model cannot place or a failure (a constraint
 * the rails' rows break is one: the rebuild is refused whole), 2 bad input. */
import { formatRupees } from '../domain/money';
import { rebuildLedger } from '../ledger/backfill';
import { readVendorTies, tieDifferences } from '../statements/ledgerTie';
import { runJsonReportCli } from './jsonReportCli';

runJsonReportCli('ledger', 'the database whose ledger to build', async (db, { json, print }) => {
  if (!json) print('building the ledger from the rails (one transaction)…');
  const started = Date.now();
  const built = await rebuildLedger(db);
  const ties = await readVendorTies(db);
  const differences = ties.flatMap(tieDifferences);
  if (json) {
    print(JSON.stringify({ ...built, vendors: ties.length, differences }, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
  } else {
    print(`${built.obligations} obligations, ${built.discharges} discharges (${built.items} items) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    for (const u of built.unplaced) print(`  not placed: ${u}`);
    print(built.disagreements.length === 0 ? 'what the rails wrote is what their rows say' : `${built.disagreements.length} difference(s) between what the rails wrote and what their rows say:`);
    for (const d of built.disagreements) print(`  ${d}`);
    print(`${ties.length} vendors checked against their statements: ${differences.length === 0 ? 'every one ties to the paisa' : `${differences.length} difference(s)`}`);
    for (const d of differences) print(`  ${d.vendorId} ${d.figure}: ledger ${formatRupees(Number(d.ledgerPaise))}, statement ${formatRupees(Number(d.statementPaise))}`);
  }
  return built.unplaced.length === 0 && built.disagreements.length === 0 && differences.length === 0 ? 0 : 1;
});
