/** Reconciliation activities: all idempotent database/gateway reads, safe to retry. Long ones
 * heartbeat so a dead worker is noticed quickly. */
import { heartbeat } from '@temporalio/activity';
import type { Config } from '../config/config';
import type { Db } from '../db/pool';
import type { Gateway } from '../gateway/types';
import { istDateOf } from '../domain/calendar';
import { matchWindowInDatabase } from '../recon/matchInDatabase';
import { recordRunEnd, recordRunStart, storeReconPages, unknownSettlementIds, upsertSettlement, withFoundExceptions } from '../recon/repository';
import { bankHolidays } from '../recon/holidays';
import { refreshSettlementsAwaitingUtr } from '../recon/settlementEvidence';
import { judgeLedger } from '../recon/ledgerDrift';

/** Keeps heartbeating while one long call (all pages of a day, a 100k-row match) is in flight, so
 * the heartbeat timeout detects a dead worker rather than a slow gateway. */
async function whileHeartbeating<T>(details: Record<string, unknown>, work: () => Promise<T>): Promise<T> {
  heartbeat(details);
  const timer = setInterval(() => heartbeat(details), 10_000);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

export interface ReconActivityDeps { db: Db; gateway: Gateway; config: Config; now?: () => Date }

export function createReconActivities({ db, gateway, config, now = () => new Date() }: ReconActivityDeps) {
  const holidays = bankHolidays(config);
  return {
    /** Records the run and fixes the day due dates are judged against. */
    async startReconRun(input: { runId: string; workflowId: string; from: string; to: string; asOf?: string }): Promise<{ asOf: string }> {
      const asOf = input.asOf ?? istDateOf(now());
      await recordRunStart(db, { ...input, asOf });
      return { asOf };
    },

    /** Pulls every page of one IST day's recon report and stores the rows and their settlements. The
     * pages stream from the gateway (settlementReconPages) through COPY into a stage and one upsert
     * (storeReconPages); memory holds two pages. */
    async pullReconDay(input: { day: string }): Promise<{ rows: number; settlements: number }> {
      const [year, month, day] = input.day.split('-').map(Number) as [number, number, number];
      const progress: Record<string, unknown> = { day: input.day, step: 'storing', received: 0 };
      const stored = await whileHeartbeating(progress, () => storeReconPages(db, input.day, gateway.settlementReconPages({ year, month, day }), (received) => {
        progress.received = received;
      }));
      const ids = stored.settlementIds;
      // Fetch the settlements we have not stored, and those we stored without a UTR (first seen by
      // their webhook or an earlier pull) that were not asked within SETTLEMENT_UTR_REFRESH_MS:
      // matching to the bank credit, next, needs the UTR.
      const missing = await unknownSettlementIds(db, ids);
      for (const id of missing) {
        await upsertSettlement(db, await gateway.fetchSettlement(id), input.day);
        heartbeat({ day: input.day, step: 'settlements' });
      }
      const refreshed = await refreshSettlementsAwaitingUtr(db, gateway, { ids, staleAfterMs: config.SETTLEMENT_UTR_REFRESH_MS, limit: ids.length });
      return { rows: stored.rows, settlements: missing.length + refreshed.checked };
    },

    /** Matches the window in the database and writes its exceptions (reruns update in place):
     * nothing of the window is loaded into the worker (matchInDatabase.ts). */
    async matchReconWindow(input: { runId: string; from: string; to: string; asOf: string }) {
      const window = { from: input.from, to: input.to, asOf: input.asOf, holidays };
      // The pull has just written up to millions of rows: plan the match on statistics that know them
      // (ANALYZE samples a bounded number of rows, whatever the table's size).
      await db.query('ANALYZE recon_rows');
      const { found, saved } = await whileHeartbeating({ step: 'matching' }, () => withFoundExceptions(db, input.runId, window, (tx) => matchWindowInDatabase(tx, window)));
      // Every run, whatever its window: does the ledger as written still say what the rails' rows say?
      const ledger = await whileHeartbeating({ step: 'ledger' }, () => judgeLedger(db, input.runId, input.asOf));
      return { matched: found.matched, gatewayRows: found.gatewayRows, bankCredits: found.bankCredits, bankDebits: found.bankDebits, ...saved, ledgerDrift: ledger };
    },

    async finishReconRun(input: { runId: string; rowsFetched: number; summary: unknown }): Promise<void> {
      await recordRunEnd(db, input.runId, 'completed', input.rowsFetched, input.summary);
    },

    /** Marks a run that failed or was cancelled, with how far it got and why. */
    async failReconRun(input: { runId: string; rowsFetched: number; summary: unknown }): Promise<void> {
      await recordRunEnd(db, input.runId, 'failed', input.rowsFetched, input.summary);
    },
  };
}
