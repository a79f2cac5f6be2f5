/** Ops routes for payouts (role `ops`): look a payout up by order id, decide on a parked
 * or review payout (retry / mark paid externally / pay offline / cancel, each audited in
 * review_actions and then signalled to its run; pay offline also on a pending or failed one), pause
 * (answering the requests already past the gate) or resume direct transfers, read the counters. */
import type { Client } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { OPS_ACTIONS, payoutWorkflowId, type OpsAction } from '../../contracts/payout';
import type { Config } from '../../config/config';
import type { Db } from '../../db/pool';
import { readPayoutCounters } from '../../payouts/counters';
import { readBacklogReport } from '../../payouts/backlog';
import { csvSafe, transferIdSchema } from '../../domain/schemas';
import { createGateway } from '../../gateway';
import type { Gateway } from '../../gateway/types';
import { fetchTransferEvidence } from '../../payouts/externalTransfer';
import { decideOnPayout, decisionNotTaken, type OpsDecisionResult } from '../../payouts/humanQueue';
import { humanQueueTotals, listHumanQueue, queueFilterSchema } from '../../payouts/queue';
import { quarantineCounts } from '../../webhooks/quarantine';
import { explainPayoutCode } from '../../payouts/reasons';
import { awaitsHuman } from '../../payouts/stateMachine';
import { orderView } from '../../moneyin/orderView';
import { auditFilterSchema, readAuditLog } from '../../audit/auditLog';
import { IN_FLIGHT_LISTED, pauseTransfers, readTransferSwitch, setTransfersPaused } from '../../payouts/killSwitch';
import { findPayoutByOrder } from '../../payouts/repository';
import { batchFilterSchema, batchIdSchema, batchOfPayoutKey, batchTotals, listBatches } from '../../payouts/batchView';
import { closeBatchNow } from '../../payouts/closeBatchNow';
import { signalDecisionAfterCommit, sweepAfterResume } from '../../payouts/afterDecision';
import { auditActor, requires } from '../../auth/routeAuth';
import { AppError } from '../errors';
import { documented } from '../openapi';

export interface OpsPayoutDeps {
  config: Config;
  db: Db;
  temporal?: Client;
  /** Fetches the transfer a mark-paid decision names and lists the transfers before a pay-offline
   * decision (default: the Razorpay adapter built from config). */
  gateway?: Gateway;
}

const orderParams = z.object({ orderId: z.string().min(1).max(100) });
const batchParams = z.object({ batchId: batchIdSchema });
const reasonBody = z.object({ reason: z.string().trim().min(3).max(500) });
// The vendor statement CSV carries it (settlement_reference).
const paymentReference = csvSafe(z.string().trim().min(3).max(100));
const markPaidBody = reasonBody.extend({
  reference: paymentReference.optional(),
  /** The provider transfer that paid it: fetched and checked against the payout, then stored as its transfer. */
  transferId: transferIdSchema.optional(),
}).refine((b) => b.reference || b.transferId, { message: 'mark paid externally needs the reference of the payment made, the Razorpay transfer id (trf_…), or both', path: ['reference'] });
const bulkBody = z.object({
  action: z.enum(OPS_ACTIONS),
  orderIds: z.array(z.string().min(1).max(100)).min(1).max(100),
  reason: z.string().trim().min(3).max(500),
  reference: paymentReference.optional(),
}).strict().refine((b) => b.action !== 'mark_paid_externally' || b.reference, { message: 'mark_paid_externally needs the reference of the payment made', path: ['reference'] });

const DECISION_SUMMARY: Record<OpsAction, string> = {
  retry: 'Retry a parked or review payout (a fresh budget of attempts)',
  mark_paid_externally: 'Mark a payout paid outside our send, with the bank reference or the Razorpay transfer that paid it (checked against the payout; nothing is sent)',
  pay_offline: 'Pay a payout by hand: a pending, failed, parked or review payout moves to offline, joins the open offline ledger, and no transfer is ever sent for it',
  cancel: 'Cancel a payout: not owed by transfer',
};

const MARK_PAID_DESCRIPTION = 'With `transferId`, the transfer is fetched from Razorpay first (502 `gateway_unavailable` when it cannot be, nothing changed) '
  + 'and must carry this payout\'s id as `transaction_id` in its notes, its amount and its linked account, and not be failed or reversed '
  + '(else 422 `transfer_note_mismatch`, `transfer_amount_mismatch`, `transfer_recipient_mismatch`, `transfer_not_paid`, or `transfer_not_found`; '
  + '409 `transfer_already_recorded` when another payout holds it). A processed transfer settles the payout at the provider\'s processing time; '
  + 'a pending one leaves it `accepted` until the provider processes it. The decision\'s audited reference is the transfer id.';

