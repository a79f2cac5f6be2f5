/** The payout sweep's activity: finds open payouts by status (oldest first, no age cutoff, through
 * the partial index payouts_open_by_age) and (re)starts payoutWorkflow for each. Starting is USE_EXISTING, so a payout whose run is alive
 * is left alone, and `processing`/`accepted` rows whose run is gone (terminated from the Web UI) get
 * a new run, which starts by resolving. A payout whose run completed and whose transfer was reversed
 * since (ops retried it, and the decision's own start was lost) gets a new run after the completed one.
 * Any other completed run over an open row means the row is older than the run's history (the
 * database was restored to an earlier point): the payout asks the provider before its next send, and
 * an order whose completed run had joined a batch goes back to that batch (batches.ts). The
 * same holds for a batch's own payout, and for an open batch whose run completed (a batch run
 * completes only after its close, so the restore forgot the close and perhaps its transfer). */
import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Config } from '../config/config';
import type { Db } from '../db/pool';
import { payoutWorkflowId, type PayoutWorkflowResult } from '../contracts/payout';
import { payoutBatchWorkflowId } from '../contracts/payoutBatch';
import { logger } from '../logger';
import { DUE_FOR_SEND_SQL } from '../payouts/backlog';
import { readBalanceWall } from '../payouts/balanceWall';
import { markProviderMayKnow, transfersPaused } from '../payouts/repository';
import { wakePayoutWorkflow } from '../payouts/temporalStarter';
import { captureWindowWaitMs, waitingForWindowSql } from '../payouts/captureWindow';
import { startBatchRun } from '../payouts/batchStarter';
import { closePayoutBatch, recordEarlierRunBatch } from '../payouts/batches';

export interface DuePayoutBatch {
  paused: boolean;
  examined: number;
  started: number;
  /** Where the next batch starts (`<created_at ISO>|<payout id>`), null at the end. */
  cursor: string | null;
}

/** `afterOrderId` is what runs started before the cursor change pass; they start from the top. */
export interface DuePayoutQuery { after?: string | null; afterOrderId?: string | null; limit: number }

/** The open payouts the sweep wakes, oldest first after a (created_at, id) cursor ($1, $2), $3 at a time.
 * Not a batched order's payout waiting for the once-more look's window since less than $4 ms (its run
 * sleeps on a durable timer; a wake each sweep would only grow its history): after that it is woken
 * as any other, in case its run was lost. */
export const SWEEP_CANDIDATES_SQL = `
SELECT subject_id AS order_id, batch_id,
                (SELECT b.cutoff_at FROM payout_batches b WHERE b.id = payouts.batch_id) AS cutoff_at,
                amount_paise, vendor_id, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') || '|' || id AS cursor,
                EXISTS (SELECT 1 FROM transfer_reversals r WHERE r.payout_id = payouts.id) AS reversed
         FROM payouts
         WHERE status IN ('pending', 'failed', 'processing', 'accepted')
           -- A start still queued in the outbox (never tried and failed) is the paced drainer's.
           AND NOT EXISTS (SELECT 1 FROM payouts_outbox o WHERE o.order_id = payouts.order_id AND o.attempts = 0)
           AND NOT (${waitingForWindowSql('payouts')}
                    AND capture_window_since > now() - make_interval(secs => COALESCE($4::double precision, 0) / 1000))
           AND ($1::timestamptz IS NULL OR (created_at, id) > ($1::timestamptz, $2::uuid))
         ORDER BY created_at, id
         LIMIT $3`;

/** An open payout as the sweep reads it: `order_id` is its key (a batch's id for a batch's own payout). */
interface OpenPayoutRow { order_id: string; batch_id: string | null; cutoff_at: Date | null; amount_paise: number; vendor_id: string }

/** An order's payout wakes its payoutWorkflow; a batch's own payout its payoutBatchWorkflow (after a
 * completed run, by the batch's key: the new run finds the closed batch's payout and claims it). */
function wakeOpenPayout(client: Client, taskQueue: string, row: OpenPayoutRow, opts: { afterCompletedRun?: boolean } = {}): Promise<'running' | 'closed'> {
  if (row.batch_id && row.cutoff_at && !opts.afterCompletedRun) return startBatchRun(client, taskQueue, { batchId: row.batch_id, cutoffAt: row.cutoff_at.toISOString() });
  return wakePayoutWorkflow(client, taskQueue, row.order_id, { amountPaise: row.amount_paise, vendorId: row.vendor_id }, opts);
}

/** Open batches the sweep looks at per pass, earliest cutoff first. */
const OPEN_BATCHES_PER_SWEEP = 500;

/** The batch run's latest execution, read (a describe adds nothing to a live run's history). */
async function batchRunState(client: Client, batchId: string): Promise<'live' | 'completed' | 'none'> {
  try {
    const { status } = await client.workflow.getHandle(payoutBatchWorkflowId(batchId)).describe();
    if (status.name === 'RUNNING') return 'live';
    return status.name === 'COMPLETED' ? 'completed' : 'none';
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return 'none';
    throw err;
  }
}

/** The batch the order's completed payout run had handed it to, from the run's result: the one record
 * of that membership a restored database cannot erase. Null for any other result or none. */
async function batchOfCompletedRun(client: Client, orderId: string): Promise<string | null> {
  try {
    const result = (await client.workflow.getHandle(payoutWorkflowId(orderId)).result()) as PayoutWorkflowResult;
    return result.kind === 'batched' ? result.batchId : null;
  } catch (err) {
    logger.warn({ err, orderId }, 'could not read the result of a completed payout run');
    return null;
  }
}

