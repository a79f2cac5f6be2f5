/** The ledger's model (docs/ledger.md), pure: obligations (what a vendor is owed, or owes back, with
 * the rail assigned to pay it) and discharges (each instrument that paid them, or in flight may still
 * pay them), and the one builder that derives both from today's rail rows (backfill.ts reads them).
 * No I/O.
 *
 * The rules, the same for every rail:
 *  - an order's net is one obligation (a cash order's is two: the customer's share kept at the
 *    counter, and the rest owed offline); a refund made outside the app after the money left is a
 *    negative obligation (clawback); a reversal that takes money back is a new obligation for exactly
 *    what it took (owed again); ops' cancel is an adjustment that nets the open obligation to nothing;
 *  - a discharge pays whole obligations: the first transfer of a payout pays its order's net (a
 *    batch's pays its members' nets), and the next transfer of the same payout, sent after a
 *    reversal, pays what that reversal made owed again; a settlement line pays its members' lines, and
 *    a line of an order whose net a reversed transfer already paid pays that reversal's obligation;
 *  - each obligation has at most one active discharge: the builder says so where today's rows would
 *    break it (`conflicts`), and the database refuses it (migrations/125_ledger.sql). */

export type ObligationCause = 'order_net' | 'cash_kept' | 'clawback' | 'reversal' | 'adjustment';
export type Rail = 'transfer' | 'batch_transfer' | 'split' | 'settlement_run' | 'employer_direct' | 'cash_kept';
export type DischargeKind = 'order_transfer' | 'batch_transfer' | 'split' | 'settlement_line' | 'external_transfer' | 'cash_kept' | 'employer_direct' | 'adjustment';
export type DischargeState = 'in_flight' | 'paid';
/** Discharges by a Razorpay transfer of ours to the vendor's linked account: an order's, or a batch's. */
export const PROVIDER_TRANSFER_KINDS = ['order_transfer', 'batch_transfer'] as const satisfies readonly DischargeKind[];

export interface Obligation {
  /** What it was written from, unique (ledger_obligations.source). */
  source: string;
  vendorId: string; employerId: string | null; orderId: string | null; batchId: string | null;
  cause: ObligationCause; amountPaise: bigint; rail: Rail;
  reason?: string; actor?: string;
  /** The payout it was written for: a reversal of its transfer, ops' cancel of it. */
  payoutId?: string;
}

export interface Discharge {
  vendorId: string; kind: DischargeKind; instrument: string; providerRef: string | null;
  amountPaise: bigint; state: DischargeState;
  /** The sources of the obligations it pays, each whole. */
  pays: string[];
  /** The payout whose transfer (or whose ops' decision) it is. */
  payoutId?: string;
}

// ---------------------------------------------------------------------------------------------
// Today's rail rows, as backfill.ts reads them.

export interface OrderLineRow {
  ledgerId: string; orderId: string; vendorId: string; employerId: string; amountPaise: bigint; route: string;
  paymentMethod: string; customerSharePaise: bigint;
}
/** An offline-ledger line that is not an order's own: a clawback (`takenBack` once ops cancelled its
 * payout), a clawback returned to the vendor, or a split reversal owed again. */
export interface OtherLineRow {
  ledgerId: string; vendorId: string; employerId: string; orderId: string | null; amountPaise: bigint; route: string;
  takenBack: { actor: string; reason: string } | null;
  /** For a returned clawback: who took the clawback back, and why. */
  returnedBy?: { actor: string; reason: string } | null;
}
export interface PayoutRow {
  id: string; orderId: string | null; batchId: string | null; vendorId: string; status: string; amountPaise: bigint;
  providerTransferId: string | null; externalReference: string | null; idempotencyKey: string;
  cancelledBy: { actor: string; reason: string } | null;
  /** Transfers of this payout that failed after the provider accepted them (they paid nothing; the
   * row may still name the last one). */
  failedTransferIds?: string[];
}
export interface BatchMemberRow { orderId: string; batchId: string; amountPaise: bigint }
export interface SplitRow { orderId: string; vendorId: string; amountPaise: bigint; status: string; providerTransferId: string | null }
export interface EmployerDirectRow { orderId: string; vendorId: string }
export interface ReversalRow {
  id: string; transferId: string; payoutId: string | null; amountPaise: bigint; transferAmountPaise: bigint; owedPaise: bigint;
}
export interface SettlementLineRow {
  id: string; vendorId: string; reference: string; amountPaise: bigint; status: string; utr: string | null;
  memberLedgerIds: string[];
}

export interface RailRows {
  orderLines: OrderLineRow[]; otherLines: OtherLineRow[]; payouts: PayoutRow[]; members: BatchMemberRow[];
  splits: SplitRow[]; employerDirect: EmployerDirectRow[]; reversals: ReversalRow[]; settlementLines: SettlementLineRow[];
}

