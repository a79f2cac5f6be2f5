/** Ops routes for payouts (role `ops`): look a payout up by order id, decide on a parked
 * or review payout (retry / mark paid externally / cancel, each audited in review_actions and then
 * signalled to its run), pause or resume direct transfers, read the counters. */
import type { Client } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { payoutWorkflowId, type OpsAction } from '../../contracts/payout';
import type { Config } from '../../config/config';
import type { Db } from '../../db/pool';
import { logger } from '../../logger';
import { readPayoutCounters } from '../../payouts/counters';
import { applyOpsDecision } from '../../payouts/humanQueue';
import { readTransferSwitch, setTransfersPaused } from '../../payouts/killSwitch';
import { findPayoutByOrder } from '../../payouts/repository';
import { signalOpsDecision } from '../../payouts/signals';
import { startPayoutSweepNow } from '../../payouts/temporalStarter';
import { auditActor, requires } from '../../auth/routeAuth';
import { AppError } from '../errors';

export interface OpsPayoutDeps {
  config: Config;
  db: Db;
  temporal?: Client;
}

const orderParams = z.object({ orderId: z.string().min(1).max(100) });
const reasonBody = z.object({ reason: z.string().trim().min(3).max(500) });
const markPaidBody = reasonBody.extend({ reference: z.string().trim().min(3).max(100) });

const ACTION_OF_PATH: Record<string, OpsAction> = { retry: 'retry', 'mark-paid-externally': 'mark_paid_externally', 'pay-offline': 'pay_offline', cancel: 'cancel' };

export async function opsPayoutRoutes(app: FastifyInstance, deps: OpsPayoutDeps): Promise<void> {
  const cap = deps.config.PAYOUT_ATTEMPT_CAP;
  const ops = requires('ops');

  app.get('/ops/payouts/counters', ops, async () => readPayoutCounters(deps.db));

  app.get('/ops/payouts/:orderId', ops, async (request) => {
    const { orderId } = orderParams.parse(request.params);
    const payout = await findPayoutByOrder(deps.db, orderId, cap);
    if (!payout) throw new AppError(404, 'payout_not_found', `no payout for order ${orderId}`);
    const attempts = await deps.db.query(
      `SELECT attempt_no, idempotency_key, outcome, provider_code, provider_transfer_id, workflow_run_id, created_at
       FROM payout_attempts WHERE payout_id = $1 ORDER BY id`, [payout.id]);
    const actions = await deps.db.query(
      'SELECT actor, action, reason, reference, created_at FROM review_actions WHERE payout_id = $1 ORDER BY id', [payout.id]);
    return { payout, attempts: attempts.rows, reviewActions: actions.rows, workflowId: payoutWorkflowId(orderId) };
  });

  for (const [path, action] of Object.entries(ACTION_OF_PATH)) {
    app.post(`/ops/payouts/:orderId/${path}`, ops, async (request) => {
      const { orderId } = orderParams.parse(request.params);
      const body = action === 'mark_paid_externally' ? markPaidBody.parse(request.body ?? {}) : { ...reasonBody.parse(request.body ?? {}), reference: undefined };
      const actor = auditActor(request);
      const result = await applyOpsDecision(deps.db, { orderId, action, actor, reason: body.reason, reference: body.reference }, cap);
      if (result.kind === 'not_found') throw new AppError(404, 'payout_not_found', `no payout for order ${orderId}`);
      if (result.kind === 'not_awaiting_decision') {
        throw new AppError(409, 'payout_not_awaiting_decision', `payout is ${result.payout.status}; only parked or review payouts take ops decisions`);
      }
      await signalRun(deps, orderId, action, actor);
      return { payout: result.payout };
    });
  }

  app.get('/ops/transfers/switch', ops, async () => readTransferSwitch(deps.db));
  app.post('/ops/transfers/pause', ops, async (request) => {
    const { reason } = reasonBody.parse(request.body ?? {});
    return setTransfersPaused(deps.db, { paused: true, actor: auditActor(request), reason });
  });
  app.post('/ops/transfers/resume', ops, async (request) => {
    const { reason } = reasonBody.parse(request.body ?? {});
    const state = await setTransfersPaused(deps.db, { paused: false, actor: auditActor(request), reason });
    // Everything the pause held back is paid now, not at the next Schedule tick.
    const sweep = await sweepNow(deps);
    return { ...state, sweep };
  });
}

/** After the resume is committed; if the start fails the Schedule's next sweep does the same work. */
async function sweepNow(deps: OpsPayoutDeps): Promise<{ workflowId: string } | null> {
  if (!deps.temporal) return null;
  try {
    return { workflowId: await startPayoutSweepNow(deps.temporal, deps.config.TEMPORAL_TASK_QUEUE) };
  } catch (err) {
    logger.error({ err }, 'transfers resumed but the payout sweep could not be started now; the Schedule will run it');
    return null;
  }
}

/** After the commit: the decision stands even if the signal fails (the run re-reads its row). */
async function signalRun(deps: OpsPayoutDeps, orderId: string, action: OpsAction, actor: string): Promise<void> {
  if (!deps.temporal) return;
  try {
    await signalOpsDecision(deps.temporal, deps.config.TEMPORAL_TASK_QUEUE, orderId, { action, actor });
  } catch (err) {
    logger.error({ err, orderId, action }, 'ops decision committed but the payout run could not be signalled');
  }
}
