/** Helpers for the webhook, settlement-evidence and sweep tests, on top of the money-in harness:
 * signed envelopes built from entities, a snapshot of every table a webhook may write, and a read
 * of recon exceptions. */
import type { Db } from '../../src/db/pool';
import { http, snapshot, uniqueRef, type MoneyInHarness } from './moneyinHarness';

/** The documented envelope (reference §4.2) around entity snapshots, as Razorpay sends it. */
export function envelope(h: MoneyInHarness, event: string, payload: Record<string, unknown>, createdAt = Math.floor(Date.now() / 1000)): string {
  return JSON.stringify({
    entity: 'event', account_id: h.config.RAZORPAY_PLATFORM_ACCOUNT_ID, event, contains: Object.keys(payload),
    payload: Object.fromEntries(Object.entries(payload).map(([name, entity]) => [name, { entity }])), created_at: createdAt,
  });
}

const MORE_TABLES = ['settlements', 'recon_exceptions', 'recon_exception_actions', 'order_status_changes'];

/** The money-in harness snapshot plus what recon and order ends write. */
export async function everyTable(db: Db): Promise<Record<string, unknown[]>> {
  const out = await snapshot(db);
  for (const table of MORE_TABLES) out[table] = (await db.query(`SELECT * FROM ${table} ORDER BY 1`)).rows;
  return out;
}

export async function exceptionsFor(db: Db, where: { reason: string; entityId?: string; orderId?: string }) {
  const { rows } = await db.query(
    `SELECT key, reason, class, severity, status, entity_id, order_id, expected_paise, actual_paise, details, raised_by, resolved_by, next_action
       FROM recon_exceptions WHERE reason = $1 AND ($2::text IS NULL OR entity_id = $2) AND ($3::text IS NULL OR order_id = $3) ORDER BY id`,
    [where.reason, where.entityId ?? null, where.orderId ?? null],
  );
  return rows;
}

/** A pending online order of the pair (₹100, ₹90 subsidised) paid at the sandbox checkout while
 * webhook delivery is off, and the events its payment produced, none delivered. */
export async function paidAtCheckout(h: MoneyInHarness, pair: { employerId: string; vendorId: string }): Promise<{ orderId: string; events: Array<{ id: string; event: string; body: string }> }> {
  await h.sandbox.control.setWebhookDelivery(false);
  const placed = await http(h, 'POST', '/v1/orders', {
    ...pair, clientReference: uniqueRef('checkout'), employeeId: 'e-checkout', totalPaise: 10_000, subsidyPaise: 9_000, customerSharePaise: 1_000, paymentMethod: 'online',
  });
  expect(placed.status).toBe(201);
  await h.sandbox.control.payOrder(placed.body.order.gatewayOrderId);
  const events = (await h.sandbox.control.webhookEvents()).filter((e) => e.body.includes(placed.body.order.gatewayOrderId));
  return { orderId: placed.body.order.orderId, events };
}

let seq = 0;
/** A unique Razorpay-style id (prefix + 14 alphanumerics). */
export function rzpId(prefix: string): string {
  const tail = `${Date.now().toString(36)}${(++seq).toString(36)}XXXXXXXXXXXXXX`.replace(/[^A-Za-z0-9]/g, '').slice(0, 14);
  return `${prefix}_${tail}`;
}
