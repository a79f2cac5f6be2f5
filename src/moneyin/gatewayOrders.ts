/** The Razorpay order behind one of our orders or top-ups. Created after our row is committed and
 * outside any transaction: no row lock is held across the gateway call, so a slow gateway cannot
 * tie up connections the webhook endpoint needs. Two concurrent requests may each create a Razorpay
 * order; the first to record its id wins and both answer with it. The loser's order is never shown
 * to a customer, so it is never paid (Razorpay orders cost nothing and expire). Our id is the
 * `receipt`, which recon rows echo as `order_receipt`. */
import { AppError } from '../appError';
import { GatewayCallError, type Notes } from '../gateway/types';
import { logger } from '../logger';
import type { MoneyInDeps } from './deps';
import type { ProviderAdmission } from './providerBudget';

export interface GatewayOrderRequest {
  table: 'orders' | 'wallet_topups';
  id: string;
  amountPaise: number;
  notes: Notes;
  split?: { account: string; amountPaise: number } | null;
}

/** `admission`: the budget's token for this request, spent only when the call is made. */
export async function ensureGatewayOrder(deps: Pick<MoneyInDeps, 'db' | 'gateway'>, req: GatewayOrderRequest, admission?: ProviderAdmission): Promise<string> {
  // The table name is one of two constants, never input.
  const recorded = async () => (await deps.db.query<{ gateway_order_id: string | null }>(`SELECT gateway_order_id FROM ${req.table} WHERE id = $1`, [req.id])).rows[0]?.gateway_order_id ?? null;
  const existing = await recorded();
  if (existing) return existing;
  let created: string;
  admission?.spend();
  try {
    created = (await deps.gateway.createOrder({
      amountPaise: req.amountPaise,
      receipt: req.id,
      notes: req.notes,
      transfers: req.split ? [{ account: req.split.account, amountPaise: req.split.amountPaise, notes: req.notes }] : undefined,
    })).id;
  } catch (err) {
    if (!(err instanceof GatewayCallError)) throw err;
    logger.error({ err, id: req.id }, 'could not create the Razorpay order');
    throw new AppError(502, 'gateway_unavailable', `${req.id} is recorded but its Razorpay order could not be created; retry with the same client reference`);
  }
  const won = await deps.db.query(`UPDATE ${req.table} SET gateway_order_id = $2 WHERE id = $1 AND gateway_order_id IS NULL`, [req.id, created]);
  if (won.rowCount === 1) return created;
  const winner = (await recorded())!;
  logger.info({ id: req.id, kept: winner, discarded: created }, 'a concurrent request recorded its Razorpay order first; this one is left unused');
  return winner;
}
