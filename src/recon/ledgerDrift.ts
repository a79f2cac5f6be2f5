/** Recon's ledger check (issue 36), every run: the ledger as the rails wrote it against the ledger
 * their rows say (src/ledger/drift.ts). A vendor whose two differ is a critical `ledger-drift`
 * exception naming the vendor and the amount (what is open on the written ledger against the
 * derived one), with each difference in its details; one that ties again is resolved by the run.
 * Raised like an event's exception (raised_by 'event', the run as the event), so the window's match,
 * which never finds it, does not clear it. */
import { inTransaction, type Db } from '../db/pool';
import { formatRupees } from '../domain/money';
import { readLedgerDrift, type VendorDrift } from '../ledger/drift';
import { logger } from '../logger';
import { raiseEventException, resolveEventException } from './eventExceptions';
import { draft } from './reconcile';

const MAX_DIFFERENCES = 20;
const keyOf = (vendorId: string) => `ledger-drift|${vendorId}`;

export async function judgeLedger(db: Db, runId: string, asOf: string): Promise<{ drifting: number; resolved: number }> {
  const drifts = await readLedgerDrift(db);
  return inTransaction(db, async (tx) => {
    for (const d of drifts) await raiseEventException(tx, driftException(d, asOf), runId);
    const { rows: standing } = await tx.query<{ key: string }>(`SELECT key FROM recon_exceptions WHERE reason = 'ledger-drift' AND status <> 'resolved'`);
    const drifting = new Set(drifts.map((d) => keyOf(d.vendorId)));
    let resolved = 0;
    for (const { key } of standing) {
      if (!drifting.has(key) && (await resolveEventException(tx, key, 'recon', `run ${runId}: the ledger as written says what the rails' rows say again`))) resolved += 1;
    }
    if (drifts.length > 0) {
      logger.error({ runId, vendors: drifts.map((d) => ({ vendorId: d.vendorId, differences: d.differences.slice(0, MAX_DIFFERENCES) })) }, 'ledger drift: the ledger as written differs from the rails\' rows');
    }
    return { drifting: drifts.length, resolved };
  });
}

function driftException(d: VendorDrift, asOf: string) {
  const drift = d.written.openPaise - d.derived.openPaise;
  const base = draft('ledger-drift', 'mismatched', d.vendorId, asOf, {
    entityId: d.vendorId, expectedPaise: Number(d.derived.openPaise), actualPaise: Number(d.written.openPaise),
    details: {
      vendorId: d.vendorId, driftPaise: Number(drift),
      written: balanceJson(d.written), derived: balanceJson(d.derived),
      differences: d.differences.slice(0, MAX_DIFFERENCES), moreDifferences: Math.max(0, d.differences.length - MAX_DIFFERENCES),
      summary: `vendor ${d.vendorId}: the ledger as written says ${formatRupees(Number(d.written.openPaise))} open, the rails' rows ${formatRupees(Number(d.derived.openPaise))}`,
    },
  });
  return base;
}

const balanceJson = (b: VendorDrift['written']) => ({ owedPaise: Number(b.owedPaise), paidPaise: Number(b.paidPaise), inFlightPaise: Number(b.inFlightPaise), openPaise: Number(b.openPaise) });
