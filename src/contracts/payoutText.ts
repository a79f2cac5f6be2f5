/** What the Temporal Web UI shows for a payout run: a static summary at start and current details
 * that say the state and the next step. Pure, shared by the starter and the workflow. */
import { formatRupees } from '../domain/money';
import { decidedByWords, explainPayoutCode } from '../payouts/reasons';
import type { PayoutView } from './payout';

export function payoutSummary(p: { amountPaise: number; vendorId: string; orderId: string }): string {
  return `${formatRupees(p.amountPaise)} to ${p.vendorId} for ${p.orderId}`;
}

export type PayoutSituation = 'waiting_for_resume' | 'resolving' | 'backoff' | null;

/** Markdown: the state in words, and for a payout that waits for a human the exact API calls. */
export function payoutDetails(view: PayoutView | null, situation: PayoutSituation = null): string {
  if (!view) return 'No payout row yet: waiting for money in to record one.';
  const head = `**${view.status}** · ${payoutSummary(view)} · attempt ${view.attempts} of ${view.attemptLimit}`;
  if (situation === 'waiting_for_resume') {
    return `${head}\n\nDirect transfers are **paused** (kill switch). This run waits and continues by itself when ops resume: \`POST /ops/transfers/resume\`.`;
  }
  switch (view.status) {
    case 'pending':
    case 'failed':
      return situation === 'backoff'
        ? `${head}\n\nNot paid yet${view.lastCode ? ` (${view.lastCode})` : ''}; the next attempt is due at ${view.nextAttemptAt}.`
        : `${head}\n\nAbout to claim and send the transfer.`;
    case 'processing':
      return situation === 'resolving'
        ? `${head}\n\nThe outcome of the last request is unknown: asking Razorpay's ledger for a transfer with this payout's note (\`transaction_id=${view.id}\`) before anything else. Nothing is sent again until it answers.`
        : `${head}\n\nSending the transfer (idempotency key \`${view.idempotencyKey}\`).`;
    case 'accepted':
      return `${head}\n\nRazorpay accepted transfer \`${view.providerTransferId}\`; waiting for \`transfer.processed\` or the next poll to settle it.`;
    case 'parked':
    case 'review': {
      const why = explainPayoutCode(view.lastCode, view.status);
      const path = `/ops/payouts/${view.orderId}`;
      return [
        `${head}`,
        '',
        `**Waiting for ops.** ${why.words}${view.lastCode ? ` (\`${view.lastCode}\`, decided by ${decidedByWords(why.decidedBy)})` : ''}.`,
        `Next: ${why.nextStep}.`,
        '',
        'Decide through the API with an `ops` key (a signal sent from here changes nothing):',
        `- retry: \`POST ${path}/retry {"reason": "…"}\``,
        `- paid by a transfer found at Razorpay (checked against this payout): \`POST ${path}/mark-paid-externally {"reason": "…", "transferId": "trf_…"}\``,
        `- paid another way: \`POST ${path}/mark-paid-externally {"reason": "…", "reference": "UTR…"}\``,
        `- pay offline: \`POST ${path}/pay-offline {"reason": "…"}\``,
        `- cancel: \`POST ${path}/cancel {"reason": "…"}\``,
      ].join('\n');
    }
    case 'settled':
      return `${head}\n\nPaid${view.providerTransferId ? ` by transfer \`${view.providerTransferId}\`` : view.externalReference ? ` outside Razorpay (reference \`${view.externalReference}\`)` : ''}.`;
    case 'offline':
      return `${head}\n\nOps decided to pay it offline: it is in the open offline ledger for finance; no transfer will be sent.`;
    case 'cancelled':
      return `${head}\n\nCancelled by ops: not owed by transfer.`;
    case 'rerouted':
      return `${head}\n\nThe pair's settlement mode changed before it fired: owed offline or by the employer instead of a transfer.`;
    case 'batched':
      return `${head}\n\nThe pair pays on a schedule: this order is in a batch, and the batch's one transfer pays it (\`GET /ops/payouts/${view.orderId}\` names the batch; \`payouts batches\` lists them).`;
  }
}
