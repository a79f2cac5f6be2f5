/** What a settlement run would find now: each vendor's open offline lines that no batch holds, netted,
 * and what the run's netting rule (planSettlement) would do with them — so finance sees who will be
 * paid and who carried forward before starting a run. */
import type { Db } from '../db/pool';
import { planSettlement, type SkipReason } from './netting';

export interface OwedVendor { vendorId: string; name: string; lines: number; netPaise: number; hasBankDetails: boolean; oldestAt: string; outcome: 'paid' | SkipReason }

export async function owedOfflineByVendor(db: Pick<Db, 'query'>): Promise<OwedVendor[]> {
  const { rows } = await db.query<{ vendor_id: string; name: string; lines: string; net: string; has_bank: boolean; oldest: Date }>(
    `SELECT o.vendor_id, v.name, count(*) AS lines, sum(o.amount_paise) AS net, min(o.created_at) AS oldest,
            EXISTS (SELECT 1 FROM vendor_bank_details d WHERE d.vendor_id = o.vendor_id) AS has_bank
       FROM offline_ledger_open o JOIN vendors v ON v.id = o.vendor_id
      WHERE o.batch_line_id IS NULL
      GROUP BY o.vendor_id, v.name ORDER BY v.name, o.vendor_id LIMIT 500`,
  );
  // One netted line per vendor is enough for the plan: it decides on each vendor's sum.
  const banked = new Set(rows.filter((r) => r.has_bank).map((r) => r.vendor_id));
  const plan = planSettlement(rows.map((r, i) => ({ ledgerId: i, vendorId: r.vendor_id, amountPaise: Number(r.net) })), (v) => banked.has(v));
  const skipped = new Map(plan.skipped.map((s) => [s.vendorId, s.reason]));
  return rows.map((r) => ({
    vendorId: r.vendor_id, name: r.name, lines: Number(r.lines), netPaise: Number(r.net), hasBankDetails: r.has_bank, oldestAt: r.oldest.toISOString(),
    outcome: skipped.get(r.vendor_id) ?? 'paid',
  }));
}
