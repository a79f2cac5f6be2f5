/** Per-order judgements the order checker (checker.ts) delegates: a batched order (paid by its
 * batch's one transfer), the batch scenarios of issue 36 (a batch's transfer reversed and then
 * retried or paid offline; a Dashboard refund before or after the batch paid), an order of the pair
 * that switches schedule, a split's reversal owed, and a Dashboard refund as our rows recorded it. */
import type { RzpTransfer } from '../../src/gateway/types';
import { STUCK_PAYOUT, type DbLedger, type OrderVerdict, type ProviderLedger } from './checker';
import type { OrderHistory } from './workload';

export interface OrderAt { orderId: string; batchId: string | null; account: string | null; live: RzpTransfer[]; netPaise: number }

/** An order of a pair on a schedule: in exactly one batch (the database's key), its own payout settled
 * by the batch's, and the batch paid by exactly one live transfer (counted by the caller) of exactly the
 * sum of its members' nets, to the vendor's account, the one our batch payout holds. */
export function checkBatched(v: OrderVerdict, db: DbLedger, o: OrderAt): void {
  v.expectedTransfers = 1;
  const payout = db.payouts.get(o.orderId);
  if (!payout) v.violations.push('no payout row');
  else if (payout.status !== 'settled') {
    if (payout.status === 'batched' || STUCK_PAYOUT.has(payout.status)) v.stuck = true;
    v.parked = payout.status === 'parked' || payout.status === 'review';
    v.violations.push(`payout is ${payout.status}${payout.lastCode ? ` (${payout.lastCode})` : ''}, planned settled by its batch`);
  }
  if (payout && payout.amountPaise !== o.netPaise) v.disagreements.push(`payout of ${payout.amountPaise} ≠ vendor net ${o.netPaise}`);
  if (!o.batchId) {
    v.violations.push('in no batch');
    return;
  }
  const batch = db.batches.get(o.batchId);
  if (!batch?.payout) {
    v.stuck = true;
    v.violations.push(`its batch ${o.batchId} is ${batch?.status ?? 'missing'} with no payout of its own`);
    return;
  }
  const sum = batch.members.reduce((s, id) => s + (db.orders.get(id)?.vendorNetPaise ?? Number.NaN), 0);
  if (batch.payout.amountPaise !== sum) v.disagreements.push(`batch ${o.batchId} pays ${batch.payout.amountPaise}, its ${batch.members.length} orders' nets add up to ${sum}`);
  if (batch.payout.linkedAccountId !== o.account) v.disagreements.push(`batch ${o.batchId} pays ${batch.payout.linkedAccountId}, the vendor's account is ${o.account}`);
  if (batch.payout.status === 'settled' && (o.live.length !== 1 || batch.payout.providerTransferId !== o.live[0]!.id)) v.disagreements.push(`batch ${o.batchId} settled by ${batch.payout.providerTransferId}, provider's live transfers: ${o.live.map((t) => t.id).join(', ') || 'none'}`);
  for (const t of o.live) if (t.amount !== sum) v.disagreements.push(`transfer ${t.id} of ${t.amount} ≠ the sum of batch ${o.batchId}'s nets, ${sum}`);
  const ledger = db.ledger.get(o.orderId);
  if (ledger?.route !== 'direct_transfer' || ledger.amountPaise !== o.netPaise) v.disagreements.push(`offline ledger ${JSON.stringify(ledger ?? null)}, expected direct_transfer of ${o.netPaise}`);
  if (db.openLedger.has(o.orderId)) v.disagreements.push('paid by its batch, yet listed as owed offline');
}

/** A split reversed from the Dashboard, once our rows heard of it: exactly one transfer_reversal line
 * owes the vendor what was taken back (here the whole split). Whether finance paid it is the rail
 * checker's to judge. */
export function checkReversalOwed(v: OrderVerdict, db: DbLedger, orderId: string, reversalId: string, splitPaise: number): void {
  const lines = (db.reversalLines.get(orderId) ?? []).filter((l) => l.reversalId === reversalId);
  if (lines.length !== 1) v.disagreements.push(`${lines.length} offline lines owe the vendor the reversal ${reversalId}, planned 1`);
  else if (lines[0]!.owedPaise !== lines[0]!.reversedPaise || lines[0]!.reversedPaise !== splitPaise) v.disagreements.push(`the reversal ${reversalId} of ${lines[0]!.reversedPaise} paise (split ${splitPaise}) is owed as ${lines[0]!.owedPaise}`);
}

