/** A payment the customer's bank disputes is a recon exception (`payment-disputed`), one per dispute,
 * raised by the `payment.dispute.*` webhooks (payload: the payment and the dispute, Razorpay's
 * Disputes entity: id `disp_…`, payment_id, amount, amount_deducted, status, phase, respond_by).
 *
 * Choice: every dispute event updates the same exception with the dispute's latest status, phase and
 * deducted amount; `won` resolves it (audited, actor `razorpay:<event>`: nothing was deducted and
 * nothing is left to do); `lost` and `closed` keep it open for finance, who must book or recover
 * the deducted amount. A late, out-of-order event about an earlier stage never overwrites a final
 * one (won, lost, closed). */
import { z } from 'zod';
import type { Tx } from '../db/pool';
import { istDateOf } from '../domain/calendar';
import { logger } from '../logger';
import type { WebhookEffect } from '../webhooks/types';
import { raiseEventException, resolveEventException } from './eventExceptions';
import { draft } from './reconcile';

const paise = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

export const disputeEntitySchema = z.looseObject({
  id: z.string().regex(/^disp_[A-Za-z0-9]{14}$/),
  entity: z.literal('dispute'),
  payment_id: z.string().regex(/^pay_[A-Za-z0-9]{14}$/),
  amount: paise,
  currency: z.string().length(3),
  amount_deducted: paise.nullable().optional(),
  reason_code: z.string().nullable().optional(),
  respond_by: z.number().int().nullable().optional(),
  status: z.string().min(1),
  phase: z.string().nullable().optional(),
  created_at: z.number().int().nonnegative(),
});
export type DisputeEntity = z.infer<typeof disputeEntitySchema>;
const disputePayloadSchema = z.object({ dispute: z.object({ entity: disputeEntitySchema }) });

export const DISPUTE_EVENTS = [
  'payment.dispute.created', 'payment.dispute.won', 'payment.dispute.lost',
  'payment.dispute.closed', 'payment.dispute.under_review', 'payment.dispute.action_required',
] as const;

const FINAL = ['won', 'lost', 'closed'];

const NEXT_ACTION: Record<string, string> = {
  lost: 'Dispute lost: the deducted amount left our Razorpay balance. Recover it (vendor, employer) or book the loss.',
  closed: 'Dispute closed: check the deducted amount on the Razorpay Dashboard and book the outcome.',
  action_required: 'Razorpay needs more evidence for this dispute: add or fix the documents and contest again before the respond-by date.',
};

export const disputeExceptionKey = (disputeId: string): string => `payment-disputed|${disputeId}`;

async function recordDispute(tx: Tx, event: string, dispute: DisputeEntity, eventAt: number): Promise<void> {
  const { rows } = await tx.query<{ order_id: string | null }>('SELECT order_id FROM payments WHERE id = $1', [dispute.payment_id]);
  const orderId = rows[0]?.order_id ?? null;
  const key = disputeExceptionKey(dispute.id);
  // A stale event about an earlier stage must not reopen the story of a finished dispute.
  const { rows: current } = await tx.query<{ status: string | null }>(`SELECT details->>'status' AS status FROM recon_exceptions WHERE key = $1`, [key]);
  if (current[0]?.status && FINAL.includes(current[0].status) && !FINAL.includes(dispute.status)) {
    logger.info({ event, disputeId: dispute.id, status: dispute.status, recorded: current[0].status }, 'dispute event older than the recorded outcome: ignored');
    return;
  }
  const exception = draft('payment-disputed', 'unmatched', dispute.id, istDateOf(new Date(dispute.created_at * 1000)), {
    entityId: dispute.payment_id, orderId, expectedPaise: dispute.amount, actualPaise: dispute.amount_deducted ?? 0,
    details: {
      disputeId: dispute.id, paymentId: dispute.payment_id, status: dispute.status, phase: dispute.phase ?? null, reasonCode: dispute.reason_code ?? null,
      respondBy: dispute.respond_by ?? null, amountDeductedPaise: dispute.amount_deducted ?? 0, lastEvent: event,
    },
  });
  await raiseEventException(tx, { ...exception, nextAction: NEXT_ACTION[dispute.status] ?? exception.nextAction }, `${event}@${eventAt}`);
  logger.warn({ event, disputeId: dispute.id, paymentId: dispute.payment_id, orderId, amountPaise: dispute.amount, status: dispute.status }, 'payment disputed: recon exception recorded');
  if (dispute.status === 'won') {
    await resolveEventException(tx, key, `razorpay:${event}`, `dispute ${dispute.id} won: nothing deducted (${dispute.amount_deducted ?? 0} paise)`);
  }
}

const disputeEffect: WebhookEffect = async (tx, envelope) => {
  const { dispute } = disputePayloadSchema.parse(envelope.payload);
  await recordDispute(tx, envelope.event, dispute.entity, envelope.created_at);
  return [];
};

export const disputeWebhookEffects: Record<(typeof DISPUTE_EVENTS)[number], WebhookEffect> =
  Object.fromEntries(DISPUTE_EVENTS.map((event) => [event, disputeEffect])) as Record<(typeof DISPUTE_EVENTS)[number], WebhookEffect>;
