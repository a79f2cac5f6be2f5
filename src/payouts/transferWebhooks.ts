/** transfer.processed / transfer.failed / transfer.reversed webhook effects for the webhook map. A
 * transfer webhook is a hint, never settlement evidence (design §7): it may be forged with a leaked
 * secret, replayed, or stale (Razorpay retries an old event for 24 h). So inside the webhook's
 * transaction nothing about the payout changes; when the transfer could be one of our payouts, an
 * after-commit step fetches it from the provider, records what the fetch says in its own transaction
 * (applyTransferEvidence: processed → settled, failed → retried with a new key, reversed → owed again
 * and parked for ops; for transfer.reversed also a settled payout, transferReversals.ts), and then,
 * unless the payout was final before and still is, signals the payout's run, which reads the row
 * again (a `processed` hint for a payout already settled on that transfer, or whose request is still
 * in flight on its first attempt, is not fetched: it has nothing to add). No transaction is open during the fetch. If the fetch fails, nothing is lost for an accepted
 * payout (its run polls the transfer on a durable timer); a settled payout's reversal whose hint is
 * lost is raised by recon (`reversal-not-in-app`). */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { z } from 'zod';
import { payoutWorkflowId, transferEvidenceSignal, type PayoutStatus, type TransferEvidence } from '../contracts/payout';
import { inTransaction, type Db } from '../db/pool';
import type { Gateway } from '../gateway/types';
import { logger } from '../logger';
import type { WebhookEffect } from '../webhooks/types';
import { applyTransferEvidence, type RecordingPolicy } from './outcomes';
import { payoutPolicyFrom } from './policy';
import { isTerminal } from './stateMachine';
import { classifyReversals, followPayoutReversal, reversalsOf } from './transferReversals';

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
type HintDeps = { db: Db; gateway: Gateway; temporal?: Client; policy: RecordingPolicy };
type Hint = { event: TransferEvidence['event']; transferId: string; orderId: string };

async function followTransferHint(deps: HintDeps, input: Hint): Promise<void> {
  const transfer = await deps.gateway.fetchTransfer(input.transferId);
  const reversals = await classifyReversals(deps.db, deps.gateway, await reversalsOf(deps.gateway, transfer));
  // `source` names what made us ask; the transfer recorded is the fetched one.
  const applied = await inTransaction(deps.db, (tx) => applyTransferEvidence(tx, { transfer, source: `webhook ${input.event}`, policy: deps.policy, reversals }));
  if (applied) logger.debug({ orderId: input.orderId, transferId: transfer.id, event: input.event, providerStatus: transfer.status, payoutStatus: applied.payout.status }, 'transfer webhook checked against the provider');
  await signalRun(deps, input, applied);
}

/** transfer.reversed: the payout is parked when the fetched transfer shows a reversal, from wherever
 * it held that transfer (accepted, settled, parked after a part of it), and the reversals recorded. */
async function followReversalHint(deps: HintDeps, input: Hint & { payoutId: string }): Promise<void> {
  const applied = await followPayoutReversal({ db: deps.db, gateway: deps.gateway, attemptCap: deps.policy.attemptCap }, { payoutId: input.payoutId, transferId: input.transferId, source: `webhook ${input.event}` });
  await signalRun(deps, input, applied);
}

/** Wakes the payout's run to read its row again. */
async function signalRun(deps: HintDeps, input: Hint, applied: { payout: { status: PayoutStatus }; moved: boolean } | null): Promise<void> {
  // Already final before this webhook (e.g. settled from the create answer), or a settled payout
  // parked now whose run has ended: the run learnt it from its own step and has nothing to wait for.
  if (!deps.temporal || (applied && !applied.moved && isTerminal(applied.payout.status))) return;
  try {
    await deps.temporal.workflow.getHandle(payoutWorkflowId(input.orderId)).signal(transferEvidenceSignal, { event: input.event, transferId: input.transferId });
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    logger.info({ orderId: input.orderId, event: input.event }, 'payout run already closed; the row update stands');
  }
}

function transferEffect(event: TransferEvidence['event']): WebhookEffect {
  return async (tx, envelope, ctx) => {
    const hint = transferPayloadSchema.parse(envelope.payload).transfer.entity;
    const { rows } = await tx.query<{ id: string; order_id: string; status: PayoutStatus; provider_transfer_id: string | null; attempts: number }>(
      'SELECT id, subject_id AS order_id, status, provider_transfer_id, attempts FROM payouts WHERE provider_transfer_id = $1 OR id::text = $2 ORDER BY (provider_transfer_id = $1) DESC NULLS LAST LIMIT 1',
      [hint.id, recoveryKeyOf(hint.notes)],
    );
    const payout = rows[0];
    if (!payout) return []; // not one of our payouts (a split's, or not ours at all)
    // A `processed` hint costs no read (issue 37) when it has nothing to add: the payout is settled on
    // the provider's own word about this very transfer (its create answer or a fetch), or its first
    // request is still in flight, so its run is about to hear the provider's answer itself (and, if
    // that answer is lost, its resolver asks the provider). A later attempt's hint may be about an
    // earlier attempt's transfer, so it is fetched, as is any other hint, before it is believed.
    if (event === 'transfer.processed'
      && ((payout.status === 'settled' && payout.provider_transfer_id === hint.id) || (payout.status === 'processing' && payout.attempts === 1))) return [];
    const deps = { db: ctx.db, gateway: ctx.gateway, temporal: ctx.temporal, policy: payoutPolicyFrom(ctx.config) };
    const hinted = { event, transferId: hint.id, orderId: payout.order_id };
    return [{
      what: `fetch transfer ${hint.id} after ${event} and signal ${payoutWorkflowId(payout.order_id)}`,
      run: () => (event === 'transfer.reversed' ? followReversalHint(deps, { ...hinted, payoutId: payout.id }) : followTransferHint(deps, hinted)),
    }];
  };
}

export const transferWebhookEffects: Record<TransferEvidence['event'], WebhookEffect> = {
  'transfer.processed': transferEffect('transfer.processed'),
  'transfer.failed': transferEffect('transfer.failed'),
  'transfer.reversed': transferEffect('transfer.reversed'),
};
