/** Employers, vendors and the terms of each (employer, vendor) pair. */
import { AppError } from '../appError';
import type { Db, Tx } from '../db/pool';
import { DEFAULT_DAILY_CUTOFF_IST, type PayoutSchedule } from '../domain/batchWindow';
import type { SettlementMode } from '../domain/routing';
import type { PairTerms } from './orderRules';

type Queryable = Db | Tx;

export interface PairTermsRow extends PairTerms {
  commissionBps: number;
}

/** The pair's current terms, or a clear 422 naming what is unknown. */
export async function pairTermsOrFail(q: Queryable, employerId: string, vendorId: string): Promise<PairTermsRow> {
  const { rows } = await q.query<{ settlement_mode: SettlementMode; commission_bps: number; linked_account_id: string | null }>(
    `SELECT ev.settlement_mode, ev.commission_bps, v.linked_account_id
       FROM employer_vendor ev JOIN vendors v ON v.id = ev.vendor_id
      WHERE ev.employer_id = $1 AND ev.vendor_id = $2`,
    [employerId, vendorId],
  );
  const row = rows[0];
  if (row) return { settlementMode: row.settlement_mode, commissionBps: row.commission_bps, linkedAccountId: row.linked_account_id };
  await pairExistsOrFail(q, employerId, vendorId);
  throw new AppError(422, 'vendor_not_enabled_for_employer', `vendor ${vendorId} is not set up for employer ${employerId}`);
}

export async function createEmployer(db: Db, employer: { id: string; name: string }): Promise<{ created: boolean }> {
  const { rowCount } = await db.query('INSERT INTO employers (id, name) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING', [employer.id, employer.name]);
  // Every employer has a wallet from the start, so an order can be told "insufficient balance".
  await db.query(`INSERT INTO wallets (owner_kind, owner_id) VALUES ('employer', $1) ON CONFLICT DO NOTHING`, [employer.id]);
  return { created: rowCount === 1 };
}

export async function createVendor(db: Db, vendor: { id: string; name: string; linkedAccountId: string | null }): Promise<{ created: boolean }> {
  const { rowCount } = await db.query(
    'INSERT INTO vendors (id, name, linked_account_id) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING',
    [vendor.id, vendor.name, vendor.linkedAccountId],
  );
  return { created: rowCount === 1 };
}

/** Creates or changes a pair's terms; a change affects the next payout to fire, never a settled one. */
export async function upsertPairTerms(db: Db, pair: {
  employerId: string; vendorId: string; settlementMode: SettlementMode; commissionBps: number;
  payoutSchedule?: PayoutSchedule; payoutCutoffIst?: string;
}): Promise<void> {
  await pairExistsOrFail(db, pair.employerId, pair.vendorId);
  await db.query(
    `INSERT INTO employer_vendor (employer_id, vendor_id, settlement_mode, commission_bps, payout_schedule, payout_cutoff_ist) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (employer_id, vendor_id) DO UPDATE
       SET settlement_mode = EXCLUDED.settlement_mode, commission_bps = EXCLUDED.commission_bps,
           payout_schedule = EXCLUDED.payout_schedule, payout_cutoff_ist = EXCLUDED.payout_cutoff_ist, updated_at = now()`,
    [pair.employerId, pair.vendorId, pair.settlementMode, pair.commissionBps, pair.payoutSchedule ?? 'per_order', pair.payoutCutoffIst ?? DEFAULT_DAILY_CUTOFF_IST],
  );
}

export async function employerExists(q: Queryable, employerId: string): Promise<boolean> {
  return ((await q.query('SELECT 1 FROM employers WHERE id = $1', [employerId])).rowCount ?? 0) > 0;
}

/** 422 `unknown_employer` unless the employer exists. */
export async function employerOrFail(q: Queryable, employerId: string): Promise<void> {
  if (!(await employerExists(q, employerId))) throw new AppError(422, 'unknown_employer', `employer ${employerId} does not exist`);
}

async function pairExistsOrFail(db: Queryable, employerId: string, vendorId: string): Promise<void> {
  const { rows } = await db.query<{ employer: boolean; vendor: boolean }>(
    'SELECT EXISTS (SELECT 1 FROM employers WHERE id = $1) AS employer, EXISTS (SELECT 1 FROM vendors WHERE id = $2) AS vendor',
    [employerId, vendorId],
  );
  if (!rows[0]?.employer) throw new AppError(422, 'unknown_employer', `employer ${employerId} does not exist`);
  if (!rows[0]?.vendor) throw new AppError(422, 'unknown_vendor', `vendor ${vendorId} does not exist`);
}
