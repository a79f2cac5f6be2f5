/** The checker across rails (issues 19 and 20): each vendor is judged by the provider's ledger (live
 * transfers) and the offline ledger's settlement together — every order's net paid once, by one rail.
 * An order paid by a live transfer or a processed split is never also in a paid settlement line; an
 * order owed offline is, after finance's last round, paid by exactly one paid line, or still open
 * because its vendor was carried forward; each paid line is what finance recorded and what its
 * members add up to. Pure: it reads the verdicts and ledgers the order checker already has. */
import type { DbLedger, OrderVerdict } from './checker';
import type { OfflineSettlement } from './offline';

/** Routes whose line finance pays by hand (corporate_direct is the employer's to pay). */
const PAID_BY_HAND: ReadonlySet<string> = new Set(['cash', 'manual_offline', 'no_linked_account', 'below_transfer_minimum']);

export interface RailResult { violations: string[]; paidOfflinePaise: number; paidOfflineOrders: number; carriedForwardOrders: number }

export function checkRails(verdicts: readonly OrderVerdict[], db: DbLedger, settlement: OfflineSettlement): RailResult {
  const violations: string[] = [];
  const carried = new Set(settlement.carriedForward);
  const membersOf = new Map<string, DbLedger['settlementMembers']>();
  for (const m of db.settlementMembers) membersOf.set(m.orderId, [...(membersOf.get(m.orderId) ?? []), m]);
  let paidOfflinePaise = 0;
  let paidOfflineOrders = 0;
  let carriedForwardOrders = 0;

  for (const v of verdicts) {
    const orderId = v.history.orderId;
    if (!orderId) continue;
    const name = `${orderId} (${v.history.planned.kind})`;
    const members = membersOf.get(orderId) ?? [];
    const paidBy = members.filter((m) => m.status === 'paid');
    const ledger = db.ledger.get(orderId);
    const payout = db.payouts.get(orderId);
    const split = db.splits.get(orderId);
    if (members.length > 1) violations.push(`${name}: its offline line is in ${members.length} settlement lines at once (${members.map((m) => m.reference).join(', ')})`);
    const byTransfer = v.liveTransfers > 0 || split?.status === 'processed';
    if (paidBy.length > 0 && byTransfer) violations.push(`${name}: paid twice — by transfer and by settlement line ${paidBy[0]!.reference}`);
    if (paidBy.length > 0 && ledger && paidBy[0]!.amountPaise !== ledger.amountPaise) violations.push(`${name}: settlement line ${paidBy[0]!.reference} pays ${paidBy[0]!.amountPaise} of a ${ledger.amountPaise} line`);
    const owedByHand = ledger !== undefined && (PAID_BY_HAND.has(ledger.route) || payout?.status === 'offline' || split?.status === 'failed');
    if (members.length > 0 && !owedByHand) violations.push(`${name}: a line no one owes offline (route ${ledger?.route ?? 'none'}, payout ${payout?.status ?? 'none'}) is in settlement line ${members[0]!.reference}`);
    if (!owedByHand) continue;
    if (paidBy.length === 1) {
      paidOfflineOrders += 1;
      paidOfflinePaise += paidBy[0]!.amountPaise;
    } else if (db.openLedger.has(orderId) && carried.has(db.orders.get(orderId)?.vendorId ?? '')) {
      carriedForwardOrders += 1;
    } else if (db.openLedger.has(orderId)) {
      violations.push(`${name}: owed offline (${ledger!.amountPaise} paise) after finance's last settlement round, and its vendor was not carried forward`);
    } else {
      violations.push(`${name}: owed offline (${ledger!.route}) but neither paid by a settlement line nor in the open ledger`);
    }
  }

  // What a split's reversal took back is owed offline on a line of its own: paid by one settlement
  // line after finance's last round, or still open because its vendor was carried forward.
  for (const v of verdicts) {
    const orderId = v.history.orderId;
    for (const line of (orderId ? db.reversalLines.get(orderId) : undefined) ?? []) {
      const name = `${orderId} (${v.history.planned.kind}): the reversal ${line.reversalId}`;
      if (line.paidBy) {
        paidOfflineOrders += 1;
        paidOfflinePaise += line.owedPaise;
      } else if (!(line.open && carried.has(db.orders.get(orderId!)?.vendorId ?? ''))) {
        violations.push(`${name} is owed offline (${line.owedPaise} paise) after finance's last round, ${line.open ? 'and its vendor was not carried forward' : 'but is neither paid nor open'}`);
      }
    }
  }

  // Each paid line: recorded by finance with its UTR, and worth exactly its members.
  const recorded = new Map(settlement.paid.map((p) => [p.reference, p]));
  for (const line of db.paidSettlementLines) {
    const ours = recorded.get(line.reference);
    if (!ours) violations.push(`settlement line ${line.reference} is paid, but finance never recorded it`);
    else if (ours.utr !== line.utr || ours.amountPaise !== line.amountPaise) violations.push(`settlement line ${line.reference}: paid ${line.amountPaise} under ${line.utr}, finance recorded ${ours.amountPaise} under ${ours.utr}`);
    if (line.membersPaise !== line.amountPaise) violations.push(`settlement line ${line.reference} pays ${line.amountPaise}, its offline lines add up to ${line.membersPaise}`);
  }
  for (const ref of settlement.failed) {
    if (db.paidSettlementLines.some((l) => l.reference === ref)) violations.push(`settlement line ${ref} was recorded failed, yet it is paid`);
  }
  // A batch cancelled after its bank file was downloaded (confirmed never submitted): its lines are
  // never paid, and what they stood for is paid by one later line (the per-order checks above).
  for (const ref of settlement.cancelled ?? []) {
    if (db.paidSettlementLines.some((l) => l.reference === ref)) violations.push(`settlement line ${ref} was in a batch cancelled after its bank file was downloaded, yet it is paid`);
  }
  return { violations, paidOfflinePaise, paidOfflineOrders, carriedForwardOrders };
}

