/** Reconciliation activities: all idempotent database/gateway reads, safe to retry. Long ones
 * heartbeat so a dead worker is noticed quickly. */
import { heartbeat } from '@temporalio/activity';
import type { Config } from '../config/config';
import type { Db } from '../db/pool';
import type { Gateway } from '../gateway/types';
import { istDateOf } from '../domain/calendar';
import { toStoredRow } from '../recon/gatewayRows';
import { reconcile } from '../recon/reconcile';
import { loadReconInput, recordRunEnd, recordRunStart, saveExceptions, unknownSettlementIds, upsertReconRows, upsertSettlement } from '../recon/repository';
import { bankHolidays } from '../recon/holidays';

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

    /** Pulls every page of one IST day's recon report and stores the rows and their settlements. */
    async pullReconDay(input: { day: string }): Promise<{ rows: number; settlements: number }> {
      const [year, month, day] = input.day.split('-').map(Number) as [number, number, number];
      heartbeat({ day: input.day, step: 'fetching' });
      const raw = await gateway.settlementReconRows({ year, month, day });
      const rows = raw.map((r) => toStoredRow(r, input.day));
      await upsertReconRows(db, rows);
      heartbeat({ day: input.day, step: 'stored', rows: rows.length });
      const ids = [...new Set(rows.map((r) => r.settlementId).filter((id): id is string => !!id))];
      // Settlements are immutable once processed; fetch only ones we have not stored.
      const missing = await unknownSettlementIds(db, ids);
      for (const id of missing) {
        await upsertSettlement(db, await gateway.fetchSettlement(id), input.day);
        heartbeat({ day: input.day, step: 'settlements' });
      }
      return { rows: rows.length, settlements: missing.length };
    },

    /** Matches the window and writes its exceptions (reruns update in place). */
    async matchReconWindow(input: { runId: string; from: string; to: string; asOf: string }) {
      heartbeat({ step: 'loading' });
      const reconInput = await loadReconInput(db, { from: input.from, to: input.to, asOf: input.asOf, holidays });
      heartbeat({ step: 'matching', rows: reconInput.rows.length });
      const outcome = reconcile(reconInput);
      heartbeat({ step: 'saving', exceptions: outcome.exceptions.length });
      const saved = await saveExceptions(db, input.runId, input, outcome.exceptions);
      const count = (key: 'reason' | 'class') => outcome.exceptions.reduce<Record<string, number>>((acc, e) => ({ ...acc, [e[key]]: (acc[e[key]] ?? 0) + 1 }), {});
      return { matched: outcome.matched, exceptions: outcome.exceptions.length, byReason: count('reason'), byClass: count('class'), ...saved };
    },

    async finishReconRun(input: { runId: string; rowsFetched: number; summary: unknown }): Promise<void> {
      await recordRunEnd(db, input.runId, 'completed', input.rowsFetched, input.summary);
    },
  };
}