export function createPayoutSweepActivities({ db, config }: { db: Db; config: Config }) {
  /** An open batch whose run completed: the restore forgot the close the run made, and maybe the
   * transfer that paid it. The close is made again (the run made it before: its members are all that
   * is left of the sum), its payout is marked so the claim asks the provider by its note first, and a
   * run follows the completed one. A crash between the close and the mark leaves an open batch payout
   * under a completed run, which the next sweep marks and wakes as any other. */
  async function closeForgottenBatch(client: Client, taskQueue: string, batchId: string): Promise<'running' | 'closed'> {
    const payout = await closePayoutBatch(db, batchId, config.PAYOUT_ATTEMPT_CAP, { providerMayKnow: true });
    // No payout, or one already final: the run closed and paid it between our read and its describe.
    if (!payout || !(await markProviderMayKnow(db, batchId))) return 'closed';
    logger.warn({ batchId, payoutId: payout.id }, 'an open batch under a completed run (a restored database): closed again; its payout asks the provider first');
    return wakePayoutWorkflow(client, taskQueue, batchId, { amountPaise: payout.amountPaise, vendorId: payout.vendorId }, { afterCompletedRun: true });
  }

  /** Open batches without a live run. Past the cutoff, a lost run (terminated from the Web UI) gets
   * one again, which closes and pays it; a completed one means a restored database. Once per sweep,
   * at its first page. */
  async function wakeOpenBatches(client: Client, taskQueue: string): Promise<number> {
    const { rows } = await db.query<{ id: string; cutoff_at: Date; overdue: boolean }>(
      `SELECT id, cutoff_at, cutoff_at < now() - interval '1 minute' AS overdue
         FROM payout_batches WHERE status = 'open' ORDER BY cutoff_at LIMIT $1`, [OPEN_BATCHES_PER_SWEEP]);
    let started = 0;
    for (const b of rows) {
      Context.current().heartbeat();
      try {
        const run = await batchRunState(client, b.id);
        let woken: 'running' | 'closed' = 'closed';
        if (run === 'completed') woken = await closeForgottenBatch(client, taskQueue, b.id);
        else if (run === 'none' && b.overdue) woken = await startBatchRun(client, taskQueue, { batchId: b.id, cutoffAt: b.cutoff_at.toISOString() });
        if (woken === 'running') started += 1;
      } catch (err) {
        logger.error({ err, batchId: b.id }, 'sweep could not start a batch\'s run');
      }
    }
    return started;
  }

  /** Behind the balance wall the sweep wakes no one but the oldest payout ready to send, and only
   * once a probe is due: its claim takes the probe (balanceWall.ts), and an accepted probe wakes the rest. */
  async function wakeBalanceProbe(): Promise<DuePayoutBatch> {
    const { rows } = await db.query<OpenPayoutRow>(
      `SELECT p.subject_id AS order_id, p.batch_id, (SELECT b.cutoff_at FROM payout_batches b WHERE b.id = p.batch_id) AS cutoff_at,
              p.amount_paise, p.vendor_id FROM payouts p, transfer_switch t
       WHERE t.id = 1 AND (t.balance_probe_at IS NULL OR t.balance_probe_at <= now())
         AND ${DUE_FOR_SEND_SQL}
       ORDER BY p.created_at, p.id LIMIT 1`);
    const probe = rows[0];
    if (probe) {
      const { client, info } = Context.current();
      await wakeOpenPayout(client, info.taskQueue, probe);
    }
    return { paused: true, examined: probe ? 1 : 0, started: probe ? 1 : 0, cursor: null };
  }

  return {
    async startDuePayouts(input: DuePayoutQuery): Promise<DuePayoutBatch> {
      if (await transfersPaused(db)) return { paused: true, examined: 0, started: 0, cursor: null };
      if (await readBalanceWall(db)) return wakeBalanceProbe();
      const [afterAt, afterId] = input.after ? input.after.split('|') : [null, null];
      const { rows } = await db.query<OpenPayoutRow & { cursor: string; reversed: boolean }>(
        SWEEP_CANDIDATES_SQL,
        [afterAt, afterId, input.limit, captureWindowWaitMs(config)],
      );
      const context = Context.current();
      const { client, info } = context;
      let started = input.after ? 0 : await wakeOpenBatches(client, info.taskQueue);
      for (const row of rows) {
        context.heartbeat();
        try {
          let woken = await wakeOpenPayout(client, info.taskQueue, row);
          if (woken === 'closed') {
            // A completed run over an open row (an order's or a batch's): owed again after a reversal,
            // or the row is older than the run's history (a restored database), and a transfer may
            // have left that it forgets.
            if (!row.reversed) {
              await markProviderMayKnow(db, row.order_id);
              const earlier = row.batch_id ? null : await batchOfCompletedRun(client, row.order_id);
              if (earlier && (await recordEarlierRunBatch(db, row.order_id, earlier))) {
                logger.warn({ orderId: row.order_id, batchId: earlier }, 'an open payout whose completed run had joined a batch (a restored database): it goes back to that batch');
              }
            }
            woken = await wakeOpenPayout(client, info.taskQueue, row, { afterCompletedRun: true });
          }
          if (woken === 'running') started += 1;
        } catch (err) {
          logger.error({ err, orderId: row.order_id, workflowId: payoutWorkflowId(row.order_id) }, 'sweep could not start a payout workflow');
        }
      }
      return { paused: false, examined: rows.length, started, cursor: rows.length === input.limit ? rows[rows.length - 1]!.cursor : null };
    },
  };
}

export type PayoutSweepActivities = ReturnType<typeof createPayoutSweepActivities>;