/** A Dashboard refund is in our rows with what it did: held the payout, or (once paid) a clawback line
 * of minus what the vendor owes back. */
export function checkOutsideRefund(v: OrderVerdict, db: DbLedger, provider: ProviderLedger, h: OrderHistory, expected: string[]): void {
  const orderId = h.orderId!;
  const mine = db.outsideRefunds.filter((r) => r.orderId === orderId);
  if (mine.length === 0) {
    // Its webhooks given up: our rows never heard of it, so recon must raise it (recon.ts requires it).
    h.unrecordedRefundIds = provider.refunds.filter((r) => h.paymentIds.includes(r.payment_id) && r.status !== 'failed').map((r) => r.id);
    if (h.unrecordedRefundIds.length === 0) v.disagreements.push('the Dashboard refund is neither at the provider nor in our rows');
    return;
  }
  if (mine.length > 1) {
    v.disagreements.push(`${mine.length} outside refunds recorded, planned 1 (the Dashboard's)`);
    return;
  }
  const r = mine[0]!;
  if (!expected.includes(r.action)) v.disagreements.push(`the outside refund ${r.id} was recorded as ${r.action}, expected ${expected.join(' or ')}`);
  const clawback = db.clawbacks.get(orderId);
  if (expected.includes('owed_back') && (r.clawbackPaise === null || r.clawbackPaise <= 0 || clawback !== -r.clawbackPaise)) v.disagreements.push(`clawback line ${clawback ?? 'missing'} for an outside refund owing back ${r.clawbackPaise ?? 'nothing'}`);
  if (!expected.includes('owed_back') && clawback !== undefined) v.disagreements.push(`a clawback line of ${clawback} for a refund that held the payout`);
}


/** The batch scenarios (issue 36). A Dashboard refund while the batch was open: the order left the
 * batch, its payout held in review, no transfer pays it, no clawback. After the batch closed (or
 * paid): the batch's fixed sum pays it and the vendor owes its share back. A batch transfer reversed
 * from the Dashboard: recorded against the batch; ops' retry pays the sum again by one new transfer,
 * their pay-offline owes each member's net offline (finance's rounds pay it: railChecker.ts); unheard,
 * our rows still say settled and recon must raise it. */
