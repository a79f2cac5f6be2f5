/** For the vendor statement tests: a vendor with an order on every route, made through the API and
 * the sandbox as the platform makes them, and the ledgers' own sums to tie a statement to.
 *
 * Settlement batches are rows written here with SQL (settlement_batches, settlement_lines,
 * settlement_line_members of migration 104) until the settlement runs in src/settlement can make
 * them in a test; the statement reads only those tables, not the runs. */
import { randomBytes } from 'node:crypto';
import type { Db } from '../../src/db/pool';
import { recordSettlementLinesInLedger } from '../../src/ledger/settlementLines';
import { addDays, istDateOf, settlementDueDate } from '../../src/domain/calendar';
import { createGateway } from '../../src/gateway';
import { followSplitTransfer } from '../../src/moneyin/splitTransfers';
import type { Statement } from '../../src/statements/contract';
import { call, cashOrder, fundedEmployer, offlineVendor, subsidisedOrder } from './offlineOrders';
import { eventually, payoutRow } from './payoutSeed';
import type { PayoutStack } from './payoutStack';

export interface StatementPeriod { from: string; to: string }

export interface StatementWorld {
  vendorId: string;
  vendorName: string;
  /** A second vendor, paid offline only (no linked account). */
  offlineVendorId: string;
  /** Yesterday to tomorrow (IST): today's orders whatever the hour. */
  period: StatementPeriod;
  orders: {
    transfer: string; split: string; cashOwesBack: string; cashOwed: string; manual: string; corporate: string;
    belowMinimum: string; payOffline: string; noAccount: string; noAccountCash: string;
  };
  refundId: string;
  transferId: string;
  paidLine: { batchId: string; reference: string; utr: string; amountPaise: number };
  openLine: { batchId: string; reference: string };
}

async function ok(answer: ReturnType<typeof call>, what: string) {
  const a = await answer;
  if (a.status >= 300) throw new Error(`${what}: ${a.status} ${JSON.stringify(a.body)}`);
  return a.body;
}

let sequence = 0;

/** Builds the world. `recon`: run Razorpay's settlement and a recon run, so the transfer's settlement
 * and UTR are known (the sandbox clock moves to the due day and back). */
