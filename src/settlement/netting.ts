/** Netting a settlement run (pure): each vendor's open offline lines, both directions, become at most
 * one payment. A vendor owed a positive net is paid it once, for all its lines; a vendor whose lines
 * net to zero or less (it owes commission or a clawback back) carries them forward, never a negative
 * payment; a vendor finance cannot pay (no bank details) is left out with its net, its lines open. */
export interface OpenLine { ledgerId: number; vendorId: string; amountPaise: number }

export interface PlannedPayment { vendorId: string; amountPaise: number; members: OpenLine[] }

export type SkipReason = 'net_not_positive' | 'no_bank_details';
export interface SkippedVendor { vendorId: string; netPaise: number; lines: number; reason: SkipReason }

export interface SettlementPlan { payments: PlannedPayment[]; skipped: SkippedVendor[] }

export function planSettlement(lines: readonly OpenLine[], payable: (vendorId: string) => boolean): SettlementPlan {
  const byVendor = new Map<string, OpenLine[]>();
  for (const line of lines) {
    if (!Number.isSafeInteger(line.amountPaise)) throw new RangeError(`ledger line ${line.ledgerId}: amount must be integer paise`);
    const group = byVendor.get(line.vendorId) ?? [];
    group.push(line);
    byVendor.set(line.vendorId, group);
  }
  const plan: SettlementPlan = { payments: [], skipped: [] };
  for (const vendorId of [...byVendor.keys()].sort()) {
    const members = byVendor.get(vendorId)!.sort((a, b) => a.ledgerId - b.ledgerId);
    const netPaise = members.reduce((sum, l) => sum + l.amountPaise, 0);
    if (netPaise <= 0) plan.skipped.push({ vendorId, netPaise, lines: members.length, reason: 'net_not_positive' });
    else if (!payable(vendorId)) plan.skipped.push({ vendorId, netPaise, lines: members.length, reason: 'no_bank_details' });
    else plan.payments.push({ vendorId, amountPaise: netPaise, members });
  }
  return plan;
}
