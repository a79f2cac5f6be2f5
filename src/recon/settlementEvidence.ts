/** Settlements as evidence: the `settlement.processed` webhook records the settlement (id, amount,
 * fees, tax, status, UTR) into `settlements`, the same table the recon pull fills, and recon matches
 * it to the bank credit by UTR. A settlement first seen without a UTR (Razorpay can announce one
 * before the bank transfer has its reference) would otherwise stay without one and give two false
 * exceptions — the settlement without a bank credit, and the bank credit without a settlement — so
 * it is fetched again, at most every SETTLEMENT_UTR_REFRESH_MS, until it has one. */
import type { Db } from '../db/pool';
import { istDateOf } from '../domain/calendar';
import { settlementSchema } from '../gateway/schemas';
import { GatewayCallError, type Gateway } from '../gateway/types';
import { logger } from '../logger';
import type { WebhookEffect } from '../webhooks/types';
import { z } from 'zod';
import { upsertSettlement } from './repository';

const settlementPayloadSchema = z.object({ settlement: z.object({ entity: settlementSchema }) });

/** The IST day a settlement belongs to, when no recon report has said which day carried it. */
const settlementDayOf = (createdAtSec: number): string => istDateOf(new Date(createdAtSec * 1000));

export const settlementWebhookEffects: Record<'settlement.processed', WebhookEffect> = {
  'settlement.processed': async (tx, envelope) => {
    const { settlement } = settlementPayloadSchema.parse(envelope.payload);
    const s = settlement.entity;
    await upsertSettlement(tx, s, settlementDayOf(s.created_at), 'webhook');
    const fields = { settlementId: s.id, amountPaise: s.amount, utr: s.utr, status: s.status };
    if (s.utr) logger.debug(fields, 'settlement recorded');
    else logger.info(fields, 'settlement recorded without a UTR: it will be fetched again until it has one');
    return [];
  },
};

export interface UtrRefresh { checked: number; utrFound: number; failed: number }

/** Fetches settlements still without a UTR whose last sighting is older than `staleAfterMs`, oldest
 * sighting first (only those in `ids` when given). A fetch that fails is logged and left for the
 * next round; the others carry on. */
export async function refreshSettlementsAwaitingUtr(db: Db, gateway: Gateway, opts: { staleAfterMs: number; limit: number; ids?: readonly string[] }): Promise<UtrRefresh> {
  const { rows } = await db.query<{ id: string; settled_day: string }>(
    `SELECT id, to_char(settled_day, 'YYYY-MM-DD') AS settled_day FROM settlements
      WHERE utr IS NULL AND status <> 'failed' AND last_seen_at <= now() - make_interval(secs => $1::double precision / 1000)
        AND ($3::text[] IS NULL OR id = ANY($3))
      ORDER BY last_seen_at LIMIT $2`,
    [opts.staleAfterMs, opts.limit, opts.ids ?? null],
  );
  const result: UtrRefresh = { checked: 0, utrFound: 0, failed: 0 };
  for (const row of rows) {
    try {
      const s = await gateway.fetchSettlement(row.id);
      await upsertSettlement(db, s, row.settled_day);
      result.checked += 1;
      if (s.utr) result.utrFound += 1;
    } catch (err) {
      if (!(err instanceof GatewayCallError)) throw err;
      logger.error({ err, settlementId: row.id }, 'could not fetch a settlement still without a UTR; asking again next round');
      result.failed += 1;
    }
  }
  if (rows.length > 0) logger.info({ ...result }, 'settlements without a UTR asked again');
  return result;
}