export async function buildStatementWorld(stack: PayoutStack, opts: { recon: boolean }): Promise<StatementWorld> {
  const { db, keys } = stack;
  const control = stack.sandbox.control;
  const gateway = createGateway(stack.config);
  const tag = randomBytes(4).toString('hex');
  const vendorId = `ven_stmt_${tag}`;
  const vendorName = 'Statement Dosa';
  await control.setPlatformBalance(10_000_000);
  const linkedAccountId = await control.createLinkedAccount({ name: vendorName });
  await ok(call(stack, keys.admin, 'POST', '/v1/admin/vendors', { id: vendorId, name: vendorName, linkedAccountId }), 'vendor');
  const main = await fundedEmployer(stack);
  const manual = await fundedEmployer(stack);
  const corporate = await fundedEmployer(stack);
  const pair = (employerId: string, settlementMode: string, commissionBps: number) =>
    ok(call(stack, keys.admin, 'PUT', `/v1/admin/employers/${employerId}/vendors/${vendorId}`, { settlementMode, commissionBps }), 'pair');
  await pair(main, 'platform_transfer', 1_900);
  await pair(manual, 'manual_offline', 1_000);
  await pair(corporate, 'corporate_direct', 1_900);

  const online = async (totalPaise: number, subsidyPaise: number) => {
    const placed = await ok(call(stack, keys.ordering, 'POST', '/v1/orders', {
      clientReference: `stmt-${tag}-${++sequence}`, employerId: main, vendorId, employeeId: 'employee-s', totalPaise, subsidyPaise, customerSharePaise: totalPaise - subsidyPaise, paymentMethod: 'online',
    }), 'online order') as { order: { orderId: string; gatewayOrderId: string } };
    const payment = await control.payOrder(placed.order.gatewayOrderId);
    return { orderId: placed.order.orderId, paymentId: payment.id };
  };

  // Direct transfer (₹10 of ₹100 paid by the customer online): settles, then a dashboard refund of
  // ₹5 claws back 8 100 × 500 / 1 000 = 4 050 paise.
  const transfer = await online(10_000, 9_000);
  const settled = await eventually(() => payoutRow(db, transfer.orderId), (p) => p?.status === 'settled', 30_000);
  const refund = await gateway.createRefund({ paymentId: transfer.paymentId, amountPaise: 500, receipt: `dashboard-${tag}` });
  if (refund.type !== 'accepted') throw new Error(`the sandbox refused the dashboard refund: ${JSON.stringify(refund)}`);
  await control.drainWebhooks();
  await eventually(async () => (await db.query('SELECT 1 FROM offline_ledger WHERE outside_refund_id = $1', [refund.entity.id])).rowCount, (n) => n === 1, 20_000);

  // Unsubsidised: the Razorpay order carries a Route split of the vendor's net.
  const split = await online(25_000, 0);
  await eventually(async () => {
    await followSplitTransfer({ db, gateway }, split.orderId, new Date());
    return (await db.query<{ status: string }>('SELECT status FROM split_transfers WHERE order_id = $1', [split.orderId])).rows[0]?.status;
  }, (s) => s === 'processed', 20_000);

  const cashOwesBack = await cashOrder(stack, main, vendorId, 12_000, 2_000); // 2 000 − 2 280 = −280
  const cashOwed = await cashOrder(stack, main, vendorId, 20_000, 15_000); // 15 000 − 3 800 = 11 200
  const manualOrder = await subsidisedOrder(stack, manual, vendorId, 10_000); // manual_offline: 9 000
  const corporateOrder = await subsidisedOrder(stack, corporate, vendorId, 15_000); // obligation: 12 150
  const belowMinimum = await subsidisedOrder(stack, main, vendorId, 100); // net 81 < ₹1

  // A direct transfer ops decided to pay by hand while transfers were paused.
  await ok(call(stack, keys.ops, 'POST', '/ops/transfers/pause', { reason: 'statement test: bank incident' }), 'pause');
  const payOffline = await subsidisedOrder(stack, main, vendorId, 10_000).then(async (placed) => {
    await eventually(() => payoutRow(db, placed.orderId), (p) => p?.status === 'pending');
    await ok(call(stack, keys.ops, 'POST', `/ops/payouts/${placed.orderId}/pay-offline`, { reason: 'finance pays it by NEFT' }), 'pay offline');
    return placed;
  }).finally(() => ok(call(stack, keys.ops, 'POST', '/ops/transfers/resume', { reason: 'statement test: incident over' }), 'resume'));

  const w = await offlineVendor(stack, main, { bank: false }); // 10% commission
  const noAccount = await subsidisedOrder(stack, main, w.vendorId, 10_000); // 9 000
  const noAccountCash = await cashOrder(stack, main, w.vendorId, 12_000, 1_000); // 1 000 − 1 200 = −200

  const ledgerIds = async (...orderIds: string[]) => (await db.query<{ id: number }>('SELECT id FROM offline_ledger WHERE order_id = ANY($1)', [orderIds])).rows.map((r) => r.id);
  const paidReference = `STMT${tag.toUpperCase()}PAID`;
  const paidUtr = `UTRSTMT${tag.toUpperCase()}`;
  const paid = await insertBatchLine(db, {
    vendorId, batchStatus: 'closed', reference: paidReference, line: { status: 'paid', utr: paidUtr },
    ledgerIds: await ledgerIds(manualOrder.orderId, cashOwed.orderId, cashOwesBack.orderId, payOffline.orderId),
  });
  // The below-minimum line was in a batch line that failed (its membership ended), and is now in an open one.
  await insertBatchLine(db, { vendorId, batchStatus: 'closed', reference: `STMT${tag.toUpperCase()}FAIL`, line: { status: 'failed' }, ledgerIds: await ledgerIds(belowMinimum.orderId) });
  const open = await insertBatchLine(db, { vendorId, batchStatus: 'open', reference: `STMT${tag.toUpperCase()}OPEN`, line: { status: 'open' }, ledgerIds: await ledgerIds(belowMinimum.orderId) });

  if (opts.recon) await settleAndReconcile(stack);
  const today = istDateOf(new Date());
  return {
    vendorId, vendorName, offlineVendorId: w.vendorId, period: { from: addDays(today, -1), to: addDays(today, 1) },
    orders: {
      transfer: transfer.orderId, split: split.orderId, cashOwesBack: cashOwesBack.orderId, cashOwed: cashOwed.orderId, manual: manualOrder.orderId,
      corporate: corporateOrder.orderId, belowMinimum: belowMinimum.orderId, payOffline: payOffline.orderId, noAccount: noAccount.orderId, noAccountCash: noAccountCash.orderId,
    },
    refundId: refund.entity.id, transferId: settled!.provider_transfer_id!,
    paidLine: { batchId: paid.batchId, reference: paidReference, utr: paidUtr, amountPaise: paid.amountPaise },
    openLine: { batchId: open.batchId, reference: `STMT${tag.toUpperCase()}OPEN` },
  };
}

