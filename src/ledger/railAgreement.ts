/** Whether what the rails wrote is what the rails' rows say (issue 36, step 2), pure. Every rail
 * writes the ledger as it moves (orderObligations.ts, payoutDischarges.ts, splitDischarges.ts,
 * offlineLines.ts, settlementLines.ts); a rebuild derives it from their rows (model.ts). The two must
 * be the same ledger: every obligation and discharge, field by field, with the same obligations paid. A difference is a rail
 * that forgot a write (or the model a rule), named, never smoothed over. */
import type { Discharge, Ledger, Obligation } from './model';

export type RecordedObligation = Required<Pick<Obligation, 'source' | 'vendorId' | 'cause' | 'amountPaise' | 'rail'>>
  & { orderId: string | null; batchId: string | null; payoutId: string | null; reason: string | null; actor: string | null };
export type RecordedDischarge = Pick<Discharge, 'vendorId' | 'kind' | 'instrument' | 'providerRef' | 'amountPaise' | 'state' | 'pays'> & { payoutId: string | null };


const obligationFace = (o: RecordedObligation | Obligation) => JSON.stringify({
  vendor: o.vendorId, cause: o.cause, amount: o.amountPaise.toString(), rail: o.rail, order: o.orderId ?? null, batch: o.batchId ?? null,
  payout: o.payoutId ?? null, reason: o.cause === 'adjustment' ? o.reason ?? null : null, actor: o.cause === 'adjustment' ? o.actor ?? null : null,
});
const dischargeFace = (d: RecordedDischarge | Discharge) => JSON.stringify({
  vendor: d.vendorId, ref: d.providerRef ?? null, amount: d.amountPaise.toString(), state: d.state, payout: d.payoutId ?? null, pays: [...d.pays].sort(),
});

/** Each difference between the rails' own ledger and the one built from their rows, in words. */
export function railDisagreements(recorded: { obligations: RecordedObligation[]; discharges: RecordedDischarge[] }, built: Ledger): string[] {
  return railDifferences(recorded, built).map((d) => d.text);
}

/** The same, each with the vendor it is about. */
export function railDifferences(recorded: { obligations: RecordedObligation[]; discharges: RecordedDischarge[] }, built: Ledger): Array<{ vendorId: string; text: string }> {
  const out: Array<{ vendorId: string; text: string }> = [];
  compare('obligation', new Map(recorded.obligations.map((o) => [o.source, [o.vendorId, obligationFace(o)] as const])),
    new Map(built.obligations.map((o) => [o.source, [o.vendorId, obligationFace(o)] as const])), out);
  compare('discharge', new Map(recorded.discharges.map((d) => [`${d.kind} ${d.instrument}`, [d.vendorId, dischargeFace(d)] as const])),
    new Map(built.discharges.map((d) => [`${d.kind} ${d.instrument}`, [d.vendorId, dischargeFace(d)] as const])), out);
  return out;
}

type Faces = Map<string, readonly [vendorId: string, face: string]>;

function compare(what: string, recorded: Faces, built: Faces, out: Array<{ vendorId: string; text: string }>): void {
  for (const [key, [vendorId, face]] of built) {
    const written = recorded.get(key)?.[1];
    if (written === undefined) out.push({ vendorId, text: `${what} ${key} follows from the rails' rows, but no rail wrote it: ${face}` });
    else if (written !== face) out.push({ vendorId, text: `${what} ${key} was written as ${written}, the rails' rows say ${face}` });
  }
  for (const [key, [vendorId, face]] of recorded) if (!built.has(key)) out.push({ vendorId, text: `${what} ${key} was written by a rail, but the rails' rows do not show it: ${face}` });
}
