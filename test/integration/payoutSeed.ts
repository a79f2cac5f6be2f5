/** Seeds paid orders and their payout rows straight into PostgreSQL, the way money in leaves them
 * (issue 5 allows building the payout side on seeded rows), and reads back what payouts wrote. */
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { Db } from '../../src/db/pool';
import { payoutStateQuery } from '../../src/contracts/payout';
import { oweOrders } from '../../src/ledger/orderObligations';
import { commissionPaise } from '../../src/domain/money';
import { routeFor, type PaymentMethod, type SettlementMode } from '../../src/domain/routing';

export interface SeededOrder {
  orderId: string;
  vendorId: string;
  employerId: string;
  payoutId: string | null;
  vendorNetPaise: number;
}

export async function seedPaidOrder(db: Db, o: {
  linkedAccountId: string | null;
  totalPaise?: number; subsidyPaise?: number; commissionBps?: number;
  method?: PaymentMethod; mode?: SettlementMode;
  /** Write the pending payout row money in writes for a direct transfer (default: when routed so). */
  withPayout?: boolean;
  /** The payment an online order with a customer share was marked paid on (money in writes it with
   * the order). By default one the sandbox never saw, recorded as confirmed with Razorpay already, as
   * an earlier attempt leaves it: these tests are about the transfer, and the capture check is
   * payout.captureConfirmation's. `confirmed: false` leaves the check to the money-moving step. */
  payment?: { id?: string; gatewayOrderId?: string; amountPaise?: number; confirmed?: boolean };
  /** Another order of a pair seeded before (its employer, vendor and terms are reused). */
  pair?: { employerId: string; vendorId: string };
  /** When the order was paid (default: now). */
  paidAt?: Date;
}): Promise<SeededOrder> {
  const tag = randomBytes(5).toString('hex');
  const employerId = o.pair?.employerId ?? `emp_${tag}`;
  const vendorId = o.pair?.vendorId ?? `ven_${tag}`;
  const orderId = `ord_${tag}`;
  const total = o.totalPaise ?? 10_000;
  const subsidy = o.subsidyPaise ?? 9_900;
  const bps = o.commissionBps ?? 1_900;
  const commission = commissionPaise(total, bps);
  const net = total - commission;
  const method = o.method ?? 'online';
  const mode = o.mode ?? 'platform_transfer';
  if (!o.pair) {
    await db.query('INSERT INTO employers (id, name) VALUES ($1, $2)', [employerId, `Employer ${tag}`]);
    await db.query('INSERT INTO vendors (id, name, linked_account_id) VALUES ($1, $2, $3)', [vendorId, `Vendor ${tag}`, o.linkedAccountId]);
    await db.query('INSERT INTO employer_vendor (employer_id, vendor_id, settlement_mode, commission_bps) VALUES ($1, $2, $3, $4)', [employerId, vendorId, mode, bps]);
  }
  await db.query(
    `INSERT INTO orders (id, client_reference, employer_id, vendor_id, employee_id, total_paise, subsidy_paise, customer_share_paise,
       commission_bps, commission_paise, vendor_net_paise, payment_method, status, paid_at)
     VALUES ($1, $2, $3, $4, 'emp-1', $5, $6, $7, $8, $9, $10, $11, 'paid', COALESCE($12, now()))`,
    [orderId, `ref_${tag}`, employerId, vendorId, total, subsidy, total - subsidy, bps, commission, net, method, o.paidAt ?? null],
  );
  if (method === 'online' && total > subsidy) {
    const paymentId = o.payment?.id ?? `pay_${randomBytes(7).toString('hex')}`;
    const gatewayOrderId = o.payment?.gatewayOrderId ?? `order_${randomBytes(7).toString('hex')}`;
    await db.query(
      `INSERT INTO payments (id, gateway_order_id, order_id, amount_paise, status, method, captured_at, raw, capture_confirmed_at)
       VALUES ($1, $2, $3, $4, 'captured', 'card', now(), '{}', CASE WHEN $5 THEN now() END)`,
      [paymentId, gatewayOrderId, orderId, o.payment?.amountPaise ?? total - subsidy, o.payment?.confirmed ?? true],
    );
    await db.query(`UPDATE orders SET gateway_order_id = $2, paid_via = 'webhook', paid_payment_id = $3 WHERE id = $1`, [orderId, gatewayOrderId, paymentId]);
  }
  const route = routeFor({ settlementMode: mode, paymentMethod: method, subsidyPaise: subsidy, commissionPaise: commission, vendorNetPaise: net, linkedAccountId: o.linkedAccountId });
  let payoutId: string | null = null;
  if (o.withPayout ?? route.kind === 'direct_transfer') {
    payoutId = randomUUID();
    await db.query(
      `INSERT INTO payouts (id, order_id, vendor_id, linked_account_id, amount_paise, idempotency_key) VALUES ($1::uuid, $2, $3, $4, $5, $1::text)`,
      [payoutId, orderId, vendorId, o.linkedAccountId ?? 'acc_NoAccount00000', net],
    );
    await db.query(`INSERT INTO offline_ledger (order_id, employer_id, vendor_id, amount_paise, route) VALUES ($1, $2, $3, $4, 'direct_transfer')`,
      [orderId, employerId, vendorId, net]);
    await oweOrders(db, [orderId]); // as markPaid writes the order's obligation with these rows
  }
  return { orderId, vendorId, employerId, payoutId, vendorNetPaise: net };
}

