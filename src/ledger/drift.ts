/** Does the ledger as the rails wrote it still say what their rows say, vendor by vendor? (Issue 36:
 * recon checks it every run; a drift is a critical exception naming the vendor and the amount.) The
 * ledger is derived again from the rails' rows (model.ts) in a read-only snapshot beside what is
 * written, and compared: each vendor's balance (owed, paid, in flight, open) and every obligation and
 * discharge (railAgreement.ts). Nothing is written here. */
import { inTransaction, type Db } from '../db/pool';
import { readRailRows, readRecordedLedger } from './backfill';
import { buildLedger } from './model';
import { railDifferences } from './railAgreement';

export interface VendorBalance { owedPaise: bigint; paidPaise: bigint; inFlightPaise: bigint; openPaise: bigint }
export interface VendorDrift { vendorId: string; written: VendorBalance; derived: VendorBalance; differences: string[] }

interface Owed { vendorId: string; source: string; amountPaise: bigint }
interface Paying { vendorId: string; state: string; pays: string[] }

/** Pure: each vendor's balance from obligations and the discharges paying them. */
export function vendorBalances(obligations: readonly Owed[], discharges: readonly Paying[]): Map<string, VendorBalance> {
  const out = new Map<string, VendorBalance>();
  const of = (vendorId: string) => {
    let b = out.get(vendorId);
    if (!b) out.set(vendorId, (b = { owedPaise: 0n, paidPaise: 0n, inFlightPaise: 0n, openPaise: 0n }));
    return b;
  };
  const amount = new Map(obligations.map((o) => [o.source, o.amountPaise]));
  for (const o of obligations) of(o.vendorId).owedPaise += o.amountPaise;
  for (const d of discharges) {
    const sum = d.pays.reduce((t, s) => t + (amount.get(s) ?? 0n), 0n);
    if (d.state === 'paid') of(d.vendorId).paidPaise += sum;
    else if (d.state === 'in_flight') of(d.vendorId).inFlightPaise += sum;
  }
  for (const b of out.values()) b.openPaise = b.owedPaise - b.paidPaise - b.inFlightPaise;
  return out;
}

/** Pure: the vendors whose written ledger differs from the derived one, with how. */
export function driftsOf(written: { obligations: Owed[]; discharges: Paying[] }, derived: { obligations: Owed[]; discharges: Paying[] },
  differences: ReadonlyArray<{ vendorId: string; text: string }>): VendorDrift[] {
  const w = vendorBalances(written.obligations, written.discharges);
  const d = vendorBalances(derived.obligations, derived.discharges);
  const zero: VendorBalance = { owedPaise: 0n, paidPaise: 0n, inFlightPaise: 0n, openPaise: 0n };
  const vendors = [...new Set([...differences.map((x) => x.vendorId), ...w.keys(), ...d.keys()])].sort();
  return vendors.flatMap((vendorId) => {
    const texts = differences.filter((x) => x.vendorId === vendorId).map((x) => x.text);
    const a = w.get(vendorId) ?? zero; const b = d.get(vendorId) ?? zero;
    const same = a.owedPaise === b.owedPaise && a.paidPaise === b.paidPaise && a.inFlightPaise === b.inFlightPaise;
    return texts.length === 0 && same ? [] : [{ vendorId, written: a, derived: b, differences: texts }];
  });
}

/** Reads both ledgers at one instant (REPEATABLE READ, read only) and says where they drift. */
export async function readLedgerDrift(db: Db): Promise<VendorDrift[]> {
  return inTransaction(db, async (tx) => {
    await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    const derived = buildLedger(await readRailRows(tx));
    const written = await readRecordedLedger(tx);
    return driftsOf(written, derived, railDifferences(written, derived));
  });
}
