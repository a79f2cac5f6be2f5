/** Does each vendor's ledger balance tie to what its statement says? (Issue 36: the backfill is
 * checked against today's statement, vendor by vendor, to the paisa.) For each vendor the statement
 * over every day that has a line is read, and three figures are compared:
 *  - received: money that reached the vendor and stayed (transfers settled, splits processed, bank
 *    settlements paid, cash kept at the counter, the employer's direct payment) = the ledger's paid
 *    discharges less what reversals took back;
 *  - in flight: sent or frozen, not yet paid = the ledger's in-flight discharges;
 *  - open: owed and not yet on its way = the ledger's open balance.
 * A difference names the vendor, the figure and both amounts. */
import type { Db } from '../db/pool';
import { addDays, istDateOf } from '../domain/calendar';
import { readVendorStatement } from './readModel';

export interface VendorTie {
  vendorId: string;
  ledger: { receivedPaise: bigint; inFlightPaise: bigint; openPaise: bigint };
  statement: { receivedPaise: bigint; inFlightPaise: bigint; openPaise: bigint; unexplainedPaise: bigint };
}

export interface TieDifference { vendorId: string; figure: 'received' | 'in flight' | 'open' | 'unexplained'; ledgerPaise: bigint; statementPaise: bigint }

/** Pure: where a vendor's ledger and statement disagree. */
export function tieDifferences(t: VendorTie): TieDifference[] {
  const out: TieDifference[] = [];
  const compare = (figure: TieDifference['figure'], ledgerPaise: bigint, statementPaise: bigint) => {
    if (ledgerPaise !== statementPaise) out.push({ vendorId: t.vendorId, figure, ledgerPaise, statementPaise });
  };
  compare('received', t.ledger.receivedPaise, t.statement.receivedPaise);
  compare('in flight', t.ledger.inFlightPaise, t.statement.inFlightPaise);
  compare('open', t.ledger.openPaise, t.statement.openPaise);
  compare('unexplained', 0n, t.statement.unexplainedPaise);
  return out;
}

/** Every vendor with ledger entries or statement lines (or only those named), ledger beside statement. */
export async function readVendorTies(db: Db, now = new Date(), vendorIds?: readonly string[]): Promise<VendorTie[]> {
  const { rows } = await db.query<{ vendor_id: string; paid: string; in_flight: string; open: string; reversed: string; first_day: Date | null }>(
    `SELECT b.vendor_id, b.paid_paise AS paid, b.in_flight_paise AS in_flight, b.open_paise AS open,
            COALESCE((SELECT sum(amount_paise) FROM ledger_obligations o WHERE o.vendor_id = b.vendor_id AND o.cause = 'reversal'), 0) AS reversed,
            LEAST((SELECT min(paid_at) FROM orders WHERE vendor_id = b.vendor_id AND status = 'paid'),
                  (SELECT min(created_at) FROM offline_ledger WHERE vendor_id = b.vendor_id)) AS first_day
       FROM ledger_vendor_balances b WHERE $1::text[] IS NULL OR b.vendor_id = ANY($1) ORDER BY b.vendor_id`, [vendorIds ?? null]);
  const ties: VendorTie[] = [];
  for (const r of rows) {
    if (!r.first_day) continue; // nothing owed, paid or recorded for this vendor
    const period = { from: istDateOf(r.first_day), to: addDays(istDateOf(now), 1) };
    const s = await readVendorStatement(db, r.vendor_id, period, now);
    if (!s) continue;
    const t = s.totals;
    ties.push({
      vendorId: r.vendor_id,
      ledger: { receivedPaise: BigInt(r.paid) - BigInt(r.reversed), inFlightPaise: BigInt(r.in_flight), openPaise: BigInt(r.open) },
      statement: {
        receivedPaise: BigInt(t.transfer.settledPaise + t.split.processedPaise + t.offline.paidPaise + t.cashKeptAtCounterPaise + t.employerDirectPaise),
        inFlightPaise: BigInt(t.transfer.inFlightPaise + t.split.inFlightPaise + t.offline.inBatchPaise),
        openPaise: BigInt(t.transfer.awaitingPaise + t.offline.openPaise),
        unexplainedPaise: BigInt(t.unexplainedPaise),
      },
    });
  }
  return ties;
}
