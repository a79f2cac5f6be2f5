/** Ops routes for payouts (role `ops`): look a payout up by order id, decide on a parked
 * or review payout (retry / mark paid externally / cancel, each audited in review_actions and then
 * signalled to its run), pause or resume direct transfers, read the counters. */
import type { Client } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { OPS_ACTIONS, payoutWorkflowId, type OpsAction } from '../../contracts/payout';
import type { Config } from '../../config/config';
import type { Db } from '../../db/pool';
import { readPayoutCounters } from '../../payouts/counters';
import { applyOpsDecision } from '../../payouts/humanQueue';
import { listHumanQueue, queueFilterSchema } from '../../payouts/queue';
import { explainPayoutCode } from '../../payouts/reasons';
import { awaitsHuman } from '../../payouts/stateMachine';
import { orderView } from '../../moneyin/orderView';
import { auditFilterSchema, readAuditLog } from '../../audit/auditLog';
import { readTransferSwitch, setTransfersPaused } from '../../payouts/killSwitch';
import { findPayoutByOrder } from '../../payouts/repository';
import { signalDecisionAfterCommit, sweepAfterResume } from '../../payouts/afterDecision';
import { auditActor, requires } from '../../auth/routeAuth';
import { AppError } from '../errors';
import { documented } from '../openapi';

export interface OpsPayoutDeps {
  config: Config;
  db: Db;
  temporal?: Client;
}

const orderParams = z.object({ orderId: z.string().min(1).max(100) });
const reasonBody = z.object({ reason: z.string().trim().min(3).max(500) });
const markPaidBody = reasonBody.extend({ reference: z.string().trim().min(3).max(100) });
const bulkBody = z.object({
  action: z.enum(OPS_ACTIONS),
  orderIds: z.array(z.string().min(1).max(100)).min(1).max(100),
  reason: z.string().trim().min(3).max(500),
  reference: z.string().trim().min(3).max(100).optional(),
}).strict().refine((b) => b.action !== 'mark_paid_externally' || b.reference, { message: 'mark_paid_externally needs the reference of the payment made', path: ['reference'] });

const DECISION_SUMMARY: Record<OpsAction, string> = {
  retry: 'Retry a parked or review payout (a fresh budget of attempts)',
  mark_paid_externally: 'Mark a payout paid outside Razorpay, with the reference (nothing is sent)',
  pay_offline: 'Pay a payout offline: it joins the open offline ledger and no transfer is ever sent',
  cancel: 'Cancel a payout: not owed by transfer',
};

const ACTION_OF_PATH: Record<string, OpsAction> = { retry: 'retry', 'mark-paid-externally': 'mark_paid_externally', 'pay-offline': 'pay_offline', cancel: 'cancel' };

