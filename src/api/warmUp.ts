/** Before a new API process answers, the work its first requests would otherwise pay for: opening
 * the pool's connections (each a PostgreSQL backend whose catalog cache starts empty) and compiling
 * the webhook path's schemas. A lunch peak reaching an instance just started (a deploy, a scale-out)
 * met its first 10 s at webhook p99 37–65 ms against 10–20 ms warm (bench:peak); a fresh API's first
 * capture took 31 ms against 5–7 ms for the next ones. Nothing is written, and a warm-up that fails
 * only logs: it never stops the API from starting. */
import type { Db } from '../db/pool';
import { logger } from '../logger';
import { paymentPayloadSchema } from '../moneyin/webhookEnvelope';
import { webhookEnvelopeSchema } from '../webhooks/envelope';

/** The tables a capture's transaction reads and writes (webhooks/receive.ts, moneyin/markPaid.ts). */
const CAPTURE_TABLES = ['processed_events', 'orders', 'payments', 'payouts', 'payouts_outbox', 'offline_ledger', 'employer_vendor', 'vendors'] as const;

/** Pure: one statement that plans a read of every table a capture touches, loading each relation
 * into the backend's caches without reading a row. */
export const WARM_UP_SQL = `SELECT ${CAPTURE_TABLES.map((t) => `(SELECT 1 FROM ${t} LIMIT 0)`).join(', ')}`;

/** A signed-shape payment.captured as Razorpay sends it, parsed only (never stored). */
const SAMPLE_CAPTURE = {
  entity: 'event', account_id: 'acc_warmup', event: 'payment.captured', contains: ['payment'], created_at: 1_700_000_000,
  payload: { payment: { entity: {
    id: 'pay_WarmUpWarmUp00', entity: 'payment', amount: 100, currency: 'INR', status: 'captured', captured: true,
    order_id: 'order_WarmUpWarmUp0', method: 'upi', fee: 2, tax: 0, notes: [], created_at: 1_700_000_000,
  } } },
};

export async function warmUpApi(db: Db, connections: number): Promise<{ connections: number; ms: number }> {
  const started = performance.now();
  webhookEnvelopeSchema.parse(SAMPLE_CAPTURE);
  paymentPayloadSchema.parse(SAMPLE_CAPTURE.payload);
  // Held at once, so each read runs on a connection of its own.
  const clients = await Promise.allSettled(Array.from({ length: connections }, () => db.connect()));
  let warmed = 0;
  for (const c of clients) {
    if (c.status !== 'fulfilled') continue;
    try {
      await c.value.query(WARM_UP_SQL);
      warmed += 1;
    } catch (err) {
      logger.warn({ err }, 'API warm-up: a read failed; the API starts anyway');
    } finally {
      c.value.release();
    }
  }
  const ms = Math.round(performance.now() - started);
  logger.info({ connections: warmed, ms }, 'API warmed up: pool connections open, webhook schemas compiled');
  return { connections: warmed, ms };
}
