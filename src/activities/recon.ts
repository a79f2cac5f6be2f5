/** Reconciliation activities: all idempotent database/gateway reads, safe to retry. Long ones
 * heartbeat so a dead worker is noticed quickly. */
import { heartbeat } from '@temporalio/activity';
import type { Config } from '../config/config';
import type { Db } from '../db/pool';
import type { Gateway } from '../gateway/types';
import { istDateOf } from '../domain/calendar';
import type { RzpReconRow } from '../gateway/types';
import { reconcile } from '../recon/reconcile';
import { loadReconInput, recordRunEnd, recordRunStart, saveExceptions, storeReconPages, unknownSettlementIds, upsertSettlement } from '../recon/repository';
import { bankHolidays } from '../recon/holidays';
import { refreshSettlementsAwaitingUtr } from '../recon/settlementEvidence';

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

type ReconDay = { year: number; month: number; day: number };
/** A gateway that can hand the recon report over page by page (memory: one page). Until the adapter
 * has it, the day's rows come in one array and are staged a page at a time. */
type PagedGateway = Gateway & { settlementReconPages?: (day: ReconDay) => AsyncIterable<RzpReconRow[]> };
const STAGE_PAGE = 1000;

async function* reconPages(gateway: PagedGateway, day: ReconDay): AsyncIterable<RzpReconRow[]> {
  if (gateway.settlementReconPages) {
    yield* gateway.settlementReconPages(day);
    return;
  }
  const rows = await gateway.settlementReconRows(day);
  for (let i = 0; i < rows.length; i += STAGE_PAGE) yield rows.slice(i, i + STAGE_PAGE);
}

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
     * pages stream through COPY into a stage and one upsert (storeReconPages). */
    async pullReconDay(input: { day: string }): Promise<{ rows: number; settlements: number }> {
      const [year, month, day] = input.day.split('-').map(Number) as [number, number, number];
      const progress: Record<string, unknown> = { day: input.day, step: 'storing', received: 0 };
      const stored = await whileHeartbeating(progress, () => storeReconPages(db, input.day, reconPages(gateway, { year, month, day }), (received) => {
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

    /** Matches the window and writes its exceptions (reruns update in place). */
    async matchReconWindow(input: { runId: string; from: string; to: string; asOf: string }) {
      const reconInput = await whileHeartbeating({ step: 'loading' }, () => loadReconInput(db, { from: input.from, to: input.to, asOf: input.asOf, holidays }));
      heartbeat({ step: 'matching', rows: reconInput.rows.length });
      const outcome = reconcile(reconInput);
      const saved = await whileHeartbeating({ step: 'saving', exceptions: outcome.exceptions.length }, () => saveExceptions(db, input.runId, input, outcome.exceptions));
      const count = (key: 'reason' | 'class') => outcome.exceptions.reduce<Record<string, number>>((acc, e) => ({ ...acc, [e[key]]: (acc[e[key]] ?? 0) + 1 }), {});
      return { matched: outcome.matched, exceptions: outcome.exceptions.length, byReason: count('reason'), byClass: count('class'), ...saved };
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