export async function opsPayoutRoutes(app: FastifyInstance, deps: OpsPayoutDeps): Promise<void> {
  const cap = deps.config.PAYOUT_ATTEMPT_CAP;
  const ops = requires('ops');

  app.get('/ops/payouts/counters', documented(ops, { summary: 'Payout health counters', tags: ['ops'] }), async () => readPayoutCounters(deps.db));

  /** The human queue: parked and review payouts, oldest first, with why and what to do next. */
  app.get('/ops/payouts', documented(ops, { summary: 'The human queue: parked and review payouts with amounts, reasons in words, age and Web UI links', tags: ['ops'], querystring: queueFilterSchema }), async (request) => listHumanQueue(deps.db, queueFilterSchema.parse(request.query ?? {}), {
    temporalUiUrl: deps.config.TEMPORAL_UI_URL, namespace: deps.config.TEMPORAL_NAMESPACE,
  }));

  /** One decision on many payouts, each applied and audited on its own and answered per order. */
  app.post('/ops/payouts/decisions', documented(ops, { summary: 'One decision on many payouts, each audited and answered per order', tags: ['ops'], body: bulkBody }), async (request) => {
    const body = bulkBody.parse(request.body ?? {});
    const actor = auditActor(request);
    const results = [];
    for (const orderId of new Set(body.orderIds)) {
      const result = await applyOpsDecision(deps.db, { orderId, action: body.action, actor, reason: body.reason, reference: body.reference }, cap);
      if (result.kind === 'applied') await signalDecisionAfterCommit(deps.temporal, deps.config.TEMPORAL_TASK_QUEUE, orderId, { action: body.action, actor });
      results.push({ orderId, result: result.kind, status: 'payout' in result ? result.payout.status : null });
    }
    return { action: body.action, results };
  });

  app.get('/ops/payouts/:orderId', documented(ops, { summary: 'One payout: why it waits, its attempts with the raw answers, decisions, the order it pays', tags: ['ops'], params: orderParams }), async (request) => {
    const { orderId } = orderParams.parse(request.params);
    const payout = await findPayoutByOrder(deps.db, orderId, cap);
    if (!payout) throw new AppError(404, 'payout_not_found', `no payout for order ${orderId}`);
    const attempts = await deps.db.query(
      `SELECT attempt_no, idempotency_key, outcome, provider_code, provider_transfer_id, workflow_run_id, raw, created_at
       FROM payout_attempts WHERE payout_id = $1 ORDER BY id`, [payout.id]);
    const actions = await deps.db.query(
      'SELECT actor, action, reason, reference, created_at FROM review_actions WHERE payout_id = $1 ORDER BY id', [payout.id]);
    const [queued] = awaitsHuman(payout.status) ? [{ reason: { code: payout.lastCode, ...explainPayoutCode(payout.lastCode, payout.status) } }] : [];
    return { payout, ...queued, order: await orderView(deps.db, orderId), attempts: attempts.rows, reviewActions: actions.rows, workflowId: payoutWorkflowId(orderId) };
  });

  for (const [path, action] of Object.entries(ACTION_OF_PATH)) {
    app.post(`/ops/payouts/:orderId/${path}`, documented(ops, { summary: DECISION_SUMMARY[action], tags: ['ops'], params: orderParams, body: action === 'mark_paid_externally' ? markPaidBody : reasonBody }), async (request) => {
      const { orderId } = orderParams.parse(request.params);
      const body = action === 'mark_paid_externally' ? markPaidBody.parse(request.body ?? {}) : { ...reasonBody.parse(request.body ?? {}), reference: undefined };
      const actor = auditActor(request);
      const result = await applyOpsDecision(deps.db, { orderId, action, actor, reason: body.reason, reference: body.reference }, cap);
      if (result.kind === 'not_found') throw new AppError(404, 'payout_not_found', `no payout for order ${orderId}`);
      if (result.kind === 'not_awaiting_decision') {
        throw new AppError(409, 'payout_not_awaiting_decision', `payout is ${result.payout.status}; only parked or review payouts take ops decisions`);
      }
      if (result.kind === 'applied') await signalDecisionAfterCommit(deps.temporal, deps.config.TEMPORAL_TASK_QUEUE, orderId, { action, actor });
      return { payout: result.payout, alreadyInEffect: result.kind === 'already_in_effect' };
    });
  }

  app.get('/ops/transfers/switch', documented(ops, { summary: 'The kill switch for direct transfers: state, who set it and why', tags: ['ops'] }), async () => readTransferSwitch(deps.db));

  /** Who did what, newest first: payout decisions, the kill switch, recon resolutions, bank imports,
   * cash confirmations, API keys. */
  app.get('/ops/audit', documented(requires('ops', 'finance'), { summary: 'Who did what: decisions, the kill switch, recon resolutions, bank imports, cash confirmations, API keys', tags: ['ops'], querystring: auditFilterSchema }), async (request) => ({ entries: await readAuditLog(deps.db, auditFilterSchema.parse(request.query ?? {})) }));
  app.post('/ops/transfers/pause', documented(ops, { summary: 'Pause direct transfers (audited); runs wait, nothing is sent', tags: ['ops'], body: reasonBody }), async (request) => {
    const { reason } = reasonBody.parse(request.body ?? {});
    return setTransfersPaused(deps.db, { paused: true, actor: auditActor(request), reason });
  });
  app.post('/ops/transfers/resume', documented(ops, { summary: 'Resume direct transfers (audited) and run the payout sweep at once', tags: ['ops'], body: reasonBody }), async (request) => {
    const { reason } = reasonBody.parse(request.body ?? {});
    const state = await setTransfersPaused(deps.db, { paused: false, actor: auditActor(request), reason });
    // Everything the pause held back is paid now, not at the next Schedule tick.
    const sweep = await sweepAfterResume(deps.temporal, deps.config.TEMPORAL_TASK_QUEUE);
    return { ...state, sweep };
  });
}
