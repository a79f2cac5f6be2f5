/** What the Temporal Web UI shows for a payout run: a static summary at start and current details
 * that say the state and the next step. Pure, shared by the starter and the workflow. */
import { formatRupees } from '../domain/money';
import { decidedByWords, explainPayoutCode } from '../payouts/reasons';
import type { PayoutView } from './payout';

export function payoutSummary(p: { amountPaise: number; vendorId: string; orderId: string }): string {
  return `${formatRupees(p.amountPaise)} to ${p.vendorId} for ${p.orderId}`;
}

/** Where a run's trace can be opened: the trace store's UI and the console (both optional). */
export interface TraceLinks { tracesUiUrl?: string; consoleUrl?: string }

/** Markdown for the run's static details (the Web UI's summary): where its state is, and its trace
 * (the trace id the start ran in, linked to the trace store's UI and the console when configured). */
export function payoutStartDetails(orderId: string, traceId: string | null, links: TraceLinks = {}): string {
  const parts = [
    traceId ? (links.tracesUiUrl ? `[trace ${traceId}](${links.tracesUiUrl.replace(/\/$/, '')}/trace/${traceId})` : `trace ${traceId}`) : `spans tagged payouts.order_id = ${orderId}`,
    ...(links.consoleUrl ? [`[the console's payout page](${links.consoleUrl.replace(/\/$/, '')}/console/payouts/${encodeURIComponent(orderId)}#trace)`] : []),
  ];
  return `Payout of order ${orderId}: see the current details for its state and next step.\n\nIts trace: ${parts.join(' · ')}.`;
}

export type PayoutSituation = 'waiting_for_resume' | 'resolving' | 'backoff' | 'capture_window' | null;

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
      if (situation === 'capture_window') {
        return `${head}\n\nWaiting for the missed-webhook sweep's listing window to show the payment (its capture confirmed without a read of its own); then it joins its pair's batch, which pays at the cutoff.`;
      }
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
