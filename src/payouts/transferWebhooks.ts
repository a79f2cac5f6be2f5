/** transfer.processed / transfer.failed webhook effects for money in's webhook map. Inside the
 * webhook's transaction they record the settlement evidence on the payout; after the commit they
 * signal the payout's run. If the run is gone, the row update stands (the sweep or a new run reads it). */
import { WorkflowNotFoundError } from '@temporalio/client';
import { z } from 'zod';
import { payoutWorkflowId, transferEvidenceSignal, type TransferEvidence } from '../contracts/payout';
import type { RzpTransfer } from '../gateway/types';
import { logger } from '../logger';
import type { WebhookEffect } from '../webhooks/types';
import { applyTransferEvidence } from './outcomes';
import { payoutPolicyFrom } from './policy';
import { transactionIdOf } from './resolution';

const transferEntitySchema = z.looseObject({
  id: z.string().regex(/^trf_[A-Za-z0-9]{14}$/),
  entity: z.literal('transfer'),
  status: z.enum(['created', 'pending', 'processed', 'failed', 'reversed', 'partially_reversed']).optional(),
  recipient: z.string().min(1),
  amount: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  notes: z.union([z.record(z.string(), z.unknown()), z.array(z.unknown())]).optional(),
  error: z.looseObject({ code: z.string().nullable().optional() }).nullable().optional(),
});
const transferPayloadSchema = z.object({ transfer: z.object({ entity: transferEntitySchema }) });

function transferEffect(event: TransferEvidence['event']): WebhookEffect {
  return async (tx, envelope, ctx) => {
    const entity = transferPayloadSchema.parse(envelope.payload).transfer.entity;
    // Razorpay's transfer.processed sample carries no status: the event name is the evidence.
    const transfer = {
      ...entity,
      status: entity.status ?? (event === 'transfer.processed' ? 'processed' : 'failed'),
      notes: entity.notes ?? [],
      error: { code: entity.error?.code ?? null },
    } as unknown as RzpTransfer;
    if (event === 'transfer.failed' && transfer.status === 'processed') (transfer as { status: string }).status = 'failed';
    await applyTransferEvidence(tx, { transfer, source: `webhook ${event}`, policy: payoutPolicyFrom(ctx.config) });
    const { rows } = await tx.query<{ order_id: string }>(
      'SELECT order_id FROM payouts WHERE provider_transfer_id = $1 OR id::text = $2',
      [transfer.id, transactionIdOf(transfer) ?? ''],
    );
    const orderId = rows[0]?.order_id;
    const temporal = ctx.temporal;
    if (!orderId || !temporal) return [];
    return [{
      what: `signal ${payoutWorkflowId(orderId)} with ${event}`,
      run: async () => {
        try {
          await temporal.workflow.getHandle(payoutWorkflowId(orderId)).signal(transferEvidenceSignal, { event, transferId: transfer.id });
        } catch (err) {
          if (!(err instanceof WorkflowNotFoundError)) throw err;
          logger.info({ orderId, event }, 'payout run already closed; the row update stands');
        }
      },
    }];
  };
}

export const transferWebhookEffects: Record<TransferEvidence['event'], WebhookEffect> = {
  'transfer.processed': transferEffect('transfer.processed'),
  'transfer.failed': transferEffect('transfer.failed'),
};