export function checkBatchScenario(v: OrderVerdict, db: DbLedger, provider: ProviderLedger, o: OrderAt): void {
  const h = v.history;
  const exp = h.planned.expect;
  if (exp.transfers !== 'batched') return;
  if (exp.refundedOutside) {
    const recorded = db.outsideRefunds.filter((r) => r.orderId === o.orderId);
    // Held: by the refund, or (refunded before the capture was confirmed) by the capture check, the refund then reported.
    const held = recorded.some((r) => r.action === 'payout_held' || (r.action === 'reported' && db.payouts.get(o.orderId)?.lastCode === 'CAPTURE_NOT_CONFIRMED'));
    if (held) {
      v.expectedTransfers = 0;
      v.parked = true;
      const payout = db.payouts.get(o.orderId);
      if (h.batch?.refundedWhile === 'closed') v.violations.push('refunded from the Dashboard after its batch closed, yet recorded as holding the payout: the batch\'s transfer pays it');
      if (o.batchId !== null) v.violations.push(`its payout is held for the refund, yet it is still a member of batch ${o.batchId}`);
      if (payout?.status !== 'review' || !['CUSTOMER_REFUNDED', 'CAPTURE_NOT_CONFIRMED'].includes(payout.lastCode ?? '')) v.violations.push(`held for a Dashboard refund, yet its payout is ${payout?.status ?? 'missing'} (${payout?.lastCode ?? 'no code'})`);
      checkOutsideRefund(v, db, provider, h, ['payout_held', 'reported']);
      return;
    }
    // Refunded while open yet owed back: only if the batch had closed by then (its cutoff came first),
    // or the refund's webhooks never reached us (given up): then only the sweep's look at the payment
    // finds it, and the batch may have paid first (the vendor owes it back).
    const heard = h.batch?.refundId !== undefined && provider.heardRefundIds.has(h.batch.refundId);
    if (recorded.length > 0 && h.batch?.refundedWhile === 'open' && heard) {
      v.violations.push(`refunded from the Dashboard while its batch ${h.batch.batchId ?? '?'} was open, yet recorded as ${recorded.map((r) => r.action).join(', ')}: the batch paid an order it should have let go`);
    }
    checkBatched(v, db, o);
    checkOutsideRefund(v, db, provider, h, ['owed_back']);
    // Owed back: recon must raise refund-outside-app for it (recon.ts).
    if (recorded.some((r) => r.action === 'owed_back') && h.batch) h.batch.owedBack = true;
    return;
  }
  if (!h.reversed) {
    checkBatched(v, db, o); // its batch was too slow to pay for the Dashboard to reverse it
    return;
  }
  const reversed = h.reversed;
  const batch = o.batchId ? db.batches.get(o.batchId) : undefined;
  const recorded = (db.batchReversals ?? []).filter((r) => r.transferId === reversed.transferId);
  const atProvider = provider.transfers.find((t) => t.id === reversed.transferId);
  if (!reversed.seen) {
    // Its webhook given up: our rows still say the batch settled under the reversed transfer.
    v.expectedTransfers = 0;
    if (batch?.payout?.status !== 'settled' || batch.payout.providerTransferId !== reversed.transferId) v.violations.push(`a batch reversal our rows never heard of, yet batch ${o.batchId ?? '?'}'s payout is ${batch?.payout?.status ?? 'missing'} with ${batch?.payout?.providerTransferId ?? 'no transfer'}`);
    return;
  }
  if (recorded.length !== 1 || recorded[0]!.batchId !== o.batchId || recorded[0]!.amountPaise !== (atProvider?.amount_reversed ?? Number.NaN)) {
    v.disagreements.push(`the Dashboard's reversal ${reversed.reversalId} of batch ${o.batchId ?? '?'}'s transfer ${reversed.transferId} (${atProvider?.amount_reversed ?? '?'} paise) is recorded as ${JSON.stringify(recorded)}`);
  }
  if (h.batch?.decided === 'pay-offline') {
    v.expectedTransfers = 0;
    const payout = db.payouts.get(o.orderId);
    if (payout?.status !== 'offline') v.violations.push(`ops paid its reversed batch offline, yet its payout is ${payout?.status ?? 'missing'}`);
    if (batch?.payout?.status !== 'offline') v.violations.push(`ops paid batch ${o.batchId ?? '?'} offline, yet its payout is ${batch?.payout?.status ?? 'missing'}`);
    return;
  }
  checkBatched(v, db, o);
  if (batch?.payout?.providerTransferId === reversed.transferId) v.violations.push(`ops retried batch ${o.batchId ?? '?'}, yet it is still held by the reversed transfer ${reversed.transferId}`);
}

/** An order of the pair that switched schedule: paid once, by its batch's transfer if it joined one,
 * else by its own; never both (both would be two live transfers, counted by the caller). */
export function checkSwitching(v: OrderVerdict, db: DbLedger, o: OrderAt): void {
  if (o.batchId !== null) {
    checkBatched(v, db, o);
    return;
  }
  v.expectedTransfers = 1;
  const payout = db.payouts.get(o.orderId);
  if (!payout) {
    v.violations.push('no payout row');
    return;
  }
  if (STUCK_PAYOUT.has(payout.status) || payout.status === 'batched') v.stuck = true;
  v.parked = payout.status === 'parked' || payout.status === 'review';
  if (payout.status !== 'settled') v.violations.push(`payout is ${payout.status}${payout.lastCode ? ` (${payout.lastCode})` : ''}, in no batch, planned settled by its own transfer`);
  else if (o.live.length !== 1 || payout.providerTransferId !== o.live[0]!.id) v.disagreements.push(`payout settled by ${payout.providerTransferId}, provider's live transfers: ${o.live.map((t) => t.id).join(', ') || 'none'}`);
  if (payout.amountPaise !== o.netPaise) v.disagreements.push(`payout of ${payout.amountPaise} ≠ vendor net ${o.netPaise}`);
  if (payout.linkedAccountId !== o.account) v.disagreements.push(`payout to ${payout.linkedAccountId}, the vendor's account is ${o.account}`);
  const ledger = db.ledger.get(o.orderId);
  if (ledger?.route !== 'direct_transfer' || ledger.amountPaise !== o.netPaise) v.disagreements.push(`offline ledger ${JSON.stringify(ledger ?? null)}, expected direct_transfer of ${o.netPaise}`);
  if (payout.status === 'settled' && db.openLedger.has(o.orderId)) v.disagreements.push('settled by transfer, yet listed as owed offline');
}
