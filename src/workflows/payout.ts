/** payoutWorkflow, id `payout-<orderId>`: pays a vendor its net for one order at most once and, unless
 * a human decides otherwise, at least once. The story: resolve if a claim is stale → claim (routing
 * and kill switch at fire time) → transfer → classify and record → wait for settlement; failures go
 * round again after a durable backoff, and parked/review payouts wait for an ops decision. */
import {
  ActivityFailure, ApplicationFailure, condition, continueAsNew, patched, proxyActivities, proxyLocalActivities, setCurrentDetails, setHandler, sleep, upsertSearchAttributes, workflowInfo,
} from '@temporalio/workflow';
import { payoutDetails, type PayoutSituation } from '../contracts/payoutText';
import type { PayoutActivities, TransferRequest, TransferSendOutcome } from '../activities/payout';
import {
  opsDecisionSignal, payoutStateQuery, transferEvidenceSignal, transfersResumedSignal, TRANSFERS_PAUSED,
  type PayoutPolicy, type PayoutStepLog, type PayoutView, type PayoutWorkflowInput, type PayoutWorkflowResult,
} from '../contracts/payout';
import { PayoutStatusAttr, VendorIdAttr } from '../contracts/searchAttributes';
import type { MoneyOutcome, RzpTransfer } from '../gateway/types';

/** Idempotent database steps: safe to retry. */
const databaseCall = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 20 },
} as const;

/** The money-moving call is never retried by Temporal: a retry is a decision of the workflow. */
function moneyMovingCall(policy: PayoutPolicy) {
  return { startToCloseTimeout: policy.transferTimeoutMs, retry: { maximumAttempts: 1 } };
}

const remoteDb = proxyActivities<PayoutActivities>(databaseCall);
/** The same short, idempotent database steps as local activities: no activity task round trip, a
 * marker in the history instead of three events (issue 12). Never the money-moving call. */
const localDb = proxyLocalActivities<PayoutActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '10 seconds', maximumAttempts: 20 },
});
/** The resolver pages through the provider's listing and heartbeats while it does. */
const { resolveUnknownTransfer: askProviderLedger } = proxyActivities<PayoutActivities>({
  ...databaseCall, startToCloseTimeout: '5 minutes', heartbeatTimeout: '30 seconds',
});
const MAX_STEP_LOG = 50;
const TERMINAL: ReadonlySet<string> = new Set(['settled', 'cancelled', 'rerouted', 'offline']);
/** Statuses after which a run that found no transfer due may end: final, or never claimed. */
const SETTLED_OR_OPEN_FOR_CLAIM: ReadonlySet<string> = new Set(['settled', 'cancelled', 'rerouted', 'offline', 'pending', 'failed']);
/** The failure type of a run that lost a claim on a row still waiting for one. */
const LOST_CLAIM = 'PayoutLostClaim';