export async function payoutRow(db: Db, orderId: string) {
  const { rows } = await db.query('SELECT * FROM payouts WHERE order_id = $1', [orderId]);
  return rows[0] as { id: string; status: string; attempts: number; attempt_limit: number | null; last_code: string | null; provider_transfer_id: string | null; external_reference: string | null; idempotency_key: string } | undefined;
}

export async function attemptOutcomes(db: Db, payoutId: string): Promise<string[]> {
  const { rows } = await db.query<{ outcome: string }>('SELECT outcome FROM payout_attempts WHERE payout_id = $1 ORDER BY id', [payoutId]);
  return rows.map((r) => r.outcome);
}

/** Polls `read` until `done` holds (visibility and webhooks are asynchronous); fails after `ms`. */
export async function eventually<T>(read: () => Promise<T>, done: (v: T) => boolean, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  let last = await read();
  while (!done(last)) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms; last value: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 100));
    last = await read();
  }
  return last;
}

/** Runs `wait`; when it fails, the error says where the payout's run stood (its status, the step log
 * its query returns, its last history events), so a convergence that timed out under CI's load can be
 * read from the log rather than guessed at. */
export async function explainingRun<T>(client: Client, workflowId: string, wait: () => Promise<T>): Promise<T> {
  try {
    return await wait();
  } catch (err) {
    const lines: string[] = [];
    try {
      const handle = client.workflow.getHandle(workflowId);
      const d = await handle.describe();
      lines.push(`run ${workflowId} ${d.runId}: ${d.status.name}, started ${d.startTime.toISOString()}`);
      if (d.status.name === 'RUNNING') {
        const state = await handle.query(payoutStateQuery);
        for (const s of state.steps.slice(-15)) lines.push(`  step ${s.step}: ${s.detail}`);
      }
      const history = await handle.fetchHistory();
      const events = history.events ?? [];
      for (const e of events.slice(-25)) {
        const at = e.eventTime?.seconds ? new Date(Number(e.eventTime.seconds) * 1000).toISOString() : '?';
        lines.push(`  #${e.eventId} ${at} ${temporal.api.enums.v1.EventType[e.eventType ?? 0]}`);
      }
    } catch (explainErr) {
      lines.push(`(could not explain the run: ${String(explainErr)})`);
    }
    throw new Error(`${(err as Error).message}\n${lines.join('\n')}`);
  }
}

/** With PAYOUT_RECORD_HISTORIES=1, keeps the run's history as a replay fixture (test/unit/payout.replay.test.ts),
 * as the protobuf object form of @temporalio/proto. Not the SDK's historyToJSON: in this install
 * @temporalio/common carries its own protobufjs (8.x) whose protojson rejects @temporalio/proto's (7.x) types. */
export async function recordHistory(client: Client, workflowId: string, fixtureName: string): Promise<void> {
  if (process.env.PAYOUT_RECORD_HISTORIES !== '1') return;
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const object = temporal.api.history.v1.History.toObject(temporal.api.history.v1.History.fromObject(history), { longs: String, bytes: String, enums: String });
  const dir = path.resolve(__dirname, '../fixtures/histories');
  fs.mkdirSync(dir, { recursive: true });
  // A kept fixture stands for runs older code left in flight: never replaced (delete it by hand to re-record).
  if (fs.existsSync(path.join(dir, `${fixtureName}.json`))) return;
  fs.writeFileSync(path.join(dir, `${fixtureName}.json`), JSON.stringify(object));
}