/** One batch with one line for the vendor over these ledger lines, as a settlement run leaves it:
 * paid (with the bank's UTR), failed (the membership ended) or open. */
async function insertBatchLine(db: Db, b: {
  vendorId: string; batchStatus: 'open' | 'closed'; reference: string; line: { status: 'paid'; utr: string } | { status: 'failed' | 'open' }; ledgerIds: number[];
}): Promise<{ batchId: string; amountPaise: number }> {
  const batchId = `stb_${randomBytes(7).toString('hex')}`;
  const today = istDateOf(new Date());
  await db.query(
    `INSERT INTO settlement_batches (id, workflow_id, run_id, period_from, period_to, status, created_by, closed_at)
     VALUES ($1, 'settlement-statement-test', $1, $2, $2, $3, 'key:test-finance', CASE WHEN $3 = 'closed' THEN now() END)`,
    [batchId, today, b.batchStatus],
  );
  const utr = b.line.status === 'paid' ? b.line.utr : null;
  const { rows } = await db.query<{ id: number; amount_paise: number }>(
    `INSERT INTO settlement_lines (batch_id, vendor_id, reference, amount_paise, beneficiary_name, ifsc, account_masked, bank_details_updated_at,
                                   status, utr, utr_normalised, paid_on, failure_reason, decided_by, decided_at)
     SELECT $1, $2, $3, sum(amount_paise), 'Statement Dosa', 'HDFC0001234', 'XXXXXXXX6789', now(),
            $4, $5::text, upper($5::text), CASE WHEN $4 = 'paid' THEN $6::date END, CASE WHEN $4 = 'failed' THEN 'beneficiary account closed' END,
            CASE WHEN $4 <> 'open' THEN 'key:test-finance' END, CASE WHEN $4 <> 'open' THEN now() END
       FROM offline_ledger WHERE id = ANY($7)
     RETURNING id, amount_paise`,
    [batchId, b.vendorId, b.reference, b.line.status, utr, today, b.ledgerIds],
  );
  const line = rows[0]!;
  await db.query(
    `INSERT INTO settlement_line_members (line_id, ledger_id, amount_paise, active) SELECT $1, id, amount_paise, $2 FROM offline_ledger WHERE id = ANY($3)`,
    [line.id, b.line.status !== 'failed', b.ledgerIds],
  );
  await recordSettlementLinesInLedger(db, [line.id]); // as the run's freeze and the bank's answer write it
  return { batchId, amountPaise: line.amount_paise };
}

/** As finance's day in the demo: the sandbox clock to the T+2 due day, Razorpay settles, recon runs
 * for the window and stores the settlement rows (and UTRs) of our transfers. */
async function settleAndReconcile(stack: PayoutStack): Promise<void> {
  const control = stack.sandbox.control;
  const captureDay = istDateOf(new Date(await control.now()));
  const due = settlementDueDate(captureDay);
  await control.setClock(Date.parse(`${due}T06:30:00Z`));
  try {
    await control.runSettlements({ date: due });
    const started = await ok(call(stack, stack.keys.finance, 'POST', '/finance/recon/runs', { from: captureDay, to: due, asOf: due }), 'recon run') as { workflowId: string };
    await eventually(async () => (await ok(call(stack, stack.keys.finance, 'GET', `/finance/recon/runs/${started.workflowId}`), 'recon progress') as { live: { status: string } | null }).live?.status,
      (s) => s !== undefined && s !== 'RUNNING', 60_000);
  } finally {
    await control.setClock(null);
  }
}

/** What the ledgers themselves hold for the vendor's orders paid in the period (and its clawbacks
 * recorded in it), summed in SQL from payouts, split_transfers, offline_ledger(_open),
 * settlement_lines and their members, vendor_obligations and orders: no code of the statement's. */