export interface Ledger {
  obligations: Obligation[];
  discharges: Discharge[];
  /** Rows today's tables hold that the model cannot place (each one a finding, never dropped silently). */
  unplaced: string[];
}

const IN_FLIGHT_PAYOUT = new Set(['processing', 'accepted']);
/** What an offline-ledger line of its own is owed for. */
const OTHER_LINE_CAUSE: Partial<Record<string, ObligationCause>> = { refund_clawback: 'clawback', transfer_reversal: 'reversal', clawback_returned: 'adjustment' };
const orderSource = (orderId: string) => `order:${orderId}`;

/** Builds the ledger from today's rail rows. */
export function buildLedger(rows: RailRows): Ledger {
  const obligations = new Map<string, Obligation>();
  const discharges: Discharge[] = [];
  const unplaced: string[] = [];
  const held = new Set<string>(); // obligation sources an instrument already pays
  const owe = (o: Obligation) => { if (o.amountPaise !== 0n) obligations.set(o.source, o); };
  const pay = (d: Omit<Discharge, 'amountPaise'> & { amountPaise?: bigint }) => {
    const pays = d.pays.filter((s) => obligations.has(s));
    if (pays.length === 0) return;
    const sum = pays.reduce((t, s) => t + obligations.get(s)!.amountPaise, 0n);
    const amountPaise = d.amountPaise ?? sum;
    // Not written, and said: the database would refuse either (one active discharge; amount = items).
    const twice = pays.filter((s) => held.has(s));
    if (twice.length > 0) { unplaced.push(`${d.kind} ${d.instrument} would pay ${twice.join(', ')}, which another instrument already pays`); return; }
    if (amountPaise !== sum) { unplaced.push(`${d.kind} ${d.instrument} is ${amountPaise} paise, what it pays sums to ${sum}`); return; }
    for (const s of pays) held.add(s);
    discharges.push({ ...d, pays, amountPaise });
  };

  const payoutOfOrder = new Map(rows.payouts.filter((p) => p.orderId).map((p) => [p.orderId!, p]));
  const payoutOfBatch = new Map(rows.payouts.filter((p) => p.batchId).map((p) => [p.batchId!, p]));
  const batchOfOrder = new Map(rows.members.map((m) => [m.orderId, m.batchId]));
  const membersOf = groupBy(rows.members, (m) => m.batchId);
  const splitOf = new Map(rows.splits.map((s) => [s.orderId, s]));
  const employerDirect = new Set(rows.employerDirect.map((e) => e.orderId));
  const reversalsOf = groupBy(rows.reversals.filter((r) => r.payoutId), (r) => r.payoutId!);

  /** The payout that pays an order: its own, or its batch's once the batch has one. */
  const carrierOf = (orderId: string): PayoutRow | undefined => {
    const batchId = batchOfOrder.get(orderId);
    return (batchId && payoutOfBatch.get(batchId)) || payoutOfOrder.get(orderId);
  };

  // Obligations: each order's net by its route, a cash order's share kept at the counter.
  for (const line of rows.orderLines) {
    const own = payoutOfOrder.get(line.orderId);
    const split = splitOf.get(line.orderId);
    const rail: Rail = employerDirect.has(line.orderId) ? 'employer_direct'
      : split && split.status !== 'failed' ? 'split'
        : own && (own.status === 'offline' || own.status === 'rerouted') ? 'settlement_run'
          : own && batchOfOrder.has(line.orderId) ? 'batch_transfer'
            : own ? 'transfer' : 'settlement_run';
    owe({ source: orderSource(line.orderId), vendorId: line.vendorId, employerId: line.employerId, orderId: line.orderId, batchId: null, cause: 'order_net', amountPaise: line.amountPaise, rail });
    if (line.route === 'cash' && line.customerSharePaise > 0n) {
      owe({ source: `cash:${line.orderId}`, vendorId: line.vendorId, employerId: line.employerId, orderId: line.orderId, batchId: null, cause: 'cash_kept', amountPaise: line.customerSharePaise, rail: 'cash_kept' });
    }
  }
  // Clawbacks and split reversals owed again: lines of their own, paid by settlement runs.
  const otherSource = new Map<string, string>();
  for (const line of rows.otherLines) {
    const cause = OTHER_LINE_CAUSE[line.route];
    if (!cause) { unplaced.push(`offline-ledger line ${line.ledgerId} (${line.route}) has no obligation cause`); continue; }
    const source = `line:${line.ledgerId}`;
    otherSource.set(line.ledgerId, source);
    const by = line.returnedBy ?? { actor: 'unknown', reason: '' };
    const adjusted = cause === 'adjustment' ? { reason: `a clawback returned after a paid settlement netted it: ${by.reason}`, actor: by.actor } : {};
    owe({ source, vendorId: line.vendorId, employerId: line.employerId, orderId: line.orderId, batchId: null, cause, amountPaise: line.amountPaise, rail: 'settlement_run', ...adjusted });
  }

  // Payout transfers, in the order they were sent: the first pays the nets, each later one what the
  // reversal of the one before made owed again.
  const owedAgain = new Map<string, string[]>(); // payout id -> reversal obligations still to pay, oldest first
  for (const payout of rows.payouts) {
    // A batch member's own row sends nothing (it takes its batch's status; the batch's payout row
    // carries the transfer that pays it). One that holds a transfer of its own is a second
    // instrument for the same net, and is placed so that the double is named.
    const failed = new Set(payout.failedTransferIds ?? []);
    const named = payout.providerTransferId && !failed.has(payout.providerTransferId) ? payout.providerTransferId : null;
    if (payout.orderId && batchOfOrder.has(payout.orderId) && !named && !payout.externalReference) continue;
    const members = payout.batchId ? (membersOf.get(payout.batchId) ?? []) : [];
    const nets = payout.batchId ? members.map((m) => orderSource(m.orderId)) : [orderSource(payout.orderId!)];
    const reversed = groupBy(reversalsOf.get(payout.id) ?? [], (r) => r.transferId);
    let due = nets;
    const kind: DischargeKind = payout.batchId ? 'batch_transfer' : 'order_transfer';
    for (const [transferId, reversals] of reversed) {
      pay({ vendorId: payout.vendorId, kind, instrument: transferId, providerRef: transferId, amountPaise: reversals[0]!.transferAmountPaise, state: 'paid', pays: due, payoutId: payout.id });
      due = oweReversals(transferId, reversals.filter((x) => x.owedPaise > 0n), payout, members, owe);
    }
    owedAgain.set(payout.id, due);
    const current = named && !reversed.has(named) ? named : null;
    if (payout.status === 'settled' && !current && payout.externalReference) {
      pay({ vendorId: payout.vendorId, kind: 'external_transfer', instrument: `payout:${payout.id}:${payout.idempotencyKey}`, providerRef: payout.externalReference, state: 'paid', pays: due, payoutId: payout.id });
      owedAgain.set(payout.id, []);
    } else if (payout.status === 'settled' || IN_FLIGHT_PAYOUT.has(payout.status)) {
      const state: DischargeState = payout.status === 'settled' ? 'paid' : 'in_flight';
      // A request with no answer yet is a live instrument too: named by the key it went out under.
      pay({ vendorId: payout.vendorId, kind, instrument: current ?? `key:${payout.idempotencyKey}`, providerRef: current, state, pays: due, payoutId: payout.id });
      owedAgain.set(payout.id, []);
    }
  }

  // Route splits: expected (may still pay), processed or reversed later (paid).
  for (const split of rows.splits) {
    if (split.status === 'failed') continue;
    pay({ vendorId: split.vendorId, kind: 'split', instrument: split.providerTransferId ?? `split:${split.orderId}`, providerRef: split.providerTransferId,
      state: split.status === 'expected' ? 'in_flight' : 'paid', pays: [orderSource(split.orderId)] });
  }

  // What is still owed on an order: its net, or what reversals of the transfer that paid it made owed again.
  const stillOwedOn = (orderId: string): string[] => {
    const carrier = carrierOf(orderId);
    const again = carrier ? owedAgain.get(carrier.id) : undefined;
    if (!held.has(orderSource(orderId)) || !again) return [orderSource(orderId)];
    return again.filter((s) => obligations.get(s)?.orderId === orderId || (carrier?.batchId && obligations.get(s)?.batchId === carrier.batchId));
  };

  // Settlement lines: frozen in an open batch (may still pay), or paid with the bank's UTR.
  const orderOfLine = new Map(rows.orderLines.map((l) => [l.ledgerId, l.orderId]));
  for (const line of rows.settlementLines) {
    if (line.status !== 'open' && line.status !== 'paid') continue;
    const pays = line.memberLedgerIds.flatMap((id) => {
      const orderId = orderOfLine.get(id);
      if (orderId) return stillOwedOn(orderId);
      const other = otherSource.get(id);
      return other ? [other] : [];
    });
    pay({ vendorId: line.vendorId, kind: 'settlement_line', instrument: line.reference, providerRef: line.utr, amountPaise: line.amountPaise,
      state: line.status === 'paid' ? 'paid' : 'in_flight', pays: [...new Set(pays)] });
  }

  // Paid outside our instruments: the employer directly, the customer at the counter.
  for (const e of rows.employerDirect) pay({ vendorId: e.vendorId, kind: 'employer_direct', instrument: e.orderId, providerRef: null, state: 'paid', pays: [orderSource(e.orderId)] });
  for (const line of rows.orderLines) {
    if (obligations.has(`cash:${line.orderId}`)) pay({ vendorId: line.vendorId, kind: 'cash_kept', instrument: line.orderId, providerRef: null, state: 'paid', pays: [`cash:${line.orderId}`] });
  }

  // Ops cancelled a payout: the vendor is not owed what is still open on it; an adjustment says so,
  // with their reason and name, and nets it to nothing.
  for (const payout of rows.payouts) {
    // A batch member takes its batch's cancel: the batch's payout row carries ops' decision.
    if (payout.status !== 'cancelled' || payout.batchId || batchOfOrder.has(payout.orderId!)) continue;
    cancel(payout, stillOwedOn(payout.orderId!));
  }
  for (const payout of rows.payouts) {
    if (payout.status !== 'cancelled' || !payout.batchId) continue;
    cancel(payout, (membersOf.get(payout.batchId) ?? []).flatMap((m) => stillOwedOn(m.orderId)));
  }
  // A clawback ops took back that no paid line netted: not owed back, by their adjustment.
  for (const line of rows.otherLines) {
    const source = `line:${line.ledgerId}`;
    if (!line.takenBack || held.has(source) || !obligations.has(source)) continue;
    const adjustment = `taken-back:${line.ledgerId}`;
    owe({ source: adjustment, vendorId: line.vendorId, employerId: line.employerId, orderId: line.orderId, batchId: null, cause: 'adjustment', amountPaise: -line.amountPaise, rail: 'settlement_run', reason: line.takenBack.reason, actor: line.takenBack.actor });
    pay({ vendorId: line.vendorId, kind: 'adjustment', instrument: adjustment, providerRef: null, state: 'paid', pays: [source, adjustment] });
  }
  function cancel(payout: PayoutRow, open: string[]): void {
    const pays = [...new Set(open)].filter((s) => obligations.has(s) && !held.has(s));
    if (pays.length === 0) return;
    const netted = pays.reduce((t, s) => t + obligations.get(s)!.amountPaise, 0n);
    const source = `cancel:${payout.id}`;
    const by = payout.cancelledBy ?? { actor: 'unknown (no review action recorded)', reason: 'payout cancelled' };
    const first = obligations.get(pays[0]!)!;
    owe({ source, vendorId: payout.vendorId, employerId: first.employerId, orderId: payout.orderId, batchId: payout.batchId, cause: 'adjustment', amountPaise: -netted, rail: first.rail, reason: by.reason, actor: by.actor, payoutId: payout.id });
    pay({ vendorId: payout.vendorId, kind: 'adjustment', instrument: source, providerRef: null, state: 'paid', pays: [...pays, source], payoutId: payout.id });
  }

  return { obligations: [...obligations.values()], discharges, unplaced };
}

