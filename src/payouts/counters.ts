/** Payout health counters, derived from append-only rows and current statuses so they cannot drift:
 * lost claims, parked payouts, unknown outcomes, recovered transfers, oldest `processing` age. */
import type { Db } from '../db/pool';
import { RESOLVER_LISTING_FAILING } from './outcomes';

export interface PayoutCounters {
  lostClaims: number;
  parkedPayouts: number;
  unknownOutcomes: number;
  recoveredTransfers: number;
  /** Seconds since the oldest `processing` payout was claimed; 0 when none is processing. */
  oldestProcessingAgeSeconds: number;
  /** Payouts the resolver handed to review because the provider's listing kept failing. */
  resolverGaveUp: number;
}

export async function readPayoutCounters(db: Db): Promise<PayoutCounters> {
  const { rows } = await db.query<{ lost: number; parked: number; unknown: number; recovered: number; oldest: number; gave_up: number }>(`
    SELECT (SELECT count(*) FROM payout_lost_claims)::int8 AS lost,
           (SELECT count(*) FROM payouts WHERE status = 'parked')::int8 AS parked,
           (SELECT count(*) FROM payout_attempts WHERE outcome = 'unknown')::int8 AS unknown,
           (SELECT count(*) FROM payout_attempts WHERE outcome = 'recovered')::int8 AS recovered,
           COALESCE((SELECT floor(extract(epoch FROM now() - min(claimed_at))) FROM payouts WHERE status = 'processing'), 0)::int8 AS oldest,
           (SELECT count(*) FROM payouts WHERE last_code = $1)::int8 AS gave_up`, [RESOLVER_LISTING_FAILING]);
  const r = rows[0]!;
  return { lostClaims: r.lost, parkedPayouts: r.parked, unknownOutcomes: r.unknown, recoveredTransfers: r.recovered, oldestProcessingAgeSeconds: r.oldest, resolverGaveUp: r.gave_up };
}
