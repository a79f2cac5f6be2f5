/** The Route split a Razorpay order carried to the vendor: its transfer.processed / transfer.failed
 * webhook settles our `split_transfers` row. A failed split makes the order reappear in the
 * `offline_ledger_open` view, so finance pays the vendor another way. */
import { z } from 'zod';
import type { Tx } from '../db/pool';
import type { WebhookEffect } from '../webhooks/types';

const splitTransferSchema = z.looseObject({
  id: z.string().regex(/^trf_[A-Za-z0-9]{14}$/),
  source: z.string().min(1),
  recipient: z.string().min(1),
});
const payloadSchema = z.object({ transfer: z.object({ entity: splitTransferSchema }) });

/** Our split for this transfer: by transfer id once known, else by its gateway order (or payment) and account. */
async function settleSplit(tx: Tx, transfer: z.infer<typeof splitTransferSchema>, status: 'processed' | 'failed'): Promise<void> {
  await tx.query(
    `UPDATE split_transfers s SET provider_transfer_id = $1, status = $2, updated_at = now()
      WHERE s.status = 'expected'
        AND (s.provider_transfer_id = $1
             OR (s.provider_transfer_id IS NULL AND s.linked_account_id = $3
                 AND s.gateway_order_id IN (SELECT $4::text UNION SELECT gateway_order_id FROM payments WHERE id = $4)))`,
    [transfer.id, status, transfer.recipient, transfer.source],
  );
}

/** Runs `inner` (the payout effect for the same event) and then settles a split, if it is one of ours. */
export function alsoSettlingSplits(event: 'transfer.processed' | 'transfer.failed', inner: WebhookEffect | undefined): WebhookEffect {
  return async (tx, envelope, ctx) => {
    const afterCommit = inner ? await inner(tx, envelope, ctx) : [];
    await settleSplit(tx, payloadSchema.parse(envelope.payload).transfer.entity, event === 'transfer.processed' ? 'processed' : 'failed');
    return afterCommit;
  };
}