/** The reversals of a payout's transfer owe again exactly what they took: for a batch's transfer
 * reversed whole (by one reversal or several), each member's net again, so each member's line can be
 * paid on its own; for one reversed in part, each reversal's amount, on the batch (or the order).
 * Returns the new obligations' sources. */
function oweReversals(transferId: string, reversals: ReversalRow[], payout: PayoutRow, members: BatchMemberRow[], owe: (o: Obligation) => void): string[] {
  const base = { vendorId: payout.vendorId, employerId: null, cause: 'reversal' as const, payoutId: payout.id, rail: (payout.status === 'offline' || payout.status === 'rerouted' ? 'settlement_run' : payout.batchId ? 'batch_transfer' : 'transfer') as Rail };
  const owedInAll = reversals.reduce((t, r) => t + r.owedPaise, 0n);
  if (payout.batchId && members.length > 0 && reversals.length > 0 && owedInAll === reversals[0]!.transferAmountPaise) {
    return members.map((m) => {
      const source = `reversal:${transferId}:${m.orderId}`;
      owe({ ...base, source, orderId: m.orderId, batchId: null, amountPaise: m.amountPaise });
      return source;
    });
  }
  return reversals.map((r) => {
    const source = `reversal:${r.id}`;
    owe({ ...base, source, orderId: payout.orderId, batchId: payout.batchId, amountPaise: r.owedPaise });
    return source;
  });
}

function groupBy<T, K>(items: readonly T[], key: (t: T) => K): Map<K, T[]> {
  const out = new Map<K, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item); else out.set(k, [item]);
  }
  return out;
}
