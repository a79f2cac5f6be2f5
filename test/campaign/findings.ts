/** What a failed campaign leaves behind for the person who repeats it: for every order involved, its
 * history (what the client did, the ids it saw), its rows in PostgreSQL and the webhook events the
 * sandbox produced about it (delivered or given up), written next to the processes' logs. */
import fs from 'node:fs';
import path from 'node:path';
import type { Pool } from 'pg';
import type { Topology } from '../../src/devstack/topologyTypes';
import type { OrderVerdict } from './checker';

const TABLES: Array<{ name: string; sql: string }> = [
  { name: 'orders', sql: 'SELECT * FROM orders WHERE id = $1' },
  { name: 'payments', sql: 'SELECT id, status, amount_paise, method, captured_at, created_at, updated_at FROM payments WHERE order_id = $1 OR gateway_order_id = $2 ORDER BY created_at' },
  { name: 'refunds', sql: 'SELECT * FROM refunds WHERE order_id = $1 ORDER BY created_at' },
  { name: 'payouts', sql: 'SELECT * FROM payouts WHERE order_id = $1' },
  { name: 'payout_attempts', sql: 'SELECT a.attempt_no, a.outcome, a.provider_code, a.provider_transfer_id, a.created_at FROM payout_attempts a JOIN payouts p ON p.id = a.payout_id WHERE p.order_id = $1 ORDER BY a.id' },
  { name: 'split_transfers', sql: 'SELECT * FROM split_transfers WHERE order_id = $1' },
  { name: 'offline_ledger', sql: 'SELECT * FROM offline_ledger WHERE order_id = $1' },
  { name: 'payout_batch_orders', sql: 'SELECT * FROM payout_batch_orders WHERE order_id = $1' },
  { name: 'outside_refunds', sql: 'SELECT * FROM outside_refunds WHERE order_id = $1' },
  { name: 'ledger_obligations', sql: 'SELECT * FROM ledger_obligations WHERE order_id = $1 ORDER BY id' },
  { name: 'ledger_discharges', sql: 'SELECT d.*, i.obligation_id, i.active FROM ledger_discharges d JOIN ledger_discharge_items i ON i.discharge_id = d.id JOIN ledger_obligations o ON o.id = i.obligation_id WHERE o.order_id = $1 ORDER BY d.id' },
];

export async function writeFindings(t: Topology, db: Pool, verdicts: OrderVerdict[], extra: Record<string, unknown>): Promise<string> {
  const involved = verdicts.filter((v) => v.violations.length > 0);
  const events = await t.sandbox.webhookEvents().catch(() => []);
  const orders = [];
  for (const v of involved) {
    const h = v.history;
    const rows: Record<string, unknown> = {};
    if (h.orderId) {
      for (const table of TABLES) {
        rows[table.name] = await db.query(table.sql, table.name === 'payments' ? [h.orderId, h.gatewayOrderId] : [h.orderId]).then((r) => r.rows, (err: unknown) => `unreadable: ${String(err)}`);
      }
    }
    const ids = [h.orderId, h.gatewayOrderId, ...h.paymentIds].filter((x): x is string => x !== null);
    const about = events.filter((e) => ids.some((id) => e.body.includes(id))).map((e) => ({ id: e.id, event: e.event, deliveredAt: e.deliveredAt, attempts: e.attempts }));
    orders.push({ history: h, violations: v.violations, rows, webhookEvents: about });
  }
  const file = path.join(t.stateDir, 'campaign-findings.json');
  fs.writeFileSync(file, JSON.stringify({ ...extra, orders }, null, 2));
  return file;
}