export async function ledgerSums(db: Db, vendorId: string, period: StatementPeriod) {
  const { rows } = await db.query(
    `WITH o AS (
       SELECT * FROM orders WHERE vendor_id = $1 AND status = 'paid'
          AND paid_at >= ($2::date::timestamp AT TIME ZONE 'Asia/Kolkata') AND paid_at < (($3::date + 1)::timestamp AT TIME ZONE 'Asia/Kolkata')),
     lines AS (
       SELECT l.* FROM offline_ledger l WHERE l.order_id IN (SELECT id FROM o)
       UNION ALL
       SELECT l.* FROM offline_ledger l WHERE l.vendor_id = $1 AND l.route = 'refund_clawback'
          AND l.created_at >= ($2::date::timestamp AT TIME ZONE 'Asia/Kolkata') AND l.created_at < (($3::date + 1)::timestamp AT TIME ZONE 'Asia/Kolkata'))
     SELECT
       (SELECT COALESCE(sum(vendor_net_paise), 0) FROM o)::bigint AS "vendorNetPaise",
       (SELECT COALESCE(sum(amount_paise), 0) FROM payouts WHERE order_id IN (SELECT id FROM o) AND status = 'settled')::bigint AS "transferSettledPaise",
       (SELECT COALESCE(sum(amount_paise), 0) FROM payouts WHERE order_id IN (SELECT id FROM o) AND status IN ('processing', 'accepted'))::bigint AS "transferInFlightPaise",
       (SELECT COALESCE(sum(amount_paise), 0) FROM payouts WHERE order_id IN (SELECT id FROM o) AND status IN ('pending', 'failed', 'parked', 'review'))::bigint AS "transferAwaitingPaise",
       (SELECT COALESCE(sum(amount_paise), 0) FROM payouts WHERE order_id IN (SELECT id FROM o) AND status = 'cancelled')::bigint AS "notOwedPaise",
       (SELECT COALESCE(sum(amount_paise), 0) FROM split_transfers WHERE order_id IN (SELECT id FROM o) AND status = 'processed')::bigint AS "splitProcessedPaise",
       (SELECT COALESCE(sum(amount_paise), 0) FROM split_transfers WHERE order_id IN (SELECT id FROM o) AND status = 'expected')::bigint AS "splitInFlightPaise",
       (SELECT COALESCE(sum(v.amount_paise), 0) FROM offline_ledger_open v WHERE v.id IN (SELECT id FROM lines) AND v.batch_line_id IS NULL)::bigint AS "offlineOpenPaise",
       (SELECT COALESCE(sum(v.amount_paise), 0) FROM offline_ledger_open v WHERE v.id IN (SELECT id FROM lines) AND v.batch_line_id IS NOT NULL)::bigint AS "offlineInBatchPaise",
       (SELECT COALESCE(sum(m.amount_paise), 0) FROM settlement_line_members m JOIN settlement_lines sl ON sl.id = m.line_id
         WHERE m.active AND sl.status = 'paid' AND m.ledger_id IN (SELECT id FROM lines))::bigint AS "offlinePaidPaise",
       -- The vendor's paid bank lines whose every member is a line of this period.
       (SELECT COALESCE(sum(sl.amount_paise), 0) FROM settlement_lines sl WHERE sl.vendor_id = $1 AND sl.status = 'paid'
          AND NOT EXISTS (SELECT 1 FROM settlement_line_members m WHERE m.line_id = sl.id AND m.ledger_id NOT IN (SELECT id FROM lines)))::bigint AS "settlementLinesPaidPaise",
       (SELECT COALESCE(sum(amount_paise), 0) FROM lines WHERE route = 'refund_clawback')::bigint AS "refundClawbackPaise",
       (SELECT COALESCE(sum(o.customer_share_paise), 0) FROM o JOIN offline_ledger l ON l.order_id = o.id AND l.route = 'cash')::bigint AS "cashKeptPaise",
       (SELECT COALESCE(sum(amount_paise), 0) FROM vendor_obligations WHERE order_id IN (SELECT id FROM o))::bigint AS "employerDirectPaise"`,
    [vendorId, period.from, period.to],
  );
  return rows[0] as Record<string, number>;
}

/** The same sums as the statement states them. */
export function statementSums(s: Statement): Record<string, number> {
  const t = s.totals;
  return {
    vendorNetPaise: t.vendorNetPaise,
    transferSettledPaise: t.transfer.settledPaise, transferInFlightPaise: t.transfer.inFlightPaise, transferAwaitingPaise: t.transfer.awaitingPaise, notOwedPaise: t.notOwedPaise,
    splitProcessedPaise: t.split.processedPaise, splitInFlightPaise: t.split.inFlightPaise,
    offlineOpenPaise: t.offline.openPaise, offlineInBatchPaise: t.offline.inBatchPaise, offlinePaidPaise: t.offline.paidPaise, settlementLinesPaidPaise: t.offline.paidPaise,
    refundClawbackPaise: t.refundClawbackPaise, cashKeptPaise: t.cashKeptAtCounterPaise, employerDirectPaise: t.employerDirectPaise,
  };
}
