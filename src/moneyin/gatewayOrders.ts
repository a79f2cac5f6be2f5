/** The Razorpay order behind one of our orders or top-ups. Created after our row is committed and
 * under a row lock, so a retried request finds and returns the same gateway order instead of
 * making a second one. Our id is the `receipt`, which recon rows echo as `order_receipt`. */
import { AppError } from '../api/errors';
import { inTransaction } from '../db/pool';
import { GatewayCallError, type Notes } from '../gateway/types';
import { logger } from '../logger';
import type { MoneyInDeps } from './deps';

export interface GatewayOrderRequest {
  table: 'orders' | 'wallet_topups';
  id: string;
  amountPaise: number;
  notes: Notes;
  split?: { account: string; amountPaise: number } | null;
}

export async function ensureGatewayOrder(deps: Pick<MoneyInDeps, 'db' | 'gateway'>, req: GatewayOrderRequest): Promise<string> {
  return inTransaction(deps.db, async (tx) => {
    // The table name is one of two constants, never input.
    const { rows } = await tx.query<{ gateway_order_id: string | null }>(`SELECT gateway_order_id FROM ${req.table} WHERE id = $1 FOR UPDATE`, [req.id]);
    const existing = rows[0]?.gateway_order_id;
    if (existing) return existing;
    try {
      const order = await deps.gateway.createOrder({
        amountPaise: req.amountPaise,
        receipt: req.id,
        notes: req.notes,
        transfers: req.split ? [{ account: req.split.account, amountPaise: req.split.amountPaise, notes: req.notes }] : undefined,
      });
      await tx.query(`UPDATE ${req.table} SET gateway_order_id = $2 WHERE id = $1`, [req.id, order.id]);
      return order.id;
    } catch (err) {
      if (!(err instanceof GatewayCallError)) throw err;
      logger.error({ err, id: req.id }, 'could not create the Razorpay order');
      throw new AppError(502, 'gateway_unavailable', `${req.id} is recorded but its Razorpay order could not be created; retry with the same client reference`);
    }
  });
}
