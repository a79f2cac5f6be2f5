/** One poller per worker process for the payouts waiting on a listing pass (captureListing.ts): it
 * reads the newest pass every `pollMs` while anyone waits and wakes them all when it changes (a pass
 * taken or finished), so a hundred waiting payouts cost one query per poll, not a hundred. */
import type { Db } from '../db/pool';
import { logger } from '../logger';

export interface ListingPassWatch {
  /** Resolves when the newest pass changes, or after `ms`. */
  changeWithin(ms: number): Promise<void>;
}

export function watchListingPasses(db: Db, pollMs = 150): ListingPassWatch {
  const waiters = new Set<() => void>();
  let seen: string | null = null;
  let polling = false;

  async function poll(): Promise<void> {
    try {
      const row = (await db.query<{ state: string }>(
        `SELECT id || ':' || (finished_at IS NOT NULL) AS state FROM provider_listing_passes WHERE kind = 'payments' ORDER BY id DESC LIMIT 1`)).rows[0];
      const state = row?.state ?? 'none';
      if (seen !== null && state !== seen) for (const wake of [...waiters]) wake();
      seen = state;
    } catch (err) {
      logger.warn({ err }, 'reading the listing passes failed; the waiting payouts look again on their own');
    }
    if (waiters.size > 0) setTimeout(() => { void poll(); }, pollMs);
    else { seen = null; polling = false; }
  }

  return {
    changeWithin(ms) {
      return new Promise<void>((resolve) => {
        const wake = () => { clearTimeout(deadline); waiters.delete(wake); resolve(); };
        const deadline = setTimeout(wake, Math.max(0, ms));
        waiters.add(wake);
        if (!polling) { polling = true; void poll(); }
      });
    },
  };
}
