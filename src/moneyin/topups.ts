/** Wallet top-ups are money in: a Razorpay order (receipt = top-up id) whose captured payment
 * credits the wallet exactly once — the status flip is the guard, the unique ledger entry the
 * backstop. */
import { AppError } from '../appError';
import { inTransaction, type Tx } from '../db/pool';
import { logger } from '../logger';
import type { MoneyInDeps } from './deps';
import { registeredEmployeeOrFail } from './employees';
import { ensureGatewayOrder } from './gatewayOrders';
import { newTopupId } from './ids';
import type { ProviderAdmission } from './providerBudget';
import { employerOrFail } from './referenceData';
import { creditWallet, ensureWallet, type WalletOwner } from './wallets';

export interface TopupView {
  topupId: string; ownerKind: string; ownerId: string; amountPaise: number; status: string; gatewayOrderId: string | null;
}

export async function createTopup(deps: MoneyInDeps, req: WalletOwner & { amountPaise: number; clientReference: string | null }): Promise<{ topup: TopupView; created: boolean }> {
  // Admitted before anything is written: a 503 records nothing.
  const admission = deps.providerBudget?.admit('top-up');
  try {
    return await recordTopup(deps, req, admission);
  } finally {
    admission?.close();
  }
}

async function recordTopup(deps: MoneyInDeps, req: WalletOwner & { amountPaise: number; clientReference: string | null }, admission: ProviderAdmission | undefined): Promise<{ topup: TopupView; created: boolean }> {
  const { topupId, created } = await inTransaction(deps.db, async (tx) => {
    if (req.ownerKind === 'employer') {
      await employerOrFail(tx, req.ownerId);
    } else {
      await registeredEmployeeOrFail(tx, req.ownerId);
    }
    await ensureWallet(tx, req);
    const inserted = await tx.query<{ id: string }>(
      `INSERT INTO wallet_topups (id, owner_kind, owner_id, amount_paise, client_reference) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (client_reference) DO NOTHING RETURNING id`,
      [newTopupId(), req.ownerKind, req.ownerId, req.amountPaise, req.clientReference],
    );
    if (inserted.rows[0]) return { topupId: inserted.rows[0].id, created: true };
    const existing = await tx.query<{ id: string; owner_kind: string; owner_id: string; amount_paise: number }>(
      'SELECT id, owner_kind, owner_id, amount_paise FROM wallet_topups WHERE client_reference = $1', [req.clientReference],
    );
    const row = existing.rows[0]!;
    if (row.owner_kind !== req.ownerKind || row.owner_id !== req.ownerId || row.amount_paise !== req.amountPaise) {
      throw new AppError(409, 'client_reference_reused', 'this client reference belongs to a different top-up');
    }
    return { topupId: row.id, created: false };
  });
  await ensureGatewayOrder(deps, { table: 'wallet_topups', id: topupId, amountPaise: req.amountPaise, notes: { topup_id: topupId } }, admission);
  return { topup: (await topupView(deps, topupId))!, created };
}

export async function topupView(deps: Pick<MoneyInDeps, 'db'>, topupId: string): Promise<TopupView | null> {
  const { rows } = await deps.db.query<{ id: string; owner_kind: string; owner_id: string; amount_paise: number; status: string; gateway_order_id: string | null }>(
    'SELECT id, owner_kind, owner_id, amount_paise, status, gateway_order_id FROM wallet_topups WHERE id = $1', [topupId],
  );
  const t = rows[0];
  return t ? { topupId: t.id, ownerKind: t.owner_kind, ownerId: t.owner_id, amountPaise: t.amount_paise, status: t.status, gatewayOrderId: t.gateway_order_id } : null;
}

/** Credits the top-up's wallet once, recording which payment did; another payment's capture on
 * the same top-up is reported so it can be refunded (the customer paid twice). */
export async function creditTopup(tx: Tx, topupId: string, paymentId: string, capturedPaise: number): Promise<'credited' | 'already_credited' | 'credited_by_another_payment' | 'not_credited'> {
  const { rows } = await tx.query<{ owner_kind: 'employer' | 'employee'; owner_id: string; amount_paise: number }>(
    `UPDATE wallet_topups SET status = 'credited', credited_at = now(), credited_payment_id = $3
      WHERE id = $1 AND status IN ('pending', 'failed') AND amount_paise = $2
      RETURNING owner_kind, owner_id, amount_paise`,
    [topupId, capturedPaise, paymentId],
  );
  const topup = rows[0];
  if (topup) {
    await creditWallet(tx, { ownerKind: topup.owner_kind, ownerId: topup.owner_id }, 'top_up', topup.amount_paise, topupId);
    return 'credited';
  }
  const { rows: current } = await tx.query<{ status: string; amount_paise: number; credited_payment_id: string | null }>(
    'SELECT status, amount_paise, credited_payment_id FROM wallet_topups WHERE id = $1', [topupId],
  );
  const t = current[0];
  if (t?.status === 'credited') {
    // NULL: credited before the payment was recorded (none found by migration 014); never refund on a guess.
    if (t.credited_payment_id && t.credited_payment_id !== paymentId) return 'credited_by_another_payment';
    return 'already_credited';
  }
  if (t) logger.error({ topupId, expectedPaise: t.amount_paise, capturedPaise }, 'top-up capture amount differs from the top-up: not credited');
  return 'not_credited';
}