export async function payoutWorkflow(input: PayoutWorkflowInput): Promise<PayoutWorkflowResult> {
  const { orderId } = input;
  let payout: PayoutView | null = null;
  const steps: PayoutStepLog[] = [];
  let settlementEvidence = false;
  let opsDecision = false;

  const note = (step: string, detail: string) => {
    steps.push({ step, detail });
    if (steps.length > MAX_STEP_LOG) steps.shift();
  };
  let published = '';
  /** What the Web UI shows as the run's current details: the state and the next step. */
  const explain = (situation: PayoutSituation = null) => setCurrentDetails(payoutDetails(payout, situation));
  const publish = (view: PayoutView | null) => {
    payout = view;
    explain();
    // Search attributes only when they change: each upsert is a command in the history.
    if (!view || published === `${view.status}/${view.vendorId}`) return;
    published = `${view.status}/${view.vendorId}`;
    upsertSearchAttributes([{ key: PayoutStatusAttr, value: view.status }, { key: VendorIdAttr, value: view.vendorId }]);
  };

  setHandler(payoutStateQuery, () => ({ orderId, payout, steps }), { description: 'The payout row as this run last read it, and the steps the run took (newest last).' });
  setHandler(transferEvidenceSignal, (e) => { settlementEvidence = true; note('evidence', `${e.event} ${e.transferId}`); },
    { description: 'A transfer webhook arrived: fetch the transfer now instead of waiting for the next poll.' });
  let resumed = false;
  setHandler(transfersResumedSignal, () => { resumed = true; note('switch', 'transfers resumed'); },
    { description: 'Ops resumed direct transfers: a run waiting out the kill switch claims again.' });
  // A signal is only a nudge to re-read the row: a decision counts once it is recorded (the ops API
  // writes review_actions and the status first). One sent by hand from the Web UI or CLI with no
  // recorded decision changes nothing, and the step log says so.
  let signalled: { action: string; actor: string } | null = null;
  setHandler(opsDecisionSignal, (d) => { opsDecision = true; signalled = d; note('ops', `signal ${d.action} by ${d.actor}: re-reading the payout for a recorded decision`); },
    { description: 'Sent by the ops API after it recorded a decision; the run re-reads the payout. Sent by hand, it changes nothing.' });

  /** Transfers are paused: wait for the resume (or re-check now and then) instead of failing the run. */
  async function waitWhilePaused(): Promise<void> {
    note('switch', 'transfers paused: waiting for resume');
    explain('waiting_for_resume');
    resumed = false;
    await condition(() => resumed, policy.humanRecheckMs);
    resumed = false;
  }

  // Runs started before this change replay their remote activities; new runs take the cheap path,
  // reading the policy and the row in one step.
  const cheap = patched('payout-local-db-steps');
  const payouts = cheap ? localDb : remoteDb;
  let firstRead: PayoutView | null | undefined;
  let policy: PayoutPolicy;
  if (cheap) ({ policy, payout: firstRead } = await localDb.startPayoutRun(orderId));
  else policy = await remoteDb.readPayoutPolicy();
  const { sendDirectTransfer } = proxyActivities<PayoutActivities>(moneyMovingCall(policy));

  /** Sends the claimed transfer once; a failed activity (timeout, dead worker) is an unknown outcome. */
  async function transfer(claimed: PayoutView): Promise<PayoutView> {
    const req: TransferRequest = {
      payoutId: claimed.id, orderId, linkedAccountId: claimed.linkedAccountId, amountPaise: claimed.amountPaise,
      idempotencyKey: claimed.idempotencyKey, attemptNo: claimed.attempts,
    };
    let sent: TransferSendOutcome;
    try {
      sent = await sendDirectTransfer(req);
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      sent = { type: 'unknown', reason: 'no_response', httpStatus: null, detail: `createTransfer activity failed: ${err.cause?.message ?? err.message}` };
    }
    if (sent.type === 'not_sent') {
      // The activity recorded why and moved the row (released to `pending`, or to `review`).
      note('transfer', `not sent: ${sent.reason}`);
      const now = await payouts.readPayout(orderId);
      if (sent.reason === 'transfers_paused') {
        publish(now);
        await waitWhilePaused();
      }
      return now!;
    }
    const outcome: MoneyOutcome<RzpTransfer> = sent;
    note('transfer', outcome.type === 'accepted' ? `accepted ${outcome.entity.id}` : outcome.type === 'rejected' ? `rejected ${outcome.error.code}` : `unknown ${outcome.reason}`);
    return (await payouts.recordTransferOutcome(req, outcome)).payout;
  }

  /** A `processing` row with no answer: ask the provider's ledger, never release without asking. */
  async function resolveUnknownTransfer(current: PayoutView): Promise<PayoutView> {
    explain('resolving');
    for (;;) {
      const found = await askProviderLedger(current.id);
      note('resolve', found.resolution);
      // Leave once the row is no longer `processing` (e.g. a retried activity whose first try recorded it).
      if (found.resolution !== 'ask_again' || found.payout.status !== 'processing') return found.payout;
      if (workflowInfo().continueAsNewSuggested) await continueAsNew<typeof payoutWorkflow>(input);
      await sleep(policy.resolverRetryMs);
    }
  }

  /** Accepted is not settled: wait for the webhook's signal, or poll the transfer on a durable timer. */
  async function awaitSettlement(current: PayoutView): Promise<PayoutView> {
    for (;;) {
      await condition(() => settlementEvidence, policy.settlementPollMs);
      settlementEvidence = false;
      // A provider fetch: a remote activity (a slow gateway must not stretch a workflow task).
      const view = await remoteDb.checkSettlement(current.id);
      if (view.status !== 'accepted') return view;
      if (workflowInfo().continueAsNewSuggested) await continueAsNew<typeof payoutWorkflow>(input);
    }
  }

  /** Parked or review: only ops can move it. Re-read now and then in case a signal was lost. */
  async function awaitHumanDecision(before: PayoutView): Promise<PayoutView | null> {
    await condition(() => opsDecision, policy.humanRecheckMs);
    opsDecision = false;
    const after = await payouts.readPayout(orderId);
    const heard = signalled as { action: string; actor: string } | null;
    signalled = null;
    if (heard && after?.status === before.status) note('ops', `ignored ${heard.action} by ${heard.actor}: no recorded decision (use the ops API)`);
    return after;
  }

  async function waitForNextAttempt(current: PayoutView | null): Promise<void> {
    const due = current?.nextAttemptAt ? Date.parse(current.nextAttemptAt) - Date.now() : 0;
    if (due > 0) {
      note('backoff', `${due} ms`);
      explain('backoff');
      await sleep(due);
    }
  }

  publish(firstRead !== undefined ? firstRead : await payouts.readPayout(orderId));
  for (;;) {
    if (workflowInfo().continueAsNewSuggested) await continueAsNew<typeof payoutWorkflow>(input);
    // Read through a cast: TypeScript cannot see that `publish` (a closure) assigns `payout`.
    const current = payout as PayoutView | null;
    switch (current?.status ?? 'pending') {
      case 'pending':
      case 'failed': {
        await waitForNextAttempt(current);
        const claim = await payouts.claimPayout(orderId);
        note('claim', claim.kind);
        if (claim.kind === 'no_transfer') {
          publish(claim.payout);
          // Never complete over a row still in flight (e.g. `processing` when the route changed): follow it.
          if (claim.payout && !SETTLED_OR_OPEN_FOR_CLAIM.has(claim.payout.status)) break;
          return { kind: 'no_transfer', orderId, reason: claim.reason };
        }
        if (claim.kind === 'paused') {
          // Runs started before this change failed here (the sweep started a new run after resume);
          // a routine pause no longer shows as failed runs: the run waits and the resume wakes it.
          if (!patched('wait-while-transfers-paused')) {
            throw ApplicationFailure.create({ type: TRANSFERS_PAUSED, message: 'direct transfers are paused; the payout stays pending for the sweep', nonRetryable: true });
          }
          publish(claim.payout);
          await waitWhilePaused();
          break;
        }
        if (claim.kind === 'lost') {
          // Never complete over a non-terminal row: follow what the row is now. A row still waiting for
          // a claim it cannot get fails the run, so the sweep may start a new one (as when paused).
          const now = await payouts.readPayout(orderId);
          if (now?.status === 'pending' || now?.status === 'failed') {
            throw ApplicationFailure.create({ type: LOST_CLAIM, message: `claim lost with the payout ${now.status}; left for the sweep`, nonRetryable: true });
          }
          publish(now);
          if (!now || TERMINAL.has(now.status)) return { kind: 'lost_claim', orderId, statusSeen: claim.statusSeen };
          break;
        }
        publish(claim.payout);
        publish(await transfer(claim.payout));
        break;
      }
      case 'processing':
        publish(await resolveUnknownTransfer(current!));
        break;
      case 'accepted':
        publish(await awaitSettlement(current!));
        break;
      case 'parked':
      case 'review':
        publish(await awaitHumanDecision(current!));
        break;
      case 'settled':
      case 'cancelled':
      case 'rerouted':
      case 'offline':
        return { kind: 'finished', orderId, payoutId: current!.id, status: current!.status, attempts: current!.attempts };
    }
  }
}
