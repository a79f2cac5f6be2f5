/** transfer.processed / transfer.failed webhook effects for the webhook map. A transfer webhook is a
 * hint, never settlement evidence (design §7): it may be forged with a leaked secret, replayed, or
 * stale (Razorpay retries an old event for 24 h). So inside the webhook's transaction nothing about
 * the payout changes; when the transfer could be one of our payouts, an after-commit step fetches it
 * from the provider, records what the fetch says in its own transaction (applyTransferEvidence:
 * processed → settled, failed/reversed → retried with a new key, anything else nothing), and then,
 * unless the payout was already final, signals the payout's run, which reads the row again. No
 * transaction is open during the fetch. If the fetch fails, nothing is lost: an accepted payout's
 * run polls the transfer on a durable timer. */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { z } from 'zod';
import { payoutWorkflowId, transferEvidenceSignal, type TransferEvidence } from '../contracts/payout';
import { inTransaction, type Db } from '../db/pool';
import type { Gateway } from '../gateway/types';
import { logger } from '../logger';
import type { WebhookEffect } from '../webhooks/types';
import { applyTransferEvidence, type RecordingPolicy } from './outcomes';
import { payoutPolicyFrom } from './policy';
import { isTerminal } from './stateMachine';

/** What a transfer webhook carries, read only to decide whether to ask the provider: the id, and the
 * recovery key in the notes. Documented variants pass: `transfer_status` or `status` or neither (the
 * transfer.processed sample has none), notes `[]` or with null values, unknown extra fields kept. */
const transferHintSchema = z.looseObject({
  id: z.string().regex(/^trf_[A-Za-z0-9]{14}$/),
  entity: z.literal('transfer').optional(),
  notes: z.union([z.record(z.string(), z.unknown()), z.array(z.unknown())]).nullish(),
});
const transferPayloadSchema = z.object({ transfer: z.object({ entity: transferHintSchema }) });

function recoveryKeyOf(notes: z.infer<typeof transferHintSchema>['notes']): string {
  if (!notes || Array.isArray(notes)) return '';
  return typeof notes.transaction_id === 'string' ? notes.transaction_id : '';
}

/** Fetches the transfer, records what the provider says, then wakes the payout's run. */
async function followTransferHint(deps: { db: Db; gateway: Gateway; temporal?: Client; policy: RecordingPolicy }, input: { event: TransferEvidence['event']; transferId: string; orderId: string }): Promise<void> {
  const transfer = await deps.gateway.fetchTransfer(input.transferId);
  // `source` names what made us ask; the transfer recorded is the fetched one.
  const applied = await inTransaction(deps.db, (tx) => applyTransferEvidence(tx, { transfer, source: `webhook ${input.event}`, policy: deps.policy }));
  if (applied) logger.debug({ orderId: input.orderId, transferId: transfer.id, event: input.event, providerStatus: transfer.status, payoutStatus: applied.payout.status }, 'transfer webhook checked against the provider');
  // Already final before this webhook (e.g. settled from the create answer): the run learnt it from
  // its own step and has nothing to wait for; a signal would only race its completion.
  if (!deps.temporal || (applied && !applied.moved && isTerminal(applied.payout.status))) return;
  try {
    await deps.temporal.workflow.getHandle(payoutWorkflowId(input.orderId)).signal(transferEvidenceSignal, { event: input.event, transferId: transfer.id });
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    logger.info({ orderId: input.orderId, event: input.event }, 'payout run already closed; the row update stands');
  }
}

function transferEffect(event: TransferEvidence['event']): WebhookEffect {
  return async (tx, envelope, ctx) => {
    const hint = transferPayloadSchema.parse(envelope.payload).transfer.entity;
    const { rows } = await tx.query<{ order_id: string }>(
      'SELECT order_id FROM payouts WHERE provider_transfer_id = $1 OR id::text = $2',
      [hint.id, recoveryKeyOf(hint.notes)],
    );
    const orderId = rows[0]?.order_id;
    if (!orderId) return []; // not one of our payouts (a split's, or not ours at all)
    const deps = { db: ctx.db, gateway: ctx.gateway, temporal: ctx.temporal, policy: payoutPolicyFrom(ctx.config) };
    return [{
      what: `fetch transfer ${hint.id} after ${event} and signal ${payoutWorkflowId(orderId)}`,
      run: () => followTransferHint(deps, { event, transferId: hint.id, orderId }),
    }];
  };
}

export const transferWebhookEffects: Record<TransferEvidence['event'], WebhookEffect> = {
  'transfer.processed': transferEffect('transfer.processed'),
  'transfer.failed': transferEffect('transfer.failed'),
};