const PAY_OFFLINE_DESCRIPTION = 'Taken under the payout\'s row lock, so no claim takes it afterwards; a processing or accepted payout is refused (409 `payout_not_awaiting_decision`). '
  + 'Razorpay\'s transfers are listed first, over the sends the row records or, when it records none, since the payout was created (502 `gateway_unavailable` when they cannot be, nothing changed); a transfer carrying the payout\'s id in its notes that is not failed or reversed refuses the decision '
  + '(409 `live_transfer_exists`, `details.transferId`): if that transfer pays the payout, mark it paid externally with that `transferId`; one reversed since that our rows do not record at all (a restored database) refuses it too '
  + '(409 `transfer_not_recorded`): the payout asks Razorpay and records it first; decide again once it has. '
  + 'A payout parked with `TRANSFER_PARTIALLY_REVERSED` is refused, as is its retry (409 `transfer_partially_reversed`): either would pay the whole net again.';

const ACTION_OF_PATH: Record<string, OpsAction> = { retry: 'retry', 'mark-paid-externally': 'mark_paid_externally', 'pay-offline': 'pay_offline', cancel: 'cancel' };

export async function opsPayoutRoutes(app: FastifyInstance, deps: OpsPayoutDeps): Promise<void> {
  const cap = deps.config.PAYOUT_ATTEMPT_CAP;
  const ops = requires('ops');
  const gateway = deps.gateway ?? createGateway(deps.config);

  app.get('/ops/payouts/counters', documented(ops, {
    summary: 'Payout health counters, and the provider backlog with its ETA and the balance wall',
    description: '`backlog`: direct-transfer payouts waiting on Razorpay by call class (write: due, claimed, inFlight; read: unknown, awaitingSettlement), '
      + '`etaSeconds` to send what is still to be requested at RAZORPAY_WRITE_RPS (`budgetRps`), against `etaAlertSeconds` (`overEtaBound`), and `balanceWall` '
      + '(null unless the platform balance is short: since when, and `needed` — what the waiting transfers add up to — in paise and in rupees); '
      + '`webhookQuarantine`: signed webhooks set aside (`total`), and those no one has acknowledged yet (`open`, `openByReason`).',
    tags: ['ops'],
  }), async () => {
    const [counters, backlog, webhookQuarantine] = await Promise.all([readPayoutCounters(deps.db), readBacklogReport(deps.db, deps.config), quarantineCounts(deps.db)]);
    return { ...counters, backlog, webhookQuarantine };
  });

  /** The human queue: parked and review payouts, oldest first, with why and what to do next. */
  app.get('/ops/payouts', documented(ops, { summary: 'The human queue: parked and review payouts with amounts, reasons in words, age and Web UI links', description: '`totals`: everything waiting, past the page and the filter: payouts, parked, review and their sum.', tags: ['ops'], querystring: queueFilterSchema }), async (request) => {
    const [page, totals] = await Promise.all([
      listHumanQueue(deps.db, queueFilterSchema.parse(request.query ?? {}), { temporalUiUrl: deps.config.TEMPORAL_UI_URL, namespace: deps.config.TEMPORAL_NAMESPACE }),
      humanQueueTotals(deps.db),
    ]);
    return { ...page, totals };
  });

  /** One decision on many payouts, each applied and audited on its own and answered per order. */
  app.post('/ops/payouts/decisions', documented(ops, { summary: 'One decision on many payouts, each audited and answered per order', tags: ['ops'], body: bulkBody }), async (request) => {
    const body = bulkBody.parse(request.body ?? {});
    const actor = auditActor(request);
    const results = [];
    for (const orderId of new Set(body.orderIds)) {
      let result: OpsDecisionResult;
      try {
        result = await decideOnPayout(deps.db, gateway, { orderId, action: body.action, actor, reason: body.reason, reference: body.reference }, cap);
      } catch (err) {
        // Razorpay could not be asked before paying this one offline: it is unchanged, the others go on.
        if (!(err instanceof AppError) || err.code !== 'gateway_unavailable') throw err;
        results.push({ orderId, result: err.code, status: (await findPayoutByOrder(deps.db, orderId, cap))?.status ?? null });
        continue;
      }
      if (result.kind === 'applied') await signalDecisionAfterCommit(deps.temporal, deps.config.TEMPORAL_TASK_QUEUE, orderId, { action: body.action, actor }, result.decidedFrom);
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
    return {
      payout, ...queued, order: await orderView(deps.db, orderId), attempts: attempts.rows, reviewActions: actions.rows, workflowId: payoutWorkflowId(orderId),
      // A batch's own payout lists the orders it pays; a member order names its batch.
      batch: await batchOfPayoutKey(deps.db, orderId),
    };
  });

  app.get('/ops/batches', documented(ops, { summary: 'Payout batches of pairs on an hourly or daily schedule, newest cutoff first: the window, the sum, the orders, the batch\'s payout', description: 'Filter by pair (`employerId`, `vendorId`), `status` and `day` (an IST day the window overlaps). `totals` counts every batch the filter matches, past the page: batches, open ones, orders and their sum in paise.', tags: ['ops'], querystring: batchFilterSchema }), async (request) => {
    const filter = batchFilterSchema.parse(request.query ?? {});
    const [batches, totals] = await Promise.all([listBatches(deps.db, filter), batchTotals(deps.db, filter)]);
    return { batches, totals };
  });

  app.get('/ops/batches/:batchId', documented(ops, { summary: 'One payout batch with every order inside (its payout and decisions are at /ops/payouts/{batchId})', tags: ['ops'], params: batchParams }), async (request) => {
    const { batchId } = batchParams.parse(request.params);
    const batch = await batchOfPayoutKey(deps.db, batchId);
    if (!batch) throw new AppError(404, 'batch_not_found', `no batch ${batchId}`);
    return { batch };
  });

  app.post('/ops/batches/:batchId/close', documented(ops, { summary: 'Close an open batch now instead of at its cutoff, and pay it (its run closes it; orders arriving after go to the next window)', tags: ['ops'], params: batchParams, body: reasonBody, success: 202 }), async (request, reply) => {
    const { batchId } = batchParams.parse(request.params);
    const { reason } = reasonBody.parse(request.body ?? {});
    const batch = await closeBatchNow({ db: deps.db, temporal: deps.temporal, taskQueue: deps.config.TEMPORAL_TASK_QUEUE }, batchId, { actor: auditActor(request), reason });
    return reply.code(202).send({ batch, closing: true });
  });

  for (const [path, action] of Object.entries(ACTION_OF_PATH)) {
    const markPaid = action === 'mark_paid_externally';
    const description = markPaid ? MARK_PAID_DESCRIPTION : action === 'pay_offline' ? PAY_OFFLINE_DESCRIPTION : undefined;
    app.post(`/ops/payouts/:orderId/${path}`, documented(ops, {
      summary: DECISION_SUMMARY[action], tags: ['ops'], params: orderParams, body: markPaid ? markPaidBody : reasonBody,
      ...(description && { description }),
    }), async (request) => {
      const { orderId } = orderParams.parse(request.params);
      const body = markPaid ? markPaidBody.parse(request.body ?? {}) : { ...reasonBody.parse(request.body ?? {}), reference: undefined, transferId: undefined };
      const actor = auditActor(request);
      // Asked before the decision's transaction: no transaction waits on the provider.
      const transfer = body.transferId ? await fetchTransferEvidence(gateway, body.transferId) : undefined;
      const result = await decideOnPayout(deps.db, gateway, { orderId, action, actor, reason: body.reason, reference: body.reference, transfer }, cap);
      if (result.kind !== 'applied' && result.kind !== 'already_in_effect') throw decisionNotTaken(orderId, result);
      if (result.kind === 'applied') await signalDecisionAfterCommit(deps.temporal, deps.config.TEMPORAL_TASK_QUEUE, orderId, { action, actor }, result.decidedFrom);
      return { payout: result.payout, alreadyInEffect: result.kind === 'already_in_effect' };
    });
  }

  app.get('/ops/transfers/switch', documented(ops, { summary: 'The kill switch for direct transfers: state, who set it and why', tags: ['ops'] }), async () => readTransferSwitch(deps.db));

  /** Who did what, newest first: payout decisions, the kill switch, recon resolutions, bank imports,
   * cash confirmations, API keys. */
  app.get('/ops/audit', documented(requires('ops', 'finance'), { summary: 'Who did what: decisions, the kill switch, recon resolutions, bank imports, cash confirmations, API keys', tags: ['ops'], querystring: auditFilterSchema }), async (request) => ({ entries: await readAuditLog(deps.db, auditFilterSchema.parse(request.query ?? {})) }));
  app.post('/ops/transfers/pause', documented(ops, {
    summary: 'Pause direct transfers (audited): no new request leaves; the answer lists the requests already past the gate, which may still land', tags: ['ops'], body: reasonBody,
    description: 'Answers the switch and `inFlight: {count, payouts: [{orderId, payoutId, amountPaise, linkedAccountId, claimedAt, requestSentAt, outcome}]}`: '
      + `the payouts whose transfer request had passed the last check of the switch before it was sent, without a definitive answer, at the moment of the pause (count exact, the oldest ${IN_FLIGHT_LISTED} listed; outcome null: no answer yet, unknown: the answer was lost and the resolver will ask).`,
  }), async (request) => {
    const { reason } = reasonBody.parse(request.body ?? {});
    return pauseTransfers(deps.db, { actor: auditActor(request), reason });
  });
  app.post('/ops/transfers/resume', documented(ops, { summary: 'Resume direct transfers (audited) and run the payout sweep at once', tags: ['ops'], body: reasonBody }), async (request) => {
    const { reason } = reasonBody.parse(request.body ?? {});
    const state = await setTransfersPaused(deps.db, { paused: false, actor: auditActor(request), reason });
    // Everything the pause held back is paid now, not at the next Schedule tick.
    const sweep = await sweepAfterResume(deps.temporal, deps.config.TEMPORAL_TASK_QUEUE);
    return { ...state, sweep };
  });
}
