/** Employer and employee wallets: a balance that can never go below zero and an append-only ledger
 * of every movement with the balance after it. The conditional UPDATE is the guard: two concurrent
 * debits serialise on the row, and the second sees the balance the first left. */
import { AppError } from '../appError';
import type { Db, Tx } from '../db/pool';

export type WalletOwnerKind = 'employer' | 'employee';
export interface WalletOwner { ownerKind: WalletOwnerKind; ownerId: string }

type EntryKind = 'top_up' | 'order_debit' | 'refund_credit';

export async function ensureWallet(q: Db | Tx, owner: WalletOwner): Promise<void> {
  await q.query('INSERT INTO wallets (owner_kind, owner_id) VALUES ($1, $2) ON CONFLICT DO NOTHING', [owner.ownerKind, owner.ownerId]);
}

/** Debits `amountPaise` or throws 409 insufficient_wallet_balance (the caller's transaction rolls back). */
export async function debitWallet(tx: Tx, owner: WalletOwner, amountPaise: number, reference: string): Promise<number> {
  const { rows } = await tx.query<{ balance_paise: number }>(
    `UPDATE wallets SET balance_paise = balance_paise - $3, updated_at = now()
      WHERE owner_kind = $1 AND owner_id = $2 AND balance_paise >= $3
      RETURNING balance_paise`,
    [owner.ownerKind, owner.ownerId, amountPaise],
  );
  const row = rows[0];
  if (!row) {
    throw new AppError(409, 'insufficient_wallet_balance', `the ${owner.ownerKind} wallet ${owner.ownerId} cannot cover ${amountPaise} paise`, {
      ownerKind: owner.ownerKind, ownerId: owner.ownerId, requiredPaise: amountPaise,
    });
  }
  await appendEntry(tx, owner, 'order_debit', -amountPaise, row.balance_paise, reference);
  return row.balance_paise;
}

export async function creditWallet(tx: Tx, owner: WalletOwner, kind: Exclude<EntryKind, 'order_debit'>, amountPaise: number, reference: string): Promise<number> {
  const { rows } = await tx.query<{ balance_paise: number }>(
    `UPDATE wallets SET balance_paise = balance_paise + $3, updated_at = now()
      WHERE owner_kind = $1 AND owner_id = $2 RETURNING balance_paise`,
    [owner.ownerKind, owner.ownerId, amountPaise],
  );
  const row = rows[0];
  if (!row) throw new Error(`wallet ${owner.ownerKind}/${owner.ownerId} does not exist`);
  // The unique (owner, kind, reference) key refuses a second credit for the same top-up.
  await appendEntry(tx, owner, kind, amountPaise, row.balance_paise, reference);
  return row.balance_paise;
}

async function appendEntry(tx: Tx, owner: WalletOwner, kind: EntryKind, amountPaise: number, balanceAfterPaise: number, reference: string): Promise<void> {
  await tx.query(
    `INSERT INTO wallet_entries (owner_kind, owner_id, kind, amount_paise, balance_after_paise, reference)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [owner.ownerKind, owner.ownerId, kind, amountPaise, balanceAfterPaise, reference],
  );
}

export interface WalletView {
  ownerKind: WalletOwnerKind;
  ownerId: string;
  balancePaise: number;
  entries: Array<{ kind: EntryKind; amountPaise: number; balanceAfterPaise: number; reference: string; createdAt: string }>;
}

export async function walletView(db: Db, owner: WalletOwner): Promise<WalletView | null> {
  const wallet = await db.query<{ balance_paise: number }>('SELECT balance_paise FROM wallets WHERE owner_kind = $1 AND owner_id = $2', [owner.ownerKind, owner.ownerId]);
  if (!wallet.rows[0]) return null;
  const entries = await db.query<{ kind: EntryKind; amount_paise: number; balance_after_paise: number; reference: string; created_at: Date }>(
    'SELECT kind, amount_paise, balance_after_paise, reference, created_at FROM wallet_entries WHERE owner_kind = $1 AND owner_id = $2 ORDER BY id DESC LIMIT 100',
    [owner.ownerKind, owner.ownerId],
  );
  return {
    ...owner,
    balancePaise: wallet.rows[0].balance_paise,
    entries: entries.rows.map((e) => ({ kind: e.kind, amountPaise: e.amount_paise, balanceAfterPaise: e.balance_after_paise, reference: e.reference, createdAt: e.created_at.toISOString() })),
  };
}
